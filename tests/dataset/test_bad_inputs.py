"""A generated corpus of bad inputs, each run through ``ragmeter eval``: every one gets a clear
answer (the row, the line or the file, and the fix), never a traceback, and ``--skip-invalid``
skips just the bad rows.

Each case is a file (or a path) and what must happen:

- ``ok``: the input is odd but valid (a BOM, UTF-16, CRLF, numbers as ids, a 10 MB field...):
  exit 0, every row scored, results.jsonl strict JSON;
- ``skip``: some rows are bad: exit 2 naming them; with ``--skip-invalid`` exit 0 and exactly
  the good rows scored;
- ``fail``: the file as a whole is unusable (a directory, a FIFO, an empty or broken file):
  exit 2 naming the file or the line, with or without ``--skip-invalid``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app

runner = CliRunner()

RETRIEVAL = {"retrieved_context_ids": ["d1", "d2", "d3"], "reference_context_ids": ["d1"]}


def good(sample_id: str = "good") -> dict[str, object]:
    return {"id": sample_id, **RETRIEVAL}


def line(record: object) -> str:
    return json.dumps(record, ensure_ascii=False)


GOOD_LINE = line(good())
CSV_HEADER = "id,retrieved_context_ids,reference_context_ids"
CSV_GOOD = 'good,"[""d1"",""d2""]","[""d1""]"'


@dataclass(frozen=True)
class Case:
    name: str
    write: Callable[[Path], Path]
    outcome: str  # "ok", "skip" or "fail"
    scored: int = 1  # rows scored when it runs (with --skip-invalid for "skip")
    metric: str = "precision@3"


def text_file(suffix: str, text: str, encoding: str = "utf-8") -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / f"data.{suffix}"
        path.write_bytes(text.encode(encoding))
        return path

    return write


def bytes_file(suffix: str, data: bytes) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / f"data.{suffix}"
        path.write_bytes(data)
        return path

    return write


def jsonl(*records: object) -> Callable[[Path], Path]:
    """A JSONL file: the good row, then each record (a str is written as is)."""
    lines = [GOOD_LINE, *(r if isinstance(r, str) else line(r) for r in records)]
    return text_file("jsonl", "\n".join(lines) + "\n")


def bad_field(**fields: object) -> Callable[[Path], Path]:
    return jsonl({**good("bad"), **fields})


def surrogate(fields: str) -> Callable[[Path], Path]:
    """A JSONL file whose second row is good but for ``fields`` (JSON text, so that its escapes
    stay as written; a field given again overrides the good one)."""
    return jsonl(line(good("bad"))[:-1] + ", " + fields + "}")


def directory(folder: Path) -> Path:
    path = folder / "data.jsonl"
    path.mkdir()
    return path


def fifo(folder: Path) -> Path:
    path = folder / "pipe.jsonl"
    os.mkfifo(path)
    return path


def device(folder: Path) -> Path:
    return Path(os.devnull)


def parquet_with_dates(folder: Path) -> Path:
    import pandas as pd

    path = folder / "data.parquet"
    pd.DataFrame(
        {
            "id": ["a", "b"],
            "retrieved_context_ids": [["d1", "d2"], ["d2"]],
            "reference_context_ids": [["d1"], ["d2"]],
            "when": pd.to_datetime(["2024-01-02", None]),
            "raw": [b"\xff", b"ok"],
        }
    ).to_parquet(path)
    return path


DEEP = "[" * 100_000 + "]" * 100_000
BIG = "x" * 10_000_000
LATIN1_LINE = line({**good("latin"), "user_input": "café"}).encode("latin-1")

CASES: list[Case] = [
    # -- encodings --
    Case("latin1-line", bytes_file("jsonl", GOOD_LINE.encode() + b"\n" + LATIN1_LINE), "skip"),
    Case(
        "latin1-csv-row",
        bytes_file("csv", f"{CSV_HEADER}\n{CSV_GOOD}\n".encode() + b'latin,"[""d\xe9""]",[]\n'),
        "skip",
    ),
    Case("latin1-json", bytes_file("json", b'[{"id": "caf\xe9"}]'), "fail"),
    Case("latin1-csv-header", bytes_file("csv", b"id,caf\xe9\na,b\n"), "fail"),
    Case("utf8-bom-jsonl", text_file("jsonl", "\ufeff" + GOOD_LINE + "\n"), "ok"),
    Case("utf8-bom-csv", text_file("csv", f"\ufeff{CSV_HEADER}\n{CSV_GOOD}\n"), "ok"),
    Case("utf16-bom-jsonl", text_file("jsonl", GOOD_LINE + "\n", "utf-16"), "ok"),
    Case(
        "utf16be-bom-csv", text_file("csv", f"\ufeff{CSV_HEADER}\n{CSV_GOOD}\n", "utf-16-be"), "ok"
    ),
    Case("utf16-no-bom-jsonl", text_file("jsonl", GOOD_LINE + "\n", "utf-16-le"), "ok"),
    Case("utf32-bom-json", text_file("json", f"[{GOOD_LINE}]", "utf-32"), "ok"),
    Case("crlf-jsonl", text_file("jsonl", GOOD_LINE + "\r\n" + line(good("b")) + "\r\n"), "ok", 2),
    Case("crlf-csv", text_file("csv", f"{CSV_HEADER}\r\n{CSV_GOOD}\r\n"), "ok"),
    Case("lone-cr-jsonl", text_file("jsonl", GOOD_LINE + "\r" + line(good("b")) + "\r"), "ok", 2),
    Case("nul-byte-jsonl", bytes_file("jsonl", GOOD_LINE.encode() + b"\n\x00{}\n"), "skip"),
    Case(
        "nul-in-string", bytes_file("jsonl", GOOD_LINE.encode() + b'\n{"id": "a\x00b"}\n'), "skip"
    ),
    # -- shapes --
    Case("deep-jsonl", jsonl(DEEP), "skip"),
    Case("deep-json", text_file("json", f"[{GOOD_LINE}, {DEEP}]"), "fail"),
    Case(
        "deep-metadata",
        jsonl(
            GOOD_LINE.replace("good", "deep")[:-1]
            + ', "metadata": '
            + '{"k": ' * 500
            + "1"
            + "}" * 501
        ),
        "skip",
    ),
    Case("deep-csv-cell", text_file("csv", f"{CSV_HEADER}\n{CSV_GOOD}\nb,{DEEP},[]\n"), "skip"),
    Case("directory", directory, "fail"),
    Case("fifo", fifo, "fail"),
    Case("device", device, "fail"),
    Case("csv-extra-cells", text_file("csv", f"{CSV_HEADER}\n{CSV_GOOD}\nb,d1,d2,d3,d4\n"), "skip"),
    Case("csv-fewer-cells", text_file("csv", f"{CSV_HEADER}\n{CSV_GOOD}\nb\n"), "skip"),
    Case(
        "csv-unclosed-quote",
        text_file("csv", f'{CSV_HEADER}\n{CSV_GOOD}\nb,"[""d1""],[]\n'),
        "skip",
    ),
    Case("csv-duplicate-header", text_file("csv", "id,id\na,b\n"), "fail"),
    Case("empty-jsonl", text_file("jsonl", ""), "fail"),
    Case("blank-lines-jsonl", text_file("jsonl", "\n \n\t\n"), "fail"),
    Case("empty-csv", text_file("csv", ""), "fail"),
    Case("header-only-csv", text_file("csv", CSV_HEADER + "\n"), "fail"),
    Case("empty-json", text_file("json", ""), "fail"),
    Case("json-not-array", text_file("json", '{"id": "a"}'), "fail"),
    Case("json-trailing-garbage", text_file("json", f"[{GOOD_LINE}] extra"), "fail"),
    Case("broken-parquet", text_file("parquet", GOOD_LINE), "fail"),
    Case("huge-line-invalid", jsonl("{" + BIG), "skip"),
    Case("10mb-field-jsonl", jsonl({**good("big"), "user_input": BIG}), "ok", 2),
    Case("10mb-cell-csv", text_file("csv", f"{CSV_HEADER},user_input\n{CSV_GOOD},{BIG}\n"), "ok"),
    Case("huge-integer", jsonl('{"id": ' + "9" * 5000 + "}"), "skip"),
    Case("line-is-array", jsonl([1, 2]), "skip"),
    Case("line-is-string", jsonl('"just text"'), "skip"),
    Case("invalid-json-line", jsonl("{broken"), "skip"),
    # -- wrong types for each field --
    Case("user-input-list", bad_field(user_input=["q"]), "skip"),
    Case("response-dict", bad_field(response={"text": "a"}), "skip"),
    Case("reference-number", bad_field(reference=3.5), "skip"),
    Case("contexts-dict", bad_field(retrieved_contexts={"a": "b"}), "skip"),
    Case("contexts-string", bad_field(retrieved_contexts="one chunk"), "skip"),
    Case("ids-string", bad_field(retrieved_context_ids="d1"), "skip"),
    Case("ids-nested-list", bad_field(retrieved_context_ids=[["d1"]]), "skip"),
    Case("ids-float", bad_field(reference_context_ids=[1.5]), "skip"),
    Case(
        "ids-numbers",
        jsonl({"id": 7, "retrieved_context_ids": [1, 2], "reference_context_ids": [1]}),
        "ok",
        2,
    ),
    Case("id-bool", bad_field(id=True), "skip"),
    Case("id-list", bad_field(id=["a"]), "skip"),
    Case("relevance-list", bad_field(relevance=[1, 2]), "skip"),
    Case("relevance-text-grade", bad_field(relevance={"d1": "high"}), "skip"),
    Case("relevance-negative", bad_field(relevance={"d1": -1}), "skip"),
    Case(
        "relevance-nan",
        jsonl('{"id": "n", "retrieved_context_ids": ["d1"], "relevance": {"d1": NaN}}'),
        "skip",
    ),
    Case("metadata-string", bad_field(metadata="tag"), "skip"),
    Case(
        "metadata-nan-infinity",
        jsonl(
            '{"id": "m", "retrieved_context_ids": ["d1"], '
            '"reference_context_ids": ["d1"], '
            '"metadata": {"a": NaN, "b": -Infinity}}'
        ),
        "ok",
        2,
    ),
    Case("null-everywhere", jsonl(dict.fromkeys([*good(), "user_input", "metadata"])), "skip"),
    Case("missing-required", bad_field(retrieved_context_ids=None), "skip"),
    Case("empty-object", jsonl({}), "skip"),
    Case(
        "empty-strings",
        jsonl(
            {
                "id": "",
                "user_input": "",
                "retrieved_context_ids": [""],
                "reference_context_ids": [""],
            }
        ),
        "ok",
        2,
    ),
    Case("duplicate-ids", jsonl(good(), good()), "skip"),
    Case("contexts-ids-mismatch", bad_field(retrieved_contexts=["only one"]), "skip"),
    Case("conflicting-columns", bad_field(question="q", user_input="other"), "skip"),
    Case("parquet-dates-bytes", parquet_with_dates, "ok", 2),
    # -- lone surrogates: a JSON escape of half a UTF-16 pair, which no UTF-8 file can hold --
    Case("surrogate-id", surrogate('"id": "bad\\ud800"'), "skip"),
    Case("surrogate-user-input", surrogate('"user_input": "q\\udfff"'), "skip"),
    Case("surrogate-metadata-key", surrogate('"metadata": {"t\\udcff": 1}'), "skip"),
    Case(
        "surrogate-history",
        surrogate('"history": [{"role": "user", "content": "x\\ud83d"}], "user_input": "q"'),
        "skip",
    ),
    Case(
        "surrogate-csv-cell",
        text_file("csv", f'{CSV_HEADER}\n{CSV_GOOD}\nbad,"[""d\\ud800""]","[""d1""]"\n'),
        "skip",
    ),
    Case(
        "grade-too-large-ndcg-exp",
        jsonl({"id": "huge", "retrieved_context_ids": ["d1"], "relevance": {"d1": 1100}}),
        "metric",
        1,
        "ndcg_exp@3",
    ),
]


def _names_a_place(output: str, path: Path) -> bool:
    return bool(re.search(r"\b(row|line) \d+", output)) or path.name in output


def _strict(text: str) -> dict:
    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _eval(path: Path, out: Path, case: Case, *extra: str) -> tuple[int, str]:
    args = ["eval", str(path), "-m", case.metric, "-o", str(out), "-q", "--no-store", *extra]
    if case.name == "fifo":  # in a process of its own: a regression would block on open()
        try:
            done = subprocess.run(
                [sys.executable, "-m", "ragmeter", *args],
                capture_output=True,
                text=True,
                timeout=60,
            )
        except subprocess.TimeoutExpired:
            return -1, f"blocked on opening {path} (no answer within 60 s)"
        return done.returncode, done.stdout + done.stderr
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return -1, f"{result.output}\nTraceback (uncaught {result.exception!r})"
    return result.exit_code, result.output


def _scored(out: Path) -> list[dict]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [_strict(text) for text in lines]


def _check(case: Case, folder: Path) -> list[str]:
    """What is wrong with how ``ragmeter eval`` answers ``case`` (nothing when all is right)."""
    folder.mkdir()
    path = case.write(folder)
    wrong: list[str] = []
    code, output = _eval(path, folder / "run", case)
    if "Traceback" in output:
        wrong.append(f"traceback: {output[-500:]}")
    if case.outcome in ("ok", "metric"):
        if case.outcome == "ok" and code != 0:
            wrong.append(f"exit {code}, expected 0: {output[-500:]}")
        if case.outcome == "metric" and code not in (0, 3):  # 3: some results failed
            wrong.append(f"exit {code}: the grade must fail its sample only: {output[-300:]}")
        if not wrong:
            records = _scored(folder / "run")
            if len(records) != case.scored + (case.outcome == "metric"):
                wrong.append(f"{len(records)} results, expected {case.scored}")
            if case.outcome == "metric":
                results = [r["metrics"][case.metric] for r in records]
                if [r["status"] for r in results] != ["ok", "failed"]:
                    wrong.append(f"results {results}, expected the bad sample failed alone")
                elif "too large" not in results[1].get("error", ""):
                    wrong.append(f"no reason given: {results[1]}")
        return wrong
    if code <= 0:  # -1: it raised or blocked
        wrong.append(f"exit {code} for a bad input: {output[-300:]}")
    if not _names_a_place(output, path):
        wrong.append(f"no row, line or file named: {output[-500:]}")
    code, output = _eval(path, folder / "skipped", case, "--skip-invalid")
    if "Traceback" in output:
        wrong.append(f"traceback with --skip-invalid: {output[-500:]}")
    if case.outcome == "fail" and code <= 0:
        wrong.append(f"exit {code} with --skip-invalid for an unusable file: {output[-300:]}")
    if case.outcome == "skip":
        if code != 0:
            wrong.append(f"exit {code} with --skip-invalid: {output[-500:]}")
        elif len(_scored(folder / "skipped")) != case.scored:
            wrong.append(f"--skip-invalid scored {len(_scored(folder / 'skipped'))} rows")
        elif not _names_a_place(output, path):
            wrong.append(f"--skip-invalid named no skipped row: {output[-500:]}")
    return wrong


@pytest.mark.slow
def test_every_bad_input_gets_a_clear_answer(tmp_path, monkeypatch):
    """72 bad inputs (encodings, shapes, special files, wrong types of every field, extreme
    grades): no traceback, a row / line / file named, --skip-invalid skips just the bad rows."""
    monkeypatch.chdir(tmp_path)
    assert len(CASES) == 72
    assert len({case.name for case in CASES}) == len(CASES)
    problems = {}
    for case in CASES:
        if case.name == "fifo" and not hasattr(os, "mkfifo"):
            continue
        try:
            wrong = _check(case, tmp_path / case.name)
        except (OSError, ValueError, KeyError) as error:  # e.g. results.jsonl not strict JSON
            wrong = [f"checking it raised {error!r}"[:300]]
        if wrong:
            problems[case.name] = wrong
    assert not problems, (
        f"{len(problems)} of {len(CASES)} bad inputs answered badly:\n"
        + "\n".join(f"- {name}: {'; '.join(w)}" for name, w in problems.items())
    )
