"""Every command's ``--help`` at 80 columns: whole sentences, whole option help, true defaults."""

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.runner import DEFAULT_CONCURRENCY

ROOT = Path(__file__).parents[2]
WIDTH = 80
runner = CliRunner()


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _commands(sub, (*path, name))
    return found


COMMANDS = _commands(typer.main.get_command(app))


def _help(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)})
    assert result.exit_code == 0, result.output
    return result.output


def _every_command() -> list[Any]:
    return [
        pytest.param(path, command, id=" ".join(path) or "ragmeter") for path, command in COMMANDS
    ]


def _option_blocks(text: str) -> list[str]:
    """The rows of each option or argument in the panels, one string per option."""
    blocks: list[str] = []
    for line in text.splitlines():
        if not line.startswith("│"):
            continue
        row = line.strip("│ ")
        if line[1:8].strip():  # a row that names an option or argument
            blocks.append(row)
        elif blocks:
            blocks[-1] += " " + row
    return blocks


@pytest.mark.parametrize(("path", "command"), _every_command())
def test_every_option_help_is_shown_whole(path, command):
    text = _help(path)
    assert "…" not in text
    blocks = _option_blocks(text)
    assert len(blocks) >= len([p for p in command.params if not p.hidden])
    for block in blocks:
        assert block.count("(") == block.count(")"), block
    shown = set(text.replace("│", " ").split())
    for param in command.params:
        for word in (param.help or "").split():  # not eaten as rich markup, e.g. [litellm]
            assert word in shown, f"{param.name}: {word!r} is not in --help"


@pytest.mark.parametrize(("path", "command"), _every_command())
def test_command_help_is_wrapped_to_the_terminal_not_to_the_source(path, command):
    text = _help(path).split("╭")[0]
    lines = [line.strip() for line in text.splitlines()]
    for line, after in itertools.pairwise(lines):
        if line and after:
            # A line ends early only when the next word does not fit (1 column of margin).
            assert len(line) + 1 + len(after.split()[0]) > WIDTH - 2, (line, after)


def test_eval_help_and_the_docs_state_the_real_concurrency_default():
    assert f"[default: {DEFAULT_CONCURRENCY}]" in _help(("eval",))
    stated = {
        "README.md": r"`--concurrency` \(samples judged at once, default (\d+)\)",
        "README.zh-CN.md": r"`--concurrency`（同时评审的样本数，默认 (\d+)）",
        "docs/judges.md": r"`--concurrency` \(default (\d+)\)",
    }
    for name, pattern in stated.items():
        found = re.findall(pattern, (ROOT / name).read_text("utf-8").replace("\n", " "))
        assert found and {int(n) for n in found} == {DEFAULT_CONCURRENCY}, name
