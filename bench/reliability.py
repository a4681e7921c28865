"""Reliability figures (issue 16): how long a run can take against an endpoint that never
answers, and what a run does under each injected fault.

Every case runs the real CLI (``python -m ragmeter eval``) in a subprocess against the project's
:class:`~ragmeter.testing.FakeOpenAIServer` started in this process, with a judge config file
(``timeout_s``, ``max_retries``, ``max_retry_wait_s``; the key comes from ``api_key_env``).

* **Stalls**: an endpoint that accepts requests and never answers (``Fault.timeout`` of an hour on
  every request), one that trickles its answer a byte at a time over an hour
  (``Fault.trickle``), and one that answers 429 with ``Retry-After: inf``. Reported: the run's
  wall time, its exit code and results, and the bound the configured caps give
  (attempts x (timeout + the longest wait between attempts)).
* **Faults**: each fault kind on 30% of the requests (seeded), 20 samples of the standard
  suite. Reported: samples x metrics recorded (none may be lost), failed results, any score
  that is not a finite number (must be 0), the exit code, and the requests the run counted
  against those the endpoint received.
* **Breaker** (issue 37): 40 samples at the *default* settings (``timeout_s`` 60,
  ``max_retries`` 5, ``max_retry_wait_s`` 60, ``breaker_failures`` 10, ``breaker_silence_s``
  90) against an endpoint with a fault on every request: 429 with ``Retry-After: 3600``, a
  body trickled over an hour, no answer for an hour, HTTP 500, dropped connections.
  Reported: the time to stop, the exit code, the last line, the requests the endpoint
  received; then the endpoint answers again and ``--resume`` completes the run, compared
  with an uninterrupted run.

    .venv/bin/python bench/reliability.py                # about 6 minutes on 2 cores
    .venv/bin/python bench/reliability.py --write        # and write bench/RESULTS_reliability.md
    .venv/bin/python bench/reliability.py --part breaker --write   # its section only
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_calls_vs_ragas import SUITE, bow_embedding, make_dataset, ragmeter_reply

from ragmeter._services._http import MAX_BACKOFF_S
from ragmeter.testing import FakeOpenAIServer, Fault

HERE = Path(__file__).resolve().parent
KEY_ENV = "BENCH_RELIABILITY_KEY"


def _run_eval(
    tmp: Path,
    server: FakeOpenAIServer,
    n: int,
    settings: dict[str, Any],
    tag: str,
    resume: bool = False,
) -> dict[str, Any]:
    data = tmp / f"{tag}.jsonl"
    rows = make_dataset(n, 3, seed=11)
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    config = tmp / f"{tag}.json"
    config.write_text(
        json.dumps(
            {"model": "fake-judge", "base_url": server.base_url, "api_key_env": KEY_ENV, **settings}
        ),
        "utf-8",
    )
    out = tmp / f"{tag}-run"
    command = [sys.executable, "-m", "ragmeter", "eval", str(data), "-m", ",".join(SUITE)]
    command += ["--judge-config", str(config), "-o", str(out), "--no-cache", "-q", "--no-store"]
    if resume:
        command = [sys.executable, "-m", "ragmeter", "eval", "--resume", str(out), "-q"]
        command += ["--no-cache", "--no-store"]
    env = {
        **os.environ,
        KEY_ENV: "sk-bench",
        "RAGMETER_EMBEDDINGS_MODEL": "fake-embed",
        "RAGMETER_EMBEDDINGS_BASE_URL": server.base_url,
        "RAGMETER_EMBEDDINGS_API_KEY": "sk-bench",
    }
    before = len(server.requests)
    started = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
    wall = time.monotonic() - started
    received = len([r for r in server.requests[before:] if r.path.endswith("chat/completions")])
    summary: dict[str, Any] = {}
    results = out / "results.jsonl"
    recorded = failed = not_finite = 0
    if results.exists():
        for line in results.read_text("utf-8").splitlines():
            row = json.loads(line, parse_constant=lambda c: math.nan)
            for value in (row.get("metrics") or {}).values():
                recorded += 1
                status = value.get("status") if isinstance(value, dict) else None
                score = value.get("score") if isinstance(value, dict) else value
                failed += status == "failed"
                if status == "ok" and not (isinstance(score, int | float) and math.isfinite(score)):
                    not_finite += 1
    if (out / "summary.json").exists():
        summary = json.loads((out / "summary.json").read_text("utf-8"))
    usage = (summary.get("config") or {}).get("usage") or {}
    return {
        "wall_s": round(wall, 1),
        "exit": done.returncode,
        "recorded": recorded,
        "expected": n * len(SUITE),
        "failed": failed,
        "not_finite": not_finite,
        "chat_requests_received": received,
        "calls_counted": usage.get("calls"),
        "traceback": "Traceback" in done.stderr,
        "last_line": (done.stderr.strip().splitlines() or [""])[-1][:200],
        "scores": _scores(results),
    }


def _scores(results: Path) -> list[Any]:
    """Every sample's scores in results.jsonl, in order (to compare two runs)."""
    if not results.exists():
        return []
    rows = [json.loads(line) for line in results.read_text("utf-8").splitlines()]
    return [
        {name: (v.get("score") if isinstance(v, dict) else v) for name, v in row["metrics"].items()}
        for row in rows
    ]


