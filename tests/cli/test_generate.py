"""``ragmeter generate`` against the fake OpenAI-compatible server (judge and embeddings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from typer.testing import CliRunner

from ragmeter.cli import app
from ragmeter.testing import FakeOpenAIServer, generation_responder

runner = CliRunner()
KEY = "sk-generate-secret-123"
_respond = generation_responder()


def server_responder(body: dict[str, Any]) -> str:
    schema = body["response_format"]["json_schema"]
    shim = SimpleNamespace(__name__=schema["name"], model_fields=schema["schema"]["properties"])
    messages = [SimpleNamespace(content=m["content"]) for m in body["messages"]]
    return json.dumps(_respond(messages, shim), ensure_ascii=False)  # type: ignore[arg-type]


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "phones.md").write_text(
        "# Orion\n\nOrion X2 was released by Vega Labs in March 2021.\n\n"
        "## Price\n\nOrion X2 costs 399 dollars at launch.\n",
        encoding="utf-8",
    )
    (folder / "company.md").write_text(
        "# Vega Labs\n\nVega Labs is based in Oslo.\n\n## Warranty\n\nVega Labs gives two years.\n",
        encoding="utf-8",
    )
    return folder


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeOpenAIServer(responder=server_responder, api_key=KEY) as fake:
        monkeypatch.setenv("RAGMETER_JUDGE_API_KEY", KEY)
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_MODEL", "fake-embed")
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_BASE_URL", fake.base_url)
        monkeypatch.setenv("RAGMETER_EMBEDDINGS_API_KEY", KEY)
        yield fake


def generate(server: FakeOpenAIServer, tmp_path: Path, *args: str):
    return runner.invoke(
        app,
        [
            "generate",
            *args,
            "--judge-model",
            "m",
            "--judge-base-url",
            server.base_url,
            "--cache",
            str(tmp_path / "cache.db"),
            "-q",
        ],
        env={"COLUMNS": "200"},
    )


def test_generate_writes_a_test_set_with_accounting_and_usage(tmp_path, docs, server):
    out = tmp_path / "testset.jsonl"
    result = generate(
        server, tmp_path, str(docs), "-n", "4", "--mix", "single=0.5,multi=0.5", "-o", str(out),
        "--chunk-size", "20", "--chunk-overlap", "0",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 4
    assert {r["synthesizer"] for r in rows} == {"single_hop", "multi_hop"}
    for row in rows:
        assert row["reference_context_ids"] and row["language"] == "en"
        assert set(row) >= {"user_input", "reference", "reference_contexts", "persona", "style"}
    assert "4 of 4 questions" in result.output
    assert "calls per question" in result.output
    work = tmp_path / "testset.work"
    assert (work / "graph.json").exists() and (work / "attempts.jsonl").exists()
    for path in [out, *work.iterdir(), tmp_path / "cache.db"]:
        assert KEY not in path.read_bytes().decode("utf-8", "replace")
    assert KEY not in result.output


def test_resume_of_a_finished_generation_asks_nothing_and_an_existing_folder_needs_it(
    tmp_path, docs, server
):
    out = tmp_path / "t.jsonl"
    args = [str(docs), "-n", "2", "-o", str(out), "--chunk-size", "20", "--no-cache"]
    done = generate(server, tmp_path, *args)
    assert done.exit_code == 0, done.output
    first = out.read_text(encoding="utf-8")
    refused = generate(server, tmp_path, *args)
    assert refused.exit_code == 2
    assert "--resume" in refused.output
    before = len(server.requests)
    again = generate(server, tmp_path, *args, "--resume")
    assert again.exit_code == 0, again.output
    chats = [r for r in server.requests[before:] if r.path.endswith("/chat/completions")]
    assert chats == []
    assert out.read_text(encoding="utf-8") == first


def test_fewer_questions_than_asked_exits_1_and_says_why(tmp_path, docs, server):
    out = tmp_path / "t.jsonl"
    result = generate(server, tmp_path, str(docs), "-n", "40", "-o", str(out), "--no-cache")
    assert result.exit_code == 1, result.output
    assert "ran out of candidates" in result.output
    assert "of 40 questions" in result.output


def test_own_chunks_keep_their_ids_and_bad_rows_are_named(tmp_path, server):
    chunks = tmp_path / "chunks.jsonl"
    chunks.write_text(
        '{"id": "kb-1", "text": "Orion X2 was released by Vega Labs.", "document_id": "a"}\n'
        '{"id": "kb-2", "text": "Vega Labs is based in Oslo.", "document_id": "b"}\n',
        encoding="utf-8",
    )
    out = tmp_path / "t.jsonl"
    result = generate(server, tmp_path, str(chunks), "--chunks", "-n", "1", "--mix", "multi=1",
                      "-o", str(out), "--no-cache")  # fmt: skip
    assert result.exit_code == 0, result.output
    row = json.loads(out.read_text(encoding="utf-8"))
    assert row["reference_context_ids"] == ["kb-1", "kb-2"]

    chunks.write_text('{"id": "kb-1", "text": "x"}\n{"text": "no id"}\n', encoding="utf-8")
    bad = generate(server, tmp_path, str(chunks), "--chunks", "-o", str(tmp_path / "u.jsonl"))
    assert bad.exit_code == 2
    assert "row 2" in bad.output and "id" in bad.output


def test_unknown_mix_and_language_are_usage_errors(tmp_path, docs, server):
    result = generate(server, tmp_path, str(docs), "--mix", "triple=1", "-o", str(tmp_path / "a"))
    assert result.exit_code == 2 and "unknown synthesizer" in result.output
    result = generate(server, tmp_path, str(docs), "--language", "fr", "-o", str(tmp_path / "b"))
    assert result.exit_code == 2 and "--language must be en or zh" in result.output


def test_generate_options_become_generate_testset_arguments(tmp_path, docs, server, monkeypatch):
    from ragmeter.testset import KnowledgeGraph, LinkSettings

    given: list[dict[str, Any]] = []

    def recorded(sources: object, **arguments: Any) -> None:
        given.append(arguments)
        raise ValueError("recorded")  # stops the command there: exit 2

    monkeypatch.setattr("ragmeter.testset.generate_testset", recorded)

    def arguments(*options: str) -> dict[str, Any]:
        out = str(tmp_path / f"testset{len(given)}.jsonl")
        result = generate(server, tmp_path, str(docs), "-o", out, *options)
        assert result.exit_code == 2 and "recorded" in result.output, result.output
        return given[-1]

    chosen = arguments("--chunk-size", "200", "--persona", "Ana: a nurse")
    assert chosen["chunk_overlap"] == 25 and chosen["personas"] == ["Ana: a nurse"]
    assert arguments()["chunk_overlap"] == 50
    assert arguments("--chunk-overlap", "0")["chunk_overlap"] == 0
    assert arguments()["link"] is None
    graph = KnowledgeGraph({}, settings=LinkSettings(max_similar=2)).save(tmp_path / "g.json")
    linked = arguments("--graph", str(graph), "--similarity", "0.5")
    assert linked["link"] == LinkSettings(0.5, max_similar=2)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("where", ["document", "chunks", "graph"])
def test_a_named_pipe_given_to_generate_is_a_one_line_usage_error(tmp_path, docs, where):
    """A pipe as a document in the folder, as the chunk file or as the graph: exit 2 naming
    it, at once (run in a child process with a time bound: a pipe opened would block)."""
    pipe = tmp_path / {"document": "docs/pipe.md", "chunks": "c.jsonl", "graph": "g.json"}[where]
    os.mkfifo(pipe)
    given = {
        "document": [str(docs)],
        "chunks": [str(pipe), "--chunks"],
        "graph": [str(docs), "--graph", str(pipe)],
    }[where]
    out = str(tmp_path / "t.jsonl")
    judge = ["--judge-model", "m", "--judge-base-url", "http://127.0.0.1:9/v1", "--no-cache"]
    command = [sys.executable, "-m", "ragmeter", "generate", *given, "-o", out, *judge]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"generate with a named pipe as the {where} did not end within 60 s")
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert pipe.name in said and "named pipe" in said and "Traceback" not in said


def test_calls_a_kill_interrupts_are_counted_after_resume_and_none_is_paid_twice(tmp_path):
    """kill -9 while the judge answers nothing more: the resumed generation keeps every
    question, asks again only what was never answered (the rest comes from the cache), keeps
    its identity, and counts every request the endpoint received: those of the work the kill
    stopped are written as they go (in_flight_usage.json), as ``ragmeter eval`` does."""
    import signal
    import threading
    import time

    folder = tmp_path / "docs"
    folder.mkdir()
    for i in range(4):
        (folder / f"d{i}.md").write_text(
            f"# Orion {i}\n\nOrion X{i} was released by Vega Labs in March 202{i}.\n\n"
            f"## Price\n\nOrion X{i} costs {399 + i} dollars at launch.\n",
            encoding="utf-8",
        )
    release, lock, answered = threading.Event(), threading.Lock(), [0]

    def answers_11_then_hangs(body: dict[str, Any]) -> str:
        with lock:
            answered[0] += 1
            hang = answered[0] > 11
        if hang:
            release.wait(timeout=60)
        return server_responder(body)

    work = tmp_path / "t.work"

    def in_flight_calls() -> int:
        try:
            flying = json.loads((work / "in_flight_usage.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return 0
        return sum(used.get("calls", 0) for used in flying.values())

    def written_at() -> tuple[int, int] | None:
        try:
            stat = (work / "in_flight_usage.json").stat()
        except OSError:
            return None
        return stat.st_ino, stat.st_mtime_ns

    with FakeOpenAIServer(responder=answers_11_then_hangs, api_key=KEY) as fake:
        env = {**os.environ, "RAGMETER_JUDGE_API_KEY": KEY, "COLUMNS": "200",
               "RAGMETER_EMBEDDINGS_MODEL": "fake-embed", "RAGMETER_EMBEDDINGS_API_KEY": KEY,
               "RAGMETER_EMBEDDINGS_BASE_URL": fake.base_url}  # fmt: skip
        command = [sys.executable, "-m", "ragmeter", "generate", str(folder), "-n", "6",
                   "-o", str(tmp_path / "t.jsonl"), "--judge-model", "m", "--judge-base-url",
                   fake.base_url, "--cache", str(tmp_path / "cache.db"), "-q"]  # fmt: skip
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)  # fmt: skip
        # Wait until requests hang and a write of the usage as it grows, made after the last
        # request arrived, counts them.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            arrived, written = len(fake.requests), written_at()
            while time.monotonic() < deadline and written_at() == written:
                time.sleep(0.05)
            settled = fake.in_flight and len(fake.requests) == arrived
            if settled and in_flight_calls() >= fake.in_flight:
                break
        hung = fake.in_flight
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert hung > 0, process.stderr.read().decode() if process.stderr else ""
        identity = (work / "identity.json").read_text(encoding="utf-8")
        release.set()
        resumed = subprocess.run([*command, "--resume"], env=env, capture_output=True,
                                 text=True, timeout=120)  # fmt: skip
        chats = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "kept all 6 questions" in resumed.stdout + resumed.stderr
    assert (work / "identity.json").read_text(encoding="utf-8") == identity
    asked = [json.dumps(r.body, sort_keys=True) for r in chats]
    assert len(asked) - len(set(asked)) == hung  # only what was never answered is asked again
    report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    counted = sum(phase["calls"] for phase in report["usage"].values())
    assert counted == len(chats)  # every request the endpoint received
    assert report["usage"]["interrupted"]["calls"] == hung
