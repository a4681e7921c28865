"""Options that ``--help`` lists one by one and a command takes as one value: an option group.

A parameter annotated ``Annotated[T, OptionGroup(make, name=(OptionType, default), ...)]``
stands, for typer, for the options of the group, in its place; the command (decorated with
:func:`option_groups`) receives ``make`` called with their values, in order. So the
``--judge-*`` options, say, are declared once, not again in every command that takes them.
"""

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

_Command = TypeVar("_Command", bound=Callable[..., Any])


class OptionGroup:
    """The options of a group: each parameter name with its typer annotation and default,
    and ``make``, which makes the command's value of them (called with them in order)."""

    def __init__(self, make: Callable[..., Any], **options: tuple[Any, Any]) -> None:
        self.make = make
        self.options = options

    def parameters(self, kind: Any) -> list[inspect.Parameter]:
        return [
            inspect.Parameter(name, kind, annotation=annotation, default=default)
            for name, (annotation, default) in self.options.items()
        ]

    def value(self, values: dict[str, Any]) -> Any:
        """The group's value, made from (and taking out of) the options' ``values``."""
        return self.make(*(values.pop(name) for name in self.options))


def _group(parameter: inspect.Parameter) -> OptionGroup | None:
    metadata = getattr(parameter.annotation, "__metadata__", ())
    return next((m for m in metadata if isinstance(m, OptionGroup)), None)


def option_groups(command: _Command) -> _Command:
    """``command`` with each parameter annotated with an :class:`OptionGroup` shown to typer
    as the group's options; its default must be the value of the options' defaults.

    >>> from typing import Annotated
    >>> import typer
    >>> Pair = Annotated[tuple, OptionGroup(lambda a, b: (a, b), a=(Annotated[int,
    ...     typer.Option("--a")], 1), b=(Annotated[int, typer.Option("--b")], 2))]
    >>> @option_groups
    ... def command(pair: Pair = (1, 2), c: int = 0) -> tuple:
    ...     return pair, c
    >>> list(inspect.signature(command).parameters), command(a=3, b=4, c=5)
    (['a', 'b', 'c'], ((3, 4), 5))
    """
    signature = inspect.signature(command, eval_str=True)
    groups: dict[str, OptionGroup] = {}
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        group = _group(parameter)
        if group is None:
            parameters.append(parameter)
            continue
        groups[parameter.name] = group
        parameters += group.parameters(parameter.kind)
        if group.value({name: default for name, (_, default) in group.options.items()}) != (
            parameter.default
        ):
            raise TypeError(f"{command.__name__}: {parameter.name}'s default is not its options'")

    @functools.wraps(command)
    def run(**values: Any) -> Any:
        for name, group in groups.items():
            values[name] = group.value(values)
        return command(**values)

    run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return run  # type: ignore[return-value]
