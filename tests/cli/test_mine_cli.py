"""``ragmeter mine`` and ``ragmeter mine merge``: production samples -> labelling file ->
golden set -> gate, with embeddings from the fake OpenAI-compatible server (the vectors of
tests/mining/corpus.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.store import Store
from ragmeter.testing import FakeOpenAIServer
from tests.mining import corpus
from tests.mining.test_mine import run_of

runner = CliRunner()
KEY = "sk-mine-secret-123"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    def embed(text: str) -> list[float]:
        return corpus.VECTORS[text]

    with FakeOpenAIServer(embedder=embed, api_key=KEY) as fake:
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_MODEL", "fake-embed")
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_BASE_URL", fake.base_url)
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_API_KEY", KEY)
        monkeypatch.setenv("RAGMETER_CACHE", str(tmp_path / "cache.db"))
        monkeypatch.setenv("RAGMETER_STORE_URL", f"sqlite:///{tmp_path / 'runs.db'}")
        yield fake


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def test_mine_label_merge_and_gate_the_golden_set(tmp_path, server):
    samples = write_jsonl(tmp_path / "samples.jsonl", corpus.records(extra=True))
    run_of({"s-t3-q2": 0.1, "s-t1-q3": 0.2}).save(tmp_path / "run")
    golden = write_jsonl(
        tmp_path / "golden.jsonl",
        [{"id": "g0", "user_input": "t0 q0", "response": "answer", "reference": "answer"}],
    )
    out = tmp_path / "to_label.jsonl"
    mined = invoke(
        "mine", str(samples), "-n", "10", "-o", str(out), "--scores", str(tmp_path / "run"),
        "--golden", str(golden), "--clusters", "4", "--json", str(tmp_path / "counts.json"),
    )  # fmt: skip
    assert mined.exit_code == 0, mined.output
    # 22 samples: "T1  Q1?" repeats t1 q1; "t0 q0, please" and t0 q0 itself are the golden t0 q0
    assert "read 22 samples: 0 without a question, 1 near-duplicates removed" in mined.output
    assert "2 already in the golden set" in mined.output
    assert "picked 10: 5 by cluster, 3 worst-scored, 2 novel; 4 of 4 clusters" in mined.output
    counts = json.loads((tmp_path / "counts.json").read_text(encoding="utf-8"))
    assert counts["n_candidates"] == 19 and counts["picks"]["worst_scored"] == 3
    rows = read_jsonl(out)
    assert len(rows) == 10
    assert [r["id"] for r in rows[:2]] == ["s-t3-q2", "s-t1-q3"]  # worst first
    assert KEY not in out.read_text(encoding="utf-8") and KEY not in mined.output

    for row in rows[:4]:  # a labeller fills four references
        row["reference"] = row["response"]
    write_jsonl(out, rows)
    merged = invoke("mine", "merge", str(out), "--into", str(golden), "--labelled-by", "ana")
    assert merged.exit_code == 0, merged.output
    assert "4 added, 0 updated, 6 not labelled, left out; the golden set has 5 rows" in (
        merged.output
    )
    again = invoke("mine", "merge", str(out), "--into", str(golden))
    assert again.exit_code == 2 and "--update" in again.output

    gate = tmp_path / "gate.toml"
    gate.write_text('[[thresholds]]\nmetric = "exact_match"\nmin = 1.0\n', encoding="utf-8")
    evaluated = invoke(
        "eval", str(golden), "-m", "exact_match", "-o", str(tmp_path / "golden-run"),
        "--gate", str(gate), "--no-store", "-q",
    )  # fmt: skip
    assert evaluated.exit_code == 0, evaluated.output


def test_scores_from_stored_runs_and_a_csv_labelling_file(tmp_path, server):
    samples = write_jsonl(tmp_path / "samples.jsonl", corpus.records())
    Store().record(run_of({"s-t2-q3": 0.0}), name="window-1", tags=[], params={})
    run_of({"s-t1-q1": 0.1, "s-t2-q3": 0.95}).save(tmp_path / "window-2")
    out = tmp_path / "to_label.csv"
    mined = invoke(
        "mine", str(samples), "-n", "4", "-o", str(out), "--scores", "window-1",
        "--scores", str(tmp_path / "window-2"), "--worst-share", "0.25",
    )  # fmt: skip
    assert mined.exit_code == 0, mined.output
    assert "1 worst-scored" in mined.output
    # the later run's 0.95 replaces window-1's 0.0 for s-t2-q3: s-t1-q1 (0.1) is the worst
    assert "s-t1-q1" in out.read_text(encoding="utf-8").splitlines()[1]
    assert out.read_text(encoding="utf-8").splitlines()[0] == (
        "id,user_input,response,retrieved_contexts,retrieved_context_ids,reference,"
        "reference_context_ids,label,reason,metadata"
    )
    explicit = invoke("mine", "pick", str(samples), "-n", "4", "-o", str(tmp_path / "b.jsonl"))
    assert explicit.exit_code == 0, explicit.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "to_label.txt"], "ending in .jsonl"),
        (["--scores", "no-such-run"], "no run 'no-such-run'"),
        (["--worst-share", "2"], "worst_share must be between 0 and 1"),
        (["--keep", "oldest"], "--keep must be"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path, server, args, message):
    samples = write_jsonl(tmp_path / "samples.jsonl", corpus.records())
    result = invoke("mine", str(samples), "-o", str(tmp_path / "out.jsonl"), *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_an_existing_labelling_file_is_kept_unless_forced(tmp_path, server):
    samples = write_jsonl(tmp_path / "samples.jsonl", corpus.records())
    out = tmp_path / "to_label.jsonl"
    out.write_text('{"id": "s-t0-q0", "reference": "hours of work"}\n', encoding="utf-8")
    refused = invoke("mine", str(samples), "-n", "2", "-o", str(out))
    assert refused.exit_code == 2 and "--force" in refused.output
    assert "hours of work" in out.read_text(encoding="utf-8")
    forced = invoke("mine", str(samples), "-n", "2", "-o", str(out), "--force")
    assert forced.exit_code == 0, forced.output
    assert len(read_jsonl(out)) == 2


def test_a_missing_samples_file_and_contradictory_merge_flags_exit_2(tmp_path, server):
    missing = invoke("mine", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "o.jsonl"))
    assert missing.exit_code == 2 and "none.jsonl" in missing.output
    samples = write_jsonl(tmp_path / "samples.jsonl", corpus.records())
    no_golden = invoke(
        "mine", str(samples), "-o", str(tmp_path / "o.jsonl"), "--golden", "nogold.jsonl"
    )
    assert no_golden.exit_code == 2 and "nogold.jsonl" in no_golden.output
    both = invoke(
        "mine", "merge", str(tmp_path / "x.jsonl"), "--into", "g.jsonl", "--update",
        "--skip-existing",
    )  # fmt: skip
    assert both.exit_code == 2 and "not both" in both.output


def _unwritable(tmp_path: Path, how: str) -> Path:
    """A labelling-file path that cannot be written, even by root."""
    if how == "parent is a file":
        (tmp_path / "plain").write_text("x", encoding="utf-8")
        return tmp_path / "plain" / "out.jsonl"
    if how == "in /proc":
        return Path("/proc/ragmeter-test/out.jsonl")
    out = tmp_path / "out.jsonl"  # the temporary file next to it is taken by a folder
    (tmp_path / ".out.jsonl.partial.jsonl").mkdir()
    return out


@pytest.mark.parametrize("how", ["parent is a file", "in /proc", "temp path taken"])
def test_an_unwritable_labelling_file_exits_4_naming_it(tmp_path, server, how):
    samples = write_jsonl(tmp_path / "samples.jsonl", corpus.records())
    out = _unwritable(tmp_path, how)
    result = invoke("mine", str(samples), "-n", "2", "-o", str(out))
    assert result.exit_code == 4, result.output
    assert str(out) in result.output and "partial" not in result.output
    assert "Traceback" not in result.output and "[Errno" not in result.output
    assert not out.exists()


@pytest.mark.parametrize("how", ["parent is a file", "in /proc"])
def test_an_unwritable_golden_set_exits_4_naming_it(tmp_path, server, how):
    labelled = write_jsonl(
        tmp_path / "to_label.jsonl",
        [{"id": "s1", "user_input": "q?", "response": "a", "reference": "a"}],
    )
    golden = _unwritable(tmp_path, how).with_name("golden.jsonl")
    result = invoke("mine", "merge", str(labelled), "--into", str(golden))
    assert result.exit_code == 4, result.output
    assert str(golden) in result.output and "partial" not in result.output
    assert "Traceback" not in result.output and "[Errno" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--worst-share", "0.8", "--novel-share", "0.5"], "add up to more than 1"),
        (["--worst-share", "nan"], "worst_share must be between 0 and 1"),
        (["--novel-share", "-0.1"], "novel_share must be between 0 and 1"),
        (["-o", "."], "is not a regular file"),
        (["-o", "/dev/null", "--force"], "is not a regular file"),
    ],
)
def test_shares_and_outputs_the_docs_refuse_exit_2(tmp_path, server, args, message):
    samples = write_jsonl(tmp_path / "samples.jsonl", corpus.records())
    result = invoke("mine", str(samples), "-n", "2", "-o", str(tmp_path / "o.jsonl"), *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
