"""The table of judgments: one declaration per kind of judgment the steps can ask for.

A declaration says which template and task ask for it, the model of its answer, how the
answer is checked and read into a fact, which other judgments it needs first, and how a judge
that cannot batch verdicts answers it instead. The planner (:class:`StepRunner`) reads only
this table: judgments sharing a template are asked in one call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, create_model

from ragmeter.dataset import Sample
from ragmeter.judge import Judgment, Message
from ragmeter.prompts import Language, PromptTemplate, load_prompt

if TYPE_CHECKING:
    from ragmeter.steps._facts import Facts, Need

T = TypeVar("T")
#: The model of a judgment's answer (its ``output``).
OutputT = TypeVar("OutputT", bound=BaseModel)
#: ``read`` judgments run first, concurrently; ``verify`` judgments (verdicts on claims)
#: after every ``read`` one, alongside the work that needs no verdict (``while_verifying``).
Stage = Literal["read", "verify"]
DataValue = str | Sequence[str]


@dataclass(frozen=True)
class Request:
    """One judgment asked for one sample: the needs it serves and what is known so far."""

    #: What the judgment's failure is recorded under in ``facts.errors`` (usually its name).
    name: str
    sample: Sample
    needs: tuple[Need, ...]
    facts: Facts
    #: Whether the judge answers many verdicts in one call (``Judge.supports_batched_verdicts``).
    batched: bool

    @property
    def contexts(self) -> list[str]:
        return self.sample.retrieved_contexts or []


class Verdict(Protocol):
    """One yes/no question through the ``verdict`` template: (verdict, P(yes) or None)."""

    def __call__(
        self, task: str, inputs: dict[str, DataValue]
    ) -> Awaitable[tuple[bool, float | None]]: ...


class Generate(Protocol):
    """A judge call made by a judgment's own ``call`` (usage and versions are recorded)."""

    def __call__(
        self, messages: list[Message], schema: type[OutputT], *, prompt_version: str, scope: str
    ) -> Awaitable[Judgment[OutputT]]: ...


@dataclass(frozen=True, eq=False)
class JudgmentKind(Generic[OutputT, T]):
    """The declaration of one kind of judgment (see the module docstring): its answer is an
    ``OutputT``, its fact a ``T``.

    Most judgments are asked through a TOML template: ``template`` and ``task`` name the
    instruction, ``output`` the answer's model (its fields are the task's output keys, in the
    schema and in the template's examples), ``inputs`` the data blocks, ``read`` turns the
    answer (``judgment.output``, typed) into the fact.
    """

    #: The fact's name: what metrics ask for (``Need(name)``) and read (``facts.get(name)``).
    name: str
    #: The TOML template (``ragmeter/prompts/templates/TEMPLATE.toml``) and its task.
    template: str = ""
    task: str = ""
    #: The answer's model, a class written once: a call doing several tasks answers a
    #: subclass of all of theirs (:func:`schema_for`).
    output: type[OutputT] | None = None
    inputs: Callable[[Request], dict[str, DataValue]] | None = None
    read: Callable[[Judgment[OutputT], Request], T] | None = None
    #: Finds an incomplete answer (e.g. a context left unrated): the call is asked again
    #: once, then the judgment fails with a ``StepError``.
    check: Callable[[OutputT, Request], str | None] | None = None
    #: Whether the re-ask's answer is used although ``check`` still finds the problem (its
    #: ``read`` leaves the faulty items out) instead of failing the judgment.
    tolerate_check: bool = False
    #: Values for ``{placeholders}`` in the task's instruction.
    params: Callable[[Request], dict[str, Any]] | None = None
    #: Judgments whose facts this one reads: asked for with it and answered before it.
    depends_on: tuple[str, ...] = ()
    stage: Stage = "read"
    #: The name of the request serving ``need``, or ``None`` when this judgment does not
    #: serve it; default: ``name`` for ``Need(name)``. A kind making several calls names
    #: each (e.g. one per custom prompt).
    serves: Callable[[Need], str | None] | None = None
    #: The fact without asking, or ``None`` to ask (e.g. no contexts: nothing to rate).
    without_call: Callable[[Request], T | None] | None = None
    #: Whether to ask at all, decided when the judgments it depends on are known.
    applies: Callable[[Request], bool] | None = None
    #: For judges that cannot batch verdicts: the fact from one yes/no question per verdict.
    by_verdicts: Callable[[Verdict, Request], Awaitable[T]] | None = None
    #: Asks the judge itself instead of through ``template`` (e.g. custom prompts).
    call: Callable[[Generate, Request], Awaitable[T]] | None = None
    #: Stores the fact; default: ``facts.set(request.name, value)``.
    store: Callable[[Facts, Request, T], None] | None = None
    #: The template in a language; default: ``load_prompt(template, language)`` (the TOML
    #: file ``ragmeter/prompts/templates/TEMPLATE.toml``).
    prompt: Callable[[Language], PromptTemplate] | None = None

    def request_for(self, need: Need) -> str | None:
        """The name of the request serving ``need``; ``None``: this judgment does not."""
        if self.serves is not None:
            return self.serves(need)
        return self.name if need.judgment == self.name else None

    def __post_init__(self) -> None:
        templated = self.template and self.task and self.output and self.inputs and self.read
        if not templated and self.call is None and self.by_verdicts is None:
            raise ValueError(
                f"judgment {self.name!r}: give template, task, output, inputs and read "
                "(or call, or by_verdicts for a judgment asked only one verdict at a time)"
            )

    def load(self, language: Language) -> PromptTemplate:
        if self.prompt is not None:
            return self.prompt(language)
        return load_prompt(self.template, language)

    @property
    def keys(self) -> tuple[str, ...]:
        """The task's output keys: the fields of ``output``."""
        return tuple(self.output.model_fields) if self.output is not None else ()