def _bound(settings: dict[str, Any]) -> float:
    """The longest one judge call can take under ``settings``: every attempt waits its whole
    timeout, every wait between attempts is the longest allowed."""
    attempts = settings["max_retries"] + 1
    wait = max(MAX_BACKOFF_S, settings.get("max_retry_wait_s", 60.0))
    return attempts * settings["timeout_s"] + settings["max_retries"] * wait


def stalls(tmp: Path) -> list[dict[str, Any]]:
    settings = {"timeout_s": 5.0, "max_retries": 2, "max_retry_wait_s": 2.0}
    cases = [
        ("never answers (each request held 1 h)", Fault.timeout(delay_s=3600)),
        ("trickles its answer over 1 h", Fault.trickle(delay_s=3600)),
        ("429 with Retry-After: inf", Fault.rate_limit(retry_after_header="inf")),
    ]
    rows = []
    for name, fault in cases:
        with FakeOpenAIServer(responder=ragmeter_reply, embedder=bow_embedding) as server:
            server.fault_rate(fault, 1.0, seed=1)
            row = _run_eval(tmp, server, 3, settings, f"stall{len(rows)}")
            server.fault_rate(None)
        row.update(case=name, settings=settings, bound_per_call_s=_bound(settings))
        rows.append(row)
        print(f"{name}: {row}", flush=True)
    return rows


def faults(tmp: Path) -> list[dict[str, Any]]:
    settings = {"timeout_s": 2.0, "max_retries": 3, "max_retry_wait_s": 2.0}
    kinds = [
        ("rate_limit", Fault.rate_limit(retry_after_s=0.2)),
        ("http_error 500", Fault.http_error(500)),
        ("timeout", Fault.timeout(delay_s=10)),
        ("trickle", Fault.trickle(delay_s=10)),
        ("malformed_json", Fault.malformed_json()),
        ("truncated", Fault.truncated()),
        ("connection_drop", Fault.connection_drop()),
    ]
    rows = []
    for name, fault in kinds:
        with FakeOpenAIServer(responder=ragmeter_reply, embedder=bow_embedding) as server:
            server.fault_rate(fault, 0.3, seed=7)
            row = _run_eval(tmp, server, 20, settings, f"fault{len(rows)}")
            server.fault_rate(None)
        row.update(case=f"{name} on 30% of requests", settings=settings)
        rows.append(row)
        print(f"{name}: {row}", flush=True)
    return rows


#: The default settings: the breaker part sets nothing (the judge's defaults hold).
DEFAULTS: dict[str, Any] = {}


def breaker(tmp: Path) -> dict[str, Any]:
    """Time to stop for each endpoint fault at the default settings, and the resumed run."""
    n = 40
    with FakeOpenAIServer(responder=ragmeter_reply, embedder=bow_embedding) as server:
        baseline = _run_eval(tmp, server, n, DEFAULTS, "breaker-baseline")
    cases = [
        ("429 with Retry-After: 3600", Fault.rate_limit(retry_after_header="3600")),
        ("trickles its answer over 1 h", Fault.trickle(delay_s=3600)),
        ("never answers (each request held 1 h)", Fault.timeout(delay_s=3600)),
        ("HTTP 500 on every request", Fault.http_error(500)),
        ("drops every connection", Fault.connection_drop()),
    ]
    rows = []
    for name, fault in cases:
        tag = f"breaker{len(rows)}"
        with FakeOpenAIServer(responder=ragmeter_reply, embedder=bow_embedding) as server:
            server.fault_rate(fault, 1.0, seed=1)
            row = _run_eval(tmp, server, n, DEFAULTS, tag)
            server.fault_rate(None)
            resumed = _run_eval(tmp, server, n, DEFAULTS, tag, resume=True)
        row.update(
            case=name,
            resumed_exit=resumed["exit"],
            resumed_identical=resumed["scores"] == baseline["scores"],
        )
        rows.append(row)
        print(f"{name}: {_without_scores(row)}", flush=True)
    return {"samples": n, "rows": rows}


def _without_scores(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "scores"}


BREAKER_HEADING = "## The run-level breaker: a run that cannot be answered stops (issue 37)"


