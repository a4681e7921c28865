"""``ragmeter judge serve --fake``: the offline judge a CI job runs its smoke tests against
(``ragmeter eval`` and ``ragmeter generate`` in subprocesses, as a CI script would), and the
stderr line naming the default judge and embeddings a run falls back to."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "examples" / "demo.jsonl"
METRICS = (
    "faithfulness,answer_relevancy,context_precision,context_recall,answer_correctness,"
    "context_relevance,context_utilization,context_entity_recall,hallucination,abstention,"
    "factual_correctness,semantic_similarity"
)


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without any judge or embeddings configuration."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("RAGMETER_JUDGE_", "RAGMETER_EMBEDDINGS_", "OPENAI_"))
        and k not in ("RAGMETER_LOCAL_MODEL",)
    }
    src = str(ROOT / "src")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return {**env, "COLUMNS": "200", **extra}


def ragmeter(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


class Served:
    def __init__(self, process: subprocess.Popen[str], lines: list[str]) -> None:
        self.process = process
        self.lines = lines
        self.env = dict(line.removeprefix("export ").split("=", 1) for line in lines[1:])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    process = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "judge", "serve", "--fake", "--port", "0",
         "--env-file", str(tmp_path / "github_env")],
        env=clean_env(), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        lines = [process.stdout.readline().rstrip("\n") for _ in range(7)]
        assert lines[0].startswith("ragmeter fake judge on http://127.0.0.1:"), lines
        yield Served(process, lines)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def results(run_dir: Path) -> list[dict]:
    text = (run_dir / "results.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_eval_with_the_fake_judge_computes_every_result_with_plausible_scores(served, tmp_path):
    names = {line.split("=")[0] for line in served.lines[1:]}
    assert names == {
        "export RAGMETER_JUDGE_BASE_URL", "export RAGMETER_JUDGE_MODEL",
        "export RAGMETER_JUDGE_API_KEY", "export RAGMETER_EMBEDDINGS_BASE_URL",
        "export RAGMETER_EMBEDDINGS_MODEL", "export RAGMETER_EMBEDDINGS_API_KEY",
    }  # fmt: skip
    # --env-file: the same variables, as NAME=value lines ($GITHUB_ENV)
    written = (tmp_path / "github_env").read_text(encoding="utf-8").splitlines()
    assert dict(line.split("=", 1) for line in written) == served.env

    done = ragmeter("eval", str(DEMO), "--metrics", METRICS, "-o", str(tmp_path / "run"),
                    "--cache", str(tmp_path / "cache.db"), "--no-store", "-q",
                    env=clean_env(**served.env), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    n_metrics = len(METRICS.split(","))
    assert f"all {12 * n_metrics} results computed" in done.stdout
    # the configured judge and embeddings: no notice of defaults
    assert not [line for line in done.stderr.splitlines() if line.startswith("using ")]
    rows = results(tmp_path / "run")
    statuses = {m["status"] for row in rows for m in row["metrics"].values()}
    assert statuses <= {"ok", "not_applicable"}
    scored = sum(m["status"] == "ok" for row in rows for m in row["metrics"].values())
    assert scored >= 12 * n_metrics - 6

    def score(case: str, metric: str) -> list[float]:
        return [r["metrics"][metric]["score"] for r in rows
                if r["sample"]["metadata"]["case"] == case]  # fmt: skip

    # grounded answers are faithful, hallucinated and off-topic ones are not
    assert min(score("grounded", "faithfulness")) == 1.0
    assert max(score("hallucinated", "faithfulness") + score("off_topic", "faithfulness")) < 1
    assert max(score("off_topic", "answer_relevancy")) < min(score("grounded", "answer_relevancy"))
    assert score("missed_retrieval", "context_recall") == [0.0, 0.0]
    assert min(score("grounded", "answer_correctness")) > max(
        score("off_topic", "answer_correctness")
    )


def test_generate_with_the_fake_judge_writes_questions(served, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "phones.md").write_text(
        "# Orion\n\nOrion X2 was released by Vega Labs in March 2021.\n\n"
        "## Price\n\nOrion X2 costs 399 dollars at launch.\n",
        encoding="utf-8",
    )
    (docs / "company.md").write_text(
        "# Vega Labs\n\nVega Labs is based in Oslo.\n\n## Warranty\n\nVega Labs gives two "
        "years of warranty on every phone.\n",
        encoding="utf-8",
    )
    out = tmp_path / "testset.jsonl"
    done = ragmeter("generate", str(docs), "-n", "3", "-o", str(out), "--cache",
                    str(tmp_path / "cache.db"), "-q", env=clean_env(**served.env),
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [line for line in done.stderr.splitlines() if line.startswith("using ")]
    questions = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(questions) == 3
    assert all(q["user_input"].endswith("?") and q["reference"] for q in questions)


def test_judge_check_passes_against_the_fake_judge(served, tmp_path):
    done = ragmeter("judge", "check", env=clean_env(**served.env), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: the judge answered 5 of 5 checks right" in done.stdout


def test_the_server_stops_on_sigterm_and_sigint(served, tmp_path):
    served.process.send_signal(signal.SIGTERM)
    started = time.monotonic()
    assert served.process.wait(timeout=10) == 0
    assert time.monotonic() - started < 10
    assert served.process.stderr is not None
    assert "stopped" in served.process.stderr.read()

    process = subprocess.Popen(
        [sys.executable, "-m", "ragmeter", "judge", "serve", "--fake", "--port", "0"],
        env=clean_env(), cwd=tmp_path, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline().startswith("ragmeter fake judge on")
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=10) == 0


def test_serve_without_fake_says_what_it_needs(tmp_path):
    done = ragmeter("judge", "serve", env=clean_env(), cwd=tmp_path)
    assert done.returncode == 2
    assert "--fake" in done.stderr


def test_a_port_in_use_is_a_usage_error(served, tmp_path):
    port = served.env["RAGMETER_JUDGE_BASE_URL"].rsplit(":", 1)[1].split("/")[0]
    done = ragmeter("judge", "serve", "--fake", "--port", port, env=clean_env(), cwd=tmp_path)
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr


def test_a_run_on_the_default_judge_or_embeddings_says_so_on_stderr(served, tmp_path):
    data = tmp_path / "one.jsonl"
    # no claim to check: the embedded judge is chosen but never asked (a fast test)
    data.write_text(
        json.dumps({"id": "a", "user_input": "How long is the warranty?",
                    "response": "I do not know.", "retrieved_contexts": []}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    common = ("--no-store", "--no-cache", "-q")
    judged = ragmeter("eval", str(data), "--metrics", "faithfulness", "-o",
                      str(tmp_path / "a"), *common, env=clean_env(), cwd=tmp_path)  # fmt: skip
    assert judged.returncode == 0, judged.stdout + judged.stderr
    notices = [line for line in judged.stderr.splitlines() if line.startswith("using ")]
    assert len(notices) == 1, judged.stderr
    assert "judge: embedded qwen2.5" in notices[0] and "RAGMETER_JUDGE_MODEL" in notices[0]
    assert "embeddings" not in notices[0]  # faithfulness uses none

    judge_only = {k: v for k, v in served.env.items() if k.startswith("RAGMETER_JUDGE_")}
    data.write_text(
        json.dumps({"id": "a", "user_input": "Q?", "response": "One year.",
                    "reference": "One year."}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    embedded = ragmeter("eval", str(data), "--metrics", "semantic_similarity", "-o",
                        str(tmp_path / "b"), *common, env=clean_env(**judge_only),
                        cwd=tmp_path)  # fmt: skip
    assert embedded.returncode == 0, embedded.stdout + embedded.stderr
    notices = [line for line in embedded.stderr.splitlines() if line.startswith("using ")]
    assert notices == [
        "using embeddings: local multilingual-e5-small (default: no RAGMETER_EMBEDDINGS_MODEL)"
    ]


def test_generate_on_the_local_embeddings_says_so_on_stderr(served, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Orion\n\nOrion X2 costs 399 dollars.\n", encoding="utf-8")
    judge_only = {k: v for k, v in served.env.items() if k.startswith("RAGMETER_JUDGE_")}
    done = ragmeter("generate", str(docs), "-n", "1", "-o", str(tmp_path / "t.jsonl"),
                    "--no-cache", "-q", env=clean_env(**judge_only), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    notices = [line for line in done.stderr.splitlines() if line.startswith("using ")]
    assert notices == [
        "using embeddings: local multilingual-e5-small (default: no RAGMETER_EMBEDDINGS_MODEL)"
    ]
