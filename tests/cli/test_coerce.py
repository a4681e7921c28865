"""The command line reads plain option values without pydantic, exactly as typer's own
coercion reads them: the same values, and typer's errors for the values it refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
import typer.core
from typer._coercion import build_runtime_param  # typer's own
from typer.testing import CliRunner

from ragmeter.cli import app

#: What typer builds a parameter's coercion with once ragmeter.cli is imported.
light_runtime_param = typer.core.build_runtime_param  # type: ignore[attr-defined]

#: Values to read, by the parameter's type: plain ones, and ones typer refuses or reads
#: its own way (they go to its coercion).
VALUES: dict[Any, list[Any]] = {
    str: ["abc", "", "ünï", "--x"],
    bool: [True, False],
    int: [5, 0, "5", "-3", "+7", "0", "10000", "x", "5.0", " 5", "1_000", "-1", "201"],
    float: [0.5, 1, "0.5", "-1e-3", ".5", "3", "1.", "x", "nan", "inf", " 1", "2", "-0.1"],
    Path: ["a/b.jsonl", ".", "", "-", Path("c")],
    list[str]: [("a", "b"), ["x"], ()],
    list[Path]: [("a.jsonl", "b.csv"), ()],
}


#: The click command tree of ``ragmeter``, built once (building it takes about 50 ms).
COMMAND = typer.main.get_command(app)


def _parameters() -> list[tuple[str, Any]]:
    found = []

    def walk(command: Any, path: str) -> None:
        for param in command.params:
            if getattr(param, "type_descriptor", None) is not None:
                found.append((f"{path} {param.name}".strip(), param))
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(COMMAND, "")
    return found


PARAMETERS = _parameters()


def _read(runtime: Any, value: Any, param: Any) -> tuple[str, Any]:
    ctx = typer.Context(COMMAND)
    try:
        return "value", runtime.coerce(value, param=param, ctx=ctx)
    except Exception as error:  # noqa: BLE001 - the errors are compared
        return type(error).__name__, str(error)


def test_every_plain_parameter_is_read_here():
    assert light_runtime_param is not build_runtime_param
    light = [p for _, p in PARAMETERS
             if type(light_runtime_param(p.type_descriptor)).__name__ == "_Light"]  # fmt: skip
    assert len(light) == len(PARAMETERS) > 100  # ragmeter's commands take plain values only


@pytest.mark.parametrize(("where", "param"), PARAMETERS, ids=[w for w, _ in PARAMETERS])
def test_a_value_reads_the_same_as_typer_reads_it(where, param):
    descriptor = param.type_descriptor
    values = VALUES.get(descriptor.annotation)
    assert values is not None, (where, descriptor.annotation)
    for value in [*values, None]:
        ours = _read(light_runtime_param(descriptor), value, param)
        theirs = _read(build_runtime_param(descriptor), value, param)
        assert repr(ours) == repr(theirs), (where, value)  # repr: nan equals nan
        if ours[0] == "value":
            assert type(ours[1]) is type(theirs[1]), (where, value)


def test_a_bad_value_gets_typers_message():
    result = CliRunner().invoke(app, ["runs", "list", "--limit", "0"])
    assert result.exit_code == 2 and "greater than or equal to 1" in result.output