def render_breaker(data: dict[str, Any]) -> str:
    lines = [
        BREAKER_HEADING,
        "",
        f"{data['samples']} samples x 4 metrics at the default settings (`timeout_s` 60, "
        "`max_retries` 5, `max_retry_wait_s` 60, `breaker_failures` 10, `breaker_silence_s` "
        "90, `--concurrency` 64, the judge's `max_concurrency` 16), a fault on every request. "
        "Then the endpoint answers again and `ragmeter eval --resume` completes the run; "
        "'identical' compares its scores with an uninterrupted run's.",
        "",
        "| endpoint | time to stop | exit | chat requests received | last line | "
        "resumed: exit, identical | traceback |",
        "|---|---:|---:|---:|---|---|---|",
    ]
    for row in data["rows"]:
        lines.append(
            f"| {row['case']} | {row['wall_s']} s | {row['exit']} | "
            f"{row['chat_requests_received']} | `{row['last_line']}` | "
            f"{row['resumed_exit']}, {'yes' if row['resumed_identical'] else 'no'} | "
            f"{'yes' if row['traceback'] else 'no'} |"
        )
    lines += [
        "",
        "Before issue 37 one call against the first two endpoints waited 5 retries x 60 s "
        "(303-373 s measured) before it failed, and a 40-sample run took as long per wave "
        "of samples.",
        "",
    ]
    return "\n".join(lines)


def with_breaker_section(text: str, section: str) -> str:
    """``text`` (RESULTS_reliability.md) with its breaker section replaced by ``section``."""
    kept = text.split(BREAKER_HEADING)[0].rstrip("\n")
    return f"{kept}\n\n{section}"


def render(data: dict[str, Any]) -> str:
    lines = [
        "# Reliability: stalls and faults (issue 16)",
        "",
        f"Run {data['date']} on {data['machine']} (load average before: {data['load']}).",
        "Command: `.venv/bin/python bench/reliability.py --write`. Every case is the real CLI",
        "(`ragmeter eval`, standard suite, `--no-cache`) in a subprocess against the project's",
        "fake OpenAI-compatible server. The tests in docs/reliability.md check the same",
        "behaviours; this file gives the measured figures.",
        "",
        "## An endpoint that stalls: every run ends, with the configured caps",
        "",
        "3 samples, settings `timeout_s` 5, `max_retries` 2, `max_retry_wait_s` 2.",
        "",
        "| endpoint | wall time | bound per call | exit | results recorded | failed | traceback |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for row in data["stalls"]:
        lines.append(
            f"| {row['case']} | {row['wall_s']} s | {row['bound_per_call_s']:.0f} s | "
            f"{row['exit']} | {row['recorded']}/{row['expected']} | {row['failed']} | "
            f"{'yes' if row['traceback'] else 'no'} |"
        )
    defaults = {"timeout_s": 60.0, "max_retries": 5, "max_retry_wait_s": 60.0}
    lines += [
        "",
        f"With the default settings (`timeout_s` 60, `max_retries` 5, `max_retry_wait_s` 60) "
        f"one call is bounded by {_bound(defaults):.0f} s; samples are judged concurrently, "
        "and steps of one sample that depend on each other add up.",
        "",
        "## Injected faults: nothing lost, nothing passed off as a score",
        "",
        "20 samples x 4 metrics, each fault kind on 30% of the requests (seeded), settings "
        "`timeout_s` 2, `max_retries` 3, `max_retry_wait_s` 2.",
        "",
        "| fault | wall time | exit | results recorded | failed | non-finite scores | "
        "chat requests received | calls counted | traceback |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in data["faults"]:
        lines.append(
            f"| {row['case']} | {row['wall_s']} s | {row['exit']} | "
            f"{row['recorded']}/{row['expected']} | {row['failed']} | {row['not_finite']} | "
            f"{row['chat_requests_received']} | {row['calls_counted']} | "
            f"{'yes' if row['traceback'] else 'no'} |"
        )
    lines += [
        "",
        "Exit 0: every result computed; exit 3: some results failed (the default "
        "`--max-failed-share 0`), each with its error in results.jsonl, to compute again with "
        "`--resume`. Calls counted: the run's `usage.calls` (judge requests, failed ones "
        "included; embedding requests are counted apart).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="write bench/RESULTS_reliability.md")
    parser.add_argument(
        "--part",
        choices=["all", "breaker"],
        default="all",
        help="breaker: only the run-level breaker (--write replaces its section alone)",
    )
    args = parser.parse_args()
    load = os.getloadavg()[0]
    results = HERE / "RESULTS_reliability.md"
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        section = render_breaker(breaker(tmp))
        if args.part == "breaker":
            print(section)
            if args.write:
                results.write_text(with_breaker_section(results.read_text("utf-8"), section))
            return
        data = {
            "date": dt.date.today().isoformat(),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "load": f"{load:.2f}",
            "stalls": stalls(tmp),
            "faults": faults(tmp),
        }
    text = with_breaker_section(render(data), section)
    print(text)
    if args.write:
        results.write_text(text, "utf-8")


if __name__ == "__main__":
    main()