#: Every judgment by name, in the order the planner asks for them.
JUDGMENTS: dict[str, JudgmentKind[Any, Any]] = {}


def register(kind: JudgmentKind[OutputT, T]) -> JudgmentKind[OutputT, T]:
    """Add ``kind`` to the table (replacing one of the same name) and return it."""
    JUDGMENTS[kind.name] = kind
    schema_for.cache_clear()
    return kind


def unregister(name: str) -> None:
    """Remove a judgment from the table (tests that add their own)."""
    JUDGMENTS.pop(name, None)
    schema_for.cache_clear()


def _declared() -> dict[str, JudgmentKind[Any, Any]]:
    """The table with the built-in judgments in it: they register when their module is
    imported, which the package's lazy ``__init__`` may not have done yet."""
    import ragmeter.steps._judgments  # noqa: F401

    return JUDGMENTS


def judgment(name: str) -> JudgmentKind[Any, Any]:
    try:
        return _declared()[name]
    except KeyError:
        raise KeyError(f"no judgment {name!r}; known: {sorted(JUDGMENTS)}") from None


def error_names(need: Need) -> list[str]:
    """What the facts a need reads are recorded under when they fail: the judgments it
    depends on, then its own."""
    kind = judgment(need.judgment)
    return [*kind.depends_on, kind.request_for(need) or kind.name]


def verifies(need: Need) -> bool:
    """Whether ``need`` waits for the ``verify`` stage (verdicts on claims): a metric with
    no such need can finish while the verification runs."""
    return judgment(need.judgment).stage == "verify"


@cache
def schema_for(template: str, tasks: tuple[str, ...]) -> type[BaseModel]:
    """The output model of ``template`` doing ``tasks`` (its title names both): a subclass of
    every task's ``output``, so each judgment reads its own typed answer from it."""
    name = "".join(part.title() for part in (template, *tasks) for part in part.split("_"))
    # pydantic puts the last base's fields first: the bases reversed keep the tasks' order.
    return create_model(name, __base__=tuple(_output(template, task) for task in tasks[::-1]))


def _output(template: str, task: str) -> type[BaseModel]:
    for kind in _declared().values():
        if kind.template == template and kind.task == task and kind.output is not None:
            return kind.output
    raise KeyError(f"no judgment asks task {task!r} of template {template!r}")
