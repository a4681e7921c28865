"""Every command that names a run (by id, id prefix or name) takes ``--store`` and looks the
run up there: a run recorded with ``eval --store URL`` is found by ``show ID --store URL``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from ragmeter.cli import app

runner = CliRunner()

#: The arguments and options that name a run.
RUN_ARGUMENTS = {"run", "runs", "baseline", "candidate"}
RUN_OPTIONS = {"--baseline", "--compare", "--scores", "--run"}


def _commands(command: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    found = {path: command}
    for name, sub in getattr(command, "commands", {}).items():
        found |= _commands(sub, (*path, name))
    return found


def _names_a_run(command: Any) -> bool:
    # typer's commands are made of its own copy of click's classes: told apart by kind
    return any(
        (p.param_type_name == "argument" and p.name in RUN_ARGUMENTS)
        or (p.param_type_name == "option" and RUN_OPTIONS & set(p.opts))
        for p in command.params
    )


COMMANDS = _commands(typer.main.get_command(app))
NAMING_A_RUN = sorted(path for path, command in COMMANDS.items() if _names_a_run(command))

GATE = '[[thresholds]]\nmetric = "recall@1"\nmin = 0.1\n'


def _samples(path: Path, n: int = 12) -> Path:
    rows = [
        {
            "id": f"q{i}",
            "user_input": f"question {i}?",
            "retrieved_context_ids": [f"d{i}", "x"] if i % 3 else ["x", f"d{i}"],
            "reference_context_ids": [f"d{i}"],
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _invocations(tmp: Path, run_id: str, out: str = "out") -> dict[tuple[str, ...], list[str]]:
    """Per command naming a run: its arguments, naming ``run_id`` wherever a run goes and
    writing under ``tmp/out``."""
    data, gate = tmp / "data.jsonl", tmp / "gate.toml"
    tmp = tmp / out
    return {
        ("show",): ["show", run_id],
        ("report",): ["report", run_id, "--compare", run_id, "-o", str(tmp / "report.html")],
        ("compare",): ["compare", run_id, run_id],
        ("gate",): ["gate", run_id, "--gate", str(gate), "--baseline", run_id],
        ("eval",): [
            "eval",
            str(data),
            "-m",
            "recall@1",
            "-q",
            "-o",
            str(tmp / "again"),
            "--gate",
            str(gate),
            "--baseline",
            run_id,
        ],
        ("monitor",): [
            "monitor",
            str(data),
            "-m",
            "recall@1",
            "--window",
            "6",
            "--once",
            "--state",
            str(tmp / "state"),
            "--baseline",
            run_id,
            "--no-store",
        ],
        ("mine", "pick"): [
            "mine",
            "pick",
            str(data),
            "-n",
            "2",
            "-o",
            str(tmp / "pick.jsonl"),
            "--scores",
            run_id,
        ],
        ("calibrate", "fit"): [
            "calibrate",
            "fit",
            run_id,
            "--labels",
            str(tmp / "none.jsonl"),
            "--name",
            "team",
        ],
        ("labels", "agreement"): ["labels", "agreement", run_id],
        ("labels", "queue"): ["labels", "queue", run_id, "-m", "mrr", "-o", str(tmp / "q.jsonl")],
        ("align",): ["align", "mrr", "--run", run_id],
        ("runs", "show"): ["runs", "show", run_id],
        ("runs", "compare"): ["runs", "compare", run_id, run_id, "--top", "0"],
        ("runs", "annotate"): ["runs", "annotate", run_id, "--tag", "seen"],
        ("runs", "export"): ["runs", "export", run_id, str(tmp / "exported")],
    }


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A run recorded in a store that is not the default one: its URL and id."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGMETER_STORE_URL", raising=False)
    _samples(tmp_path / "data.jsonl")
    (tmp_path / "gate.toml").write_text(GATE, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    made = runner.invoke(app, ["eval", "data.jsonl", "-m", "recall@1,mrr", "-q",
                               "-o", "first", "--store", url])  # fmt: skip
    assert made.exit_code == 0, made.output
    run_id = next(line for line in made.output.splitlines() if "recorded as run" in line)
    return url, run_id.split("recorded as run")[1].split()[0]


def test_the_commands_that_name_a_run_are_the_ones_tried_here(tmp_path: Path):
    assert sorted(_invocations(tmp_path, "x")) == NAMING_A_RUN


@pytest.mark.parametrize("path", [*NAMING_A_RUN, ("runs", "list"), ("serve",)], ids=" ".join)
def test_every_command_naming_a_run_takes_store(path: tuple[str, ...]):
    options = {o for p in COMMANDS[path].params for o in getattr(p, "opts", ())}
    assert "--store" in options, path


@pytest.mark.parametrize("path", NAMING_A_RUN, ids=" ".join)
def test_a_run_in_another_store_is_found_by_id_with_store(
    path: tuple[str, ...], recorded: tuple[str, str], tmp_path: Path
):
    url, run_id = recorded
    # Without --store the default store (none here) has no such run: exit 2, saying where.
    missing = runner.invoke(app, _invocations(tmp_path, run_id, "a")[path], env={"COLUMNS": "200"})
    assert missing.exit_code == 2, missing.output
    assert f"no run {run_id!r}" in missing.output
    args = [*_invocations(tmp_path, run_id, "b")[path], "--store", url]
    found = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert f"no run {run_id!r}" not in found.output
    # Picking needs an embedding model, monitoring reference-free (judged) metrics, agreement
    # and calibration people's labels: past the run, they stop on what this test does not give.
    if path not in (
        ("mine", "pick"),
        ("monitor",),
        ("labels", "agreement"),
        ("align",),
        ("calibrate", "fit"),
    ):
        assert found.exit_code == 0, found.output
