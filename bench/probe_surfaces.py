"""Throw generated hostile inputs at every surface of the ragmeter CLI.

Each case is one real subprocess (``python -m ragmeter ...``) in a temporary directory, with
``RAGMETER_CACHE``, ``RAGMETER_STORE_URL`` and ``RAGMETER_HOME`` inside it, a wall-clock
timeout and no stdin. A case is classified as:

- ``ok``: a documented exit code (0, 1, 2, 3, 4, 130) and no traceback;
- ``traceback``: stdout or stderr holds "Traceback (most recent call last)";
- ``hang``: the timeout passed (the process group is killed);
- ``bad-exit``: any other exit code (a signal shows as a negative code).

Judged paths (monitor with a prompt metric, generate) use ``ragmeter.testing.FakeOpenAIServer``
started in this process, for the judge and the embeddings. Cases that parse YAML or other
documents that could blow up run under ``RLIMIT_AS`` = 2 GiB.

Run from the repository root: ``.venv/bin/python bench/probe_surfaces.py``; it prints a table
per surface and the totals and writes ``bench/RESULTS_probe.md``.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import datetime as dt
import io
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ragmeter.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"
FIXTURES = REPO / "tests" / "traces" / "fixtures"
RESULTS = REPO / "bench" / "RESULTS_probe.md"
TIMEOUT_S = 60.0
FIFO_TIMEOUT_S = 15.0  # a FIFO without a writer blocks forever; no need to wait 60 s to say so
DOCUMENTED = {0, 1, 2, 3, 4, 130}
TRACEBACK = "Traceback (most recent call last)"
MEMORY_LIMIT = 2 << 30
DEEP = 100_000


@dataclass
class Case:
    surface: str
    name: str
    args: list[str | bytes]
    timeout: float = TIMEOUT_S
    memory_limit: bool = False


@dataclass
class Outcome:
    case: Case
    verdict: str
    code: int | None
    seconds: float
    last_line: str
    extra: dict[str, str] = field(default_factory=dict)


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_case(case: Case, cwd: Path, env: dict[str, str]) -> Outcome:
    command: list[str | bytes] = [str(PYTHON), "-m", "ragmeter", *case.args]
    started = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=limit_memory if case.memory_limit else None,
    )
    try:
        out, err = proc.communicate(timeout=case.timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        elapsed = time.monotonic() - started
        return Outcome(case, "hang", None, elapsed, f"(killed after {case.timeout:.0f} s)")
    elapsed = time.monotonic() - started
    stdout = out.decode("utf-8", "replace")
    stderr = err.decode("utf-8", "replace")
    lines = [line for line in stderr.splitlines() if line.strip()]
    if not lines:
        lines = [line for line in stdout.splitlines() if line.strip()]
    last = lines[-1].strip() if lines else "(no output)"
    if TRACEBACK in stderr or TRACEBACK in stdout:
        verdict = "traceback"
    elif proc.returncode in DOCUMENTED:
        verdict = "ok"
    else:
        verdict = "bad-exit"
    return Outcome(case, verdict, proc.returncode, elapsed, last[:300])


# ---------------------------------------------------------------- generators


def deep_json(levels: int = DEEP) -> str:
    return "[" * levels + "]" * levels


def deep_object(levels: int = DEEP) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def dumps(value: object) -> str:
    return json.dumps(value, allow_nan=True, ensure_ascii=False)


def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghi":
        refs = ",".join(f"*{previous}" for _ in range(9))
        lines.append(f"{name}: &{name} [{refs}]")
        previous = name
    lines.append("name: bomb")
    lines.append("kind: discrete")
    lines.append("labels: *i")
    lines.append("instruction: boom")
    return "\n".join(lines) + "\n"


def replace_keys(value: object, keys: set[str], new: object) -> object:
    """A copy of ``value`` with every ``keys`` entry (at any depth) set to ``new``."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in keys:
                out[key] = copy.deepcopy(new)
            elif key == "attributes" and isinstance(item, list):
                out[key] = [_otel_attribute(entry, keys, new) for entry in item]
            else:
                out[key] = replace_keys(item, keys, new)
        return out
    if isinstance(value, list):
        return [replace_keys(item, keys, new) for item in value]
    return value


def _otel_attribute(entry: object, keys: set[str], new: object) -> object:
    if isinstance(entry, dict) and entry.get("key") in keys:
        if isinstance(new, (float, int)):
            return {"key": entry["key"], "value": {"doubleValue": new}}
        return {"key": entry["key"], "value": {"stringValue": str(new)}}
    return replace_keys(entry, keys, new)


def load_records(path: Path) -> tuple[str, list[object]]:
    """``("jsonl", records)`` or ``("json", [document])``."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return "jsonl", [json.loads(line) for line in text.splitlines() if line.strip()]
    return "json", [json.loads(text)]


def write_records(path: Path, kind: str, records: list[object]) -> None:
    if kind == "jsonl":
        path.write_text("\n".join(dumps(r) for r in records) + "\n", encoding="utf-8")
    else:
        path.write_text(dumps(records[0]), encoding="utf-8")


# Time fields of each vendor's records (OTLP nanoseconds as strings, ISO elsewhere).
VENDORS = {
    "otel": {
        "fixture": "otel_openinference.jsonl",
        "time_keys": {"startTimeUnixNano", "endTimeUnixNano"},
        "token_keys": {
            "llm.token_count.prompt",
            "llm.token_count.completion",
            "gen_ai.usage.input_tokens",
            "gen_ai.usage.output_tokens",
        },
    },
    "phoenix": {
        "fixture": "phoenix_spans.json",
        "time_keys": {"start_time", "end_time"},
        "token_keys": {
            "attributes.llm.token_count.prompt",
            "attributes.llm.token_count.completion",
        },
    },
    "langfuse": {
        "fixture": "langfuse_observations.json",
        "time_keys": {"timestamp", "startTime", "endTime"},
        "token_keys": {"input", "output", "promptTokens", "completionTokens"},
        "token_parent": {"usageDetails", "usage"},
    },
    "langsmith": {
        "fixture": "langsmith_runs.jsonl",
        "time_keys": {"start_time", "end_time"},
        "token_keys": {"prompt_tokens", "completion_tokens", "total_tokens"},
    },
}

NOW_MS = 1_780_000_000_000
HOSTILE_TIMES: dict[str, object] = {
    "ts-garbage": "garbage",
    "ts-month13": "2026-13-45T00:00:00Z",
    "ts-1e300": 1e300,
    "ts-nan": math.nan,
    "ts-minus1": -1,
    "ts-epoch-ms": NOW_MS,
    "ts-epoch-ns": NOW_MS * 1_000_000,
}


def infinite_tokens(value: object, vendor: str) -> object:
    spec = VENDORS[vendor]
    if vendor != "langfuse":
        return replace_keys(value, spec["token_keys"], math.inf)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in spec["token_parent"] and isinstance(item, dict):
                out[key] = {k: math.inf for k in ("input", "output", "total")}
            elif key in ("promptTokens", "completionTokens"):
                out[key] = math.inf
            else:
                out[key] = infinite_tokens(item, vendor)
        return out
    if isinstance(value, list):
        return [infinite_tokens(item, vendor) for item in value]
    return value


def file_hostilities(work: Path, stem: str, valid_jsonl: str) -> dict[str, tuple[Path, bool]]:
    """Name -> (path, is_fifo): the file-level hostile inputs, created under ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    made: dict[str, tuple[Path, bool]] = {}
    deep = work / f"{stem}-deep.json"
    deep.write_text(deep_json(), encoding="utf-8")
    made["deep-json-100k"] = (deep, False)
    deep_line = work / f"{stem}-deep-line.jsonl"
    deep_line.write_text(deep_object() + "\n", encoding="utf-8")
    made["deep-jsonl-line-100k"] = (deep_line, False)
    big = work / f"{stem}-bigcell.csv"
    with big.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["user_input", "response", "reference", "id"])
        writer.writerow(["q", "x" * (210 * 1024), "x", "1"])
    made["csv-cell-210KiB"] = (big, False)
    quote = work / f"{stem}-quote.csv"
    quote.write_text('user_input,response,reference\n"never closed,a,b\nq,a,b\n', encoding="utf-8")
    made["csv-unterminated-quote"] = (quote, False)
    surrogate = work / f"{stem}-surrogate.jsonl"
    surrogate.write_text(valid_jsonl.replace('"', '"\\ud800', 2) + "\n", encoding="utf-8")
    made["lone-surrogate"] = (surrogate, False)
    raw_name = os.path.join(os.fsencode(work), stem.encode() + b"-\xff\xfe.jsonl")
    with open(raw_name, "w", encoding="utf-8") as handle:
        handle.write(valid_jsonl + "\n")
    made["non-utf8-name"] = (Path(os.fsdecode(raw_name)), False)
    fifo = work / f"{stem}-fifo" / "x.jsonl"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    made["fifo"] = (fifo, True)
    zero = work / f"{stem}-zero.jsonl"
    zero.symlink_to("/dev/zero")
    made["symlink-dev-zero"] = (zero, False)
    empty = work / f"{stem}-empty.jsonl"
    empty.write_text("", encoding="utf-8")
    made["empty"] = (empty, False)
    folder = work / f"{stem}-dir.jsonl"
    folder.mkdir()
    made["directory"] = (folder, False)
    return made


def arg(path: Path) -> str | bytes:
    """The path as a command-line argument (bytes when it is not valid UTF-8)."""
    raw = os.fsencode(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
    return str(path)


# ---------------------------------------------------------------- surfaces


def import_cases(tmp: Path) -> list[Case]:
    work = tmp / "import"
    work.mkdir()
    cases: list[Case] = []
    for vendor, spec in VENDORS.items():
        kind, records = load_records(FIXTURES / spec["fixture"])
        suffix = ".jsonl" if kind == "jsonl" else ".json"
        for name, value in HOSTILE_TIMES.items():
            path = work / f"{vendor}-{name}{suffix}"
            write_records(path, kind, [replace_keys(r, spec["time_keys"], value) for r in records])
            cases.append(Case("import", f"{vendor} {name}", _imp(vendor, path, work)))
        path = work / f"{vendor}-tokens-inf{suffix}"
        write_records(path, kind, [infinite_tokens(r, vendor) for r in records])
        cases.append(Case("import", f"{vendor} tokens-infinite", _imp(vendor, path, work)))
        valid = dumps(records[0]) if kind == "jsonl" else dumps({"data": []})
        for name, (path, fifo) in file_hostilities(work, vendor, valid).items():
            timeout = FIFO_TIMEOUT_S if fifo else TIMEOUT_S
            cases.append(Case("import", f"{vendor} {name}", _imp(vendor, path, work), timeout))
    wrong = {"otel": "langsmith", "phoenix": "otel", "langfuse": "phoenix", "langsmith": "langfuse"}
    for vendor, other in wrong.items():
        path = FIXTURES / VENDORS[other]["fixture"]
        cases.append(Case("import", f"{vendor} reads {other}'s file", _imp(vendor, path, work)))
    return cases


def _imp(vendor: str, path: Path, work: Path) -> list[str | bytes]:
    return ["import", vendor, arg(path), "-o", str(work / "out.jsonl")]


GOOD_ROW = {
    "id": "s1",
    "user_input": "What is RAG?",
    "response": "Retrieval-augmented generation.",
    "reference": "Retrieval-augmented generation.",
    "retrieved_contexts": ["RAG retrieves passages.", "Weather is fine."],
    "retrieved_context_ids": ["d1", "d2"],
    "reference_context_ids": ["d1"],
    "metadata": {"timestamp": "2026-11-20T10:00:00Z", "channel": "web"},
}

WRONG_TYPES: dict[str, list[object]] = {
    "id": [None, 3.5, math.nan, ["a"], {"x": 1}, True],
    "user_input": [None, 42, ["a", "b"], {"q": 1}, True, math.inf],
    "response": [None, 42, ["a"], {"r": 1}, False, math.nan],
    "reference": [None, 42, ["a"], {"r": 1}, -math.inf],
    "retrieved_contexts": [None, "one string", 7, [1, None, {"a": 1}], [["nested"]]],
    "retrieved_context_ids": [None, "d1", 7, [1, 2.5, None], [["d1"]], [{"id": "d1"}]],
    "reference_context_ids": [None, "d1", 7, [math.nan], [["d1"]], {}],
    "relevance": ["high", [1, 2], {"d1": "x"}, {"d1": math.nan}, {"d1": math.inf}],
    "metadata": ["text", 5, ["a"], {"timestamp": math.nan}],
}


def eval_cases(tmp: Path) -> list[Case]:
    work = tmp / "eval"
    work.mkdir()
    cases: list[Case] = []
    runs = iter(range(1_000))

    def base() -> list[str | bytes]:
        """The options, with a run directory of its own per case."""
        return ["--metrics", "exact_match,mrr", "-o", str(work / f"run{next(runs)}"), "-q"]

    valid = dumps(GOOD_ROW)
    for name, (path, fifo) in file_hostilities(work, "eval", valid).items():
        timeout = FIFO_TIMEOUT_S if fifo else TIMEOUT_S
        cases.append(Case("eval", name, ["eval", arg(path), *base()], timeout))
    otel = FIXTURES / VENDORS["otel"]["fixture"]
    cases.append(Case("eval", "otel export as data", ["eval", str(otel), *base()]))
    index = 0
    for key, values in WRONG_TYPES.items():
        for value in values:
            index += 1
            row = dict(GOOD_ROW, **{key: value})
            path = work / f"wrong-{index}.jsonl"
            path.write_text(dumps(row) + "\n" + dumps(GOOD_ROW) + "\n", encoding="utf-8")
            label = f"{key}={dumps(value)[:30]}"
            cases.append(Case("eval", f"wrong type {label}", ["eval", str(path), *base()]))
    for key in ("user_input", "response", "reference", "id"):
        path = work / f"surrogate-{key}.jsonl"
        line = dumps(GOOD_ROW).replace(f'"{key}": "', f'"{key}": "\\ud800\\udfff\\udc00', 1)
        path.write_text(line + "\n", encoding="utf-8")
        cases.append(Case("eval", f"lone surrogate in {key}", ["eval", str(path), *base()]))
    path = work / "surrogate-context.jsonl"
    path.write_text(dumps(GOOD_ROW).replace("d1", "\\ud800") + "\n", encoding="utf-8")
    cases.append(Case("eval", "lone surrogate in context ids", ["eval", str(path), *base()]))
    path = work / "surrogate-skip.jsonl"
    path.write_text(dumps(GOOD_ROW).replace("RAG?", "\\udfff") + "\n", encoding="utf-8")
    cases.append(
        Case(
            "eval", "lone surrogate --skip-invalid", ["eval", str(path), *base(), "--skip-invalid"]
        )
    )
    return cases


POLITE_YAML = """name: polite
kind: discrete
labels: [polite, rude]
inputs: [user_input, response]
instruction: "Is the answer polite?"
"""


def responder(body: dict) -> dict:
    return {"reason": "fine", "label": "polite", "score": 1, "verdict": "yes"}


def monitor_cases(tmp: Path, judge: list[str]) -> tuple[list[Case], Callable[[Path], None]]:
    work = tmp / "monitor"
    work.mkdir()
    metric = work / "polite.yaml"
    metric.write_text(POLITE_YAML, encoding="utf-8")
    cases: list[Case] = []

    def mon(source: Path, state: str, *extra: str) -> list[str | bytes]:
        return [
            "monitor",
            arg(source),
            "-m",
            str(metric),
            "--once",
            "--flush",
            "--state",
            str(work / state),
            "-q",
            "--no-cache",
            *judge,
            *extra,
        ]

    def rows(stamp: object, count: int = 4) -> str:
        out = []
        for i in range(count):
            row = dict(GOOD_ROW, id=f"m{i}", metadata={"timestamp": stamp})
            out.append(dumps(row))
        return "\n".join(out) + "\n"

    stamps: dict[str, object] = {
        "nan": math.nan,
        "1e300": 1e300,
        "epoch-ms": NOW_MS,
        "2099": "2099-01-01T00:00:00Z",
        "garbage": "garbage",
        "minus1": -1,
        "inf": math.inf,
    }
    for name, stamp in stamps.items():
        source = work / f"ts-{name}.jsonl"
        source.write_text(rows(stamp), encoding="utf-8")
        for window in ("1h", "2"):
            cases.append(
                Case(
                    "monitor",
                    f"timestamp {name} --window {window}",
                    mon(source, f"state-{name}-{window}", "--window", window),
                )
            )
    source = work / "surrogate.jsonl"
    source.write_text(rows("2026-11-20T10:00:00Z").replace("What", "\\ud800What"), "utf-8")
    cases.append(Case("monitor", "lone surrogate", mon(source, "state-sur", "--window", "2")))
    good = work / "good.jsonl"
    good.write_text(rows("2026-11-20T10:00:00Z", 6), encoding="utf-8")
    cases.append(
        Case(
            "monitor",
            "--webhook http://[::1",
            mon(good, "state-hook", "--window", "2", "--webhook", "http://[::1"),
        )
    )
    damaged: list[tuple[str, str]] = []
    for name in (
        "empty",
        "truncated",
        "list",
        "wrong-types",
        "string-values",
        "null",
        "deep",
    ):
        damaged.append((name, f"state-damaged-{name}"))
        cases.append(
            Case(
                "monitor",
                f"state.json {name}",
                mon(good, f"state-damaged-{name}", "--window", "2"),
            )
        )

    def prepare(cwd: Path) -> None:
        """One good pass per damaged state folder, then its state.json damaged."""
        env = probe_env(cwd)
        first = mon(good, "state-seed", "--window", "2")
        seeded = subprocess.run(
            [str(PYTHON), "-m", "ragmeter", *first],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        seed_dir = work / "state-seed"
        seed = seed_dir / "state.json"
        if not seed.exists():
            print(f"warning: monitor seed pass left no state.json (exit {seeded.returncode}):")
            print(seeded.stderr.decode("utf-8", "replace")[-2000:])
            seed_dir.mkdir(parents=True, exist_ok=True)
        real = json.loads(seed.read_text("utf-8")) if seed.exists() else {"files": {}}
        text = seed.read_text("utf-8") if seed.exists() else "{}"
        versions = {
            "empty": "",
            "truncated": text[: len(text) // 2],
            "list": "[1, 2, 3]",
            "wrong-types": dumps(wrong_typed(real)),
            "string-values": dumps(dict.fromkeys(real, "x")),
            "null": "null",
            "deep": deep_json(),
        }
        for name, folder in damaged:
            target = work / folder
            shutil.copytree(seed_dir, target)
            (target / "state.json").write_text(versions[name], encoding="utf-8")
        # A rerun of the good file must read the new lines only: append after the seed.
        with good.open("a", encoding="utf-8") as handle:
            handle.write(rows("2026-11-20T11:00:00Z", 4))

    return cases, prepare


def wrong_typed(value: object) -> object:
    """Every leaf of ``value`` swapped for a value of another type."""
    if isinstance(value, dict):
        return {key: wrong_typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return {"was": "a list"} if not value else [wrong_typed(item) for item in value]
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "12"
    if isinstance(value, str):
        return [value]
    return 3.5


def mine_cases(tmp: Path) -> list[Case]:
    work = tmp / "mine"
    work.mkdir()
    samples = work / "samples.jsonl"
    questions = [
        "How do I reset my password?",
        "What is the refund window?",
        "Can I export my data?",
        "How do I delete my account?",
        "Where are invoices?",
        "Is there an API rate limit?",
    ]
    samples.write_text(
        "\n".join(dumps({"id": f"q{i}", "user_input": q}) for i, q in enumerate(questions)) + "\n",
        encoding="utf-8",
    )
    readonly = work / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    a_file = work / "plain.txt"
    a_file.write_text("x", encoding="utf-8")
    outdir = work / "outdir.jsonl"
    outdir.mkdir()
    targets = {
        "-o under read-only dir": str(readonly / "to_label.jsonl"),
        "-o /proc/x": "/proc/x/to_label.jsonl",
        "-o /proc/version": "/proc/version",
        "-o a directory": str(outdir),
        "-o under a regular file": str(a_file / "to_label.jsonl"),
    }
    cases = [
        Case("mine", name, ["mine", "pick", str(samples), "-n", "3", "-o", target, "--force"])
        for name, target in targets.items()
    ]
    shares = {
        "shares 0.7+0.6": ["--worst-share", "0.7", "--novel-share", "0.6"],
        "worst-share 1.5": ["--worst-share", "1.5"],
        "novel-share -0.5": ["--novel-share", "-0.5"],
        "worst-share nan": ["--worst-share", "nan"],
        "novel-share inf": ["--novel-share", "inf"],
        "dedupe nan": ["--dedupe", "nan"],
        "clusters 0": ["--clusters", "0"],
        "n -1": ["-n", "-1"],
    }
    for name, extra in shares.items():
        out = str(work / f"{name.replace(' ', '_')}.jsonl")
        cases.append(Case("mine", name, ["mine", "pick", str(samples), "-o", out, *extra]))
    return cases


def custom_metric_cases(tmp: Path, data: Path) -> list[Case]:
    work = tmp / "metric"
    work.mkdir()
    files = {
        "bomb.yaml": billion_laughs(),
        "multi.yaml": POLITE_YAML + "---\n" + POLITE_YAML.replace("polite", "second"),
        "tabs.yaml": "name: tabbed\nkind: discrete\nlabels:\n\t- good\n\t- bad\ninstruction: x\n",
        "instruction42.toml": 'name = "n42"\nkind = "discrete"\nlabels = ["a", "b"]\n'
        "instruction = 42\n",
        "nan.yaml": POLITE_YAML + "label_scores:\n  polite: .nan\n  rude: 0\n",
        "nan.toml": 'name = "nant"\nkind = "discrete"\nlabels = ["a", "b"]\n'
        'instruction = "x"\n[label_scores]\na = nan\nb = inf\n',
        "nan.json": '{"name": "nanj", "kind": "discrete", "labels": ["a", "b"], '
        '"instruction": "x", "label_scores": {"a": NaN, "b": -Infinity}}',
        "deep.json": deep_json(),
        "deep-object.json": deep_object(),
    }
    cases = []
    for name, text in files.items():
        path = work / name
        path.write_text(text, encoding="utf-8")
        cases.append(
            Case(
                "custom-metric",
                name,
                ["eval", str(data), "-m", str(path), "--dry-run"],
                memory_limit=True,
            )
        )
    bomb = billion_laughs()
    assert len(bomb.encode()) < 2048, len(bomb)
    return cases


def minimal_pdf_nested(levels: int = DEEP) -> bytes:
    nested = b"[" * levels + b"]" * levels
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Nested "
        + nested
        + b" >>",
    ]
    stream = b"BT /F1 12 Tf 72 712 Td (" + b"[" * 2000 + b") Tj ET"
    objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\n" % (len(objects) + 1))
    out.write(b"startxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def truncated_docx() -> bytes:
    buffer = io.BytesIO()
    body = "".join(
        f"<w:p><w:r><w:t>Paragraph {i} about refunds.</w:t></w:r></w:p>" for i in range(400)
    )
    document = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{body}</w:body></w:document>"
    )
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
            'content-types"><Override PartName="/word/document.xml" ContentType="application/'
            'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
        )
        archive.writestr("word/document.xml", document)
    whole = buffer.getvalue()
    return whole[: len(whole) // 2]


def generate_cases(tmp: Path, judge: list[str]) -> list[Case]:
    work = tmp / "generate"
    work.mkdir()
    text = "Refunds are issued within 30 days. Annual plans are refunded pro rata. " * 20
    folders = {}
    fifo_dir = work / "docs-fifo"
    fifo_dir.mkdir()
    (fifo_dir / "a.txt").write_text(text, encoding="utf-8")
    os.mkfifo(fifo_dir / "pipe.txt")
    folders["folder with a FIFO (pipe.txt)"] = (fifo_dir, True)
    docx_dir = work / "docs-docx"
    docx_dir.mkdir()
    (docx_dir / "half.docx").write_bytes(truncated_docx())
    folders["truncated .docx (zip cut in half)"] = (docx_dir, False)
    pdf_dir = work / "docs-pdf"
    pdf_dir.mkdir()
    (pdf_dir / "nested.pdf").write_bytes(minimal_pdf_nested())
    folders["PDF with 100k-deep nested arrays"] = (pdf_dir, False)
    both = work / "docs-mixed"
    both.mkdir()
    (both / "a.txt").write_text(text, encoding="utf-8")
    (both / "half.docx").write_bytes(truncated_docx())
    (both / "nested.pdf").write_bytes(minimal_pdf_nested())
    folders["good .txt + bad .docx + bad .pdf"] = (both, False)
    control = work / "docs-control"
    control.mkdir()
    (control / "a.txt").write_text(text, encoding="utf-8")
    (control / "shallow.pdf").write_bytes(minimal_pdf_nested(10))
    folders["control: good .txt + 10-deep PDF"] = (control, False)
    cases = []
    for index, (name, (folder, fifo)) in enumerate(folders.items()):
        args: list[str | bytes] = [
            "generate",
            str(folder),
            "-n",
            "1",
            "--personas",
            "0",
            "--attempts",
            "1",
            "-q",
            "--no-cache",
            "-o",
            str(work / f"out{index}" / "testset.jsonl"),
            *judge,
        ]
        timeout = FIFO_TIMEOUT_S if fifo else TIMEOUT_S
        cases.append(Case("generate", name, args, timeout, memory_limit=True))
    return cases


GATE_TOML = '[[thresholds]]\nmetric = "mrr"\nmin = 0.1\n'


def run_folder_cases(tmp: Path, data: Path) -> tuple[list[Case], Callable[[Path], None]]:
    work = tmp / "runs"
    work.mkdir()
    good = work / "good"
    gate = work / "gate.toml"
    gate.write_text(GATE_TOML, encoding="utf-8")
    corruptions = ("garbage", "truncated", "empty", "directory", "missing")
    cases: list[Case] = []
    for corruption in corruptions:
        folder = str(work / f"run-{corruption}")
        cases += [
            Case(
                "gate/report/show", f"gate, run.db {corruption}", ["gate", folder, "-g", str(gate)]
            ),
            Case(
                "gate/report/show",
                f"report, run.db {corruption}",
                ["report", folder, "-o", str(work / f"r-{corruption}.html")],
            ),
            Case("gate/report/show", f"show, run.db {corruption}", ["show", folder]),
            Case(
                "gate/report/show", f"show --json, run.db {corruption}", ["show", folder, "--json"]
            ),
        ]
    rules = {
        "gate-bomb.yaml": billion_laughs()
        .replace("name: bomb\nkind: discrete\n", "")
        .replace("labels: *i\ninstruction: boom\n", "thresholds: *i\n"),
        "gate-multi.yaml": "thresholds:\n  - {metric: mrr, min: 0.1}\n---\n"
        "thresholds:\n  - {metric: mrr, min: 0.99}\n",
        "gate-nan.yaml": "thresholds:\n  - {metric: mrr, min: .nan}\n",
        "gate-deep.json": deep_json(),
    }
    for name, text in rules.items():
        path = work / name
        path.write_text(text, encoding="utf-8")
        cases.append(
            Case(
                "gate/report/show",
                f"gate rules {name}",
                ["gate", str(good), "-g", str(path)],
                memory_limit=True,
            )
        )
        cases.append(
            Case(
                "gate/report/show",
                f"eval --gate {name}",
                [
                    "eval",
                    str(data),
                    "-m",
                    "exact_match,mrr",
                    "-q",
                    "--no-store",
                    "-o",
                    str(work / f"eval-{name}"),
                    "--gate",
                    str(path),
                ],
                memory_limit=True,
            )
        )

    def prepare(cwd: Path) -> None:
        made = subprocess.run(
            [
                str(PYTHON),
                "-m",
                "ragmeter",
                "eval",
                str(data),
                "-m",
                "exact_match,mrr",
                "-q",
                "-o",
                str(good),
            ],
            cwd=cwd,
            env=probe_env(cwd),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        if not (good / "run.db").exists():
            print(f"warning: the good run has no run.db (exit {made.returncode}):")
            print(made.stderr.decode("utf-8", "replace")[-2000:])
        for corruption in corruptions:
            target = work / f"run-{corruption}"
            shutil.copytree(good, target)
            db = target / "run.db"
            original = db.read_bytes() if db.exists() else b""
            if corruption == "garbage":
                db.write_bytes(b"this is not a database\x00\xff" * 200)
            elif corruption == "truncated":
                db.write_bytes(original[: max(1, len(original) // 2)])
            elif corruption == "empty":
                db.write_bytes(b"")
            elif corruption == "directory":
                db.unlink(missing_ok=True)
                db.mkdir()
            elif corruption == "missing":
                db.unlink(missing_ok=True)

    return cases, prepare


# ---------------------------------------------------------------- driver


ENV_DROP = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RAY_ADDRESS", "WANDB_MODE", "MLFLOW_TRACKING_URI")
JUDGE_ENV: dict[str, str] = {}
CODE_AT_START: list[str] = []


def probe_env(tmp: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("RAGMETER_") and k not in ENV_DROP
    }
    env.update(
        RAGMETER_CACHE=str(tmp / "cache.db"),
        RAGMETER_STORE_URL=f"sqlite:///{tmp / 'runs.db'}",
        RAGMETER_HOME=str(tmp / "home"),
        COLUMNS="160",
        NO_COLOR="1",
        PYTHONFAULTHANDLER="1",
    )
    env.update(JUDGE_ENV)
    return env


def write_results(
    outcomes: list[Outcome], command: str, load: str, started: str, wall: float
) -> None:
    surfaces = list(dict.fromkeys(o.case.surface for o in outcomes))
    classes = ["ok", "traceback", "hang", "bad-exit"]
    lines = [
        "# Hostile inputs at every CLI surface (bench/probe_surfaces.py)",
        "",
        f"- date: {started}",
        f"- load (`uptime`): {load}",
        f"- command: `{command}`",
        f"- code at the start: {CODE_AT_START[0]}; at the end: {code_version()}",
        f"- cases: {len(outcomes)}, wall {wall:.0f} s; timeout {TIMEOUT_S:.0f} s per case "
        f"({FIFO_TIMEOUT_S:.0f} s for FIFO cases); YAML/metric/gate-rule/generate cases under "
        "RLIMIT_AS 2 GiB",
        "- classes: ok = exit 0/1/2/3/4/130 without a traceback; traceback = "
        '"Traceback (most recent call last)" on stdout or stderr; hang = timeout; '
        "bad-exit = any other exit code (negative = killed by that signal)",
        "",
        "| surface | cases | " + " | ".join(classes) + " |",
        "|---|---:|" + "---:|" * len(classes),
    ]
    for surface in surfaces:
        mine = [o for o in outcomes if o.case.surface == surface]
        counts = Counter(o.verdict for o in mine)
        lines.append(
            f"| {surface} | {len(mine)} | " + " | ".join(str(counts[c]) for c in classes) + " |"
        )
    total = Counter(o.verdict for o in outcomes)
    lines.append(
        f"| **total** | {len(outcomes)} | " + " | ".join(str(total[c]) for c in classes) + " |"
    )
    lines += ["", "## Non-ok cases", ""]
    bad = [o for o in outcomes if o.verdict != "ok"]
    if not bad:
        lines += ["None.", ""]
    for o in bad:
        lines += [
            f"### {o.case.surface}: {o.case.name}: {o.verdict} (exit {o.code}, {o.seconds:.1f} s)",
            "",
            "```",
            "ragmeter " + " ".join(shown(a) for a in o.case.args),
            "```",
            "",
            "last stderr line: `" + o.last_line.replace("`", "'") + "`",
            "",
        ]
    lines += [
        "## Every case",
        "",
        "| surface | case | class | exit | s | last line |",
        "|---|---|---|---:|---:|---|",
    ]
    for o in outcomes:
        last = o.last_line.replace("|", "\\|").replace("`", "'")[:160]
        cells = [o.case.surface, o.case.name, o.verdict, str(o.code), f"{o.seconds:.1f}", last]
        lines.append("| " + " | ".join(cells) + " |")
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")


def code_version() -> str:
    """The commit tested, and whether src/ had uncommitted changes when the run ended."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30, check=False
        )
        return done.stdout.strip()

    dirty = git("status", "--porcelain", "--", "src")
    return f"commit {git('rev-parse', '--short', 'HEAD')}" + (
        f", src/ modified: {' '.join(dirty.split())}" if dirty else ", src/ clean"
    )


def shown(value: str | bytes) -> str:
    if isinstance(value, bytes):
        return os.fsdecode(value).encode("utf-8", "backslashreplace").decode("utf-8")
    return value if value and " " not in value and "[" not in value else repr(value)


def main() -> int:
    started = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    load = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    command = ".venv/bin/python bench/probe_surfaces.py"
    CODE_AT_START.append(code_version())
    t0 = time.monotonic()
    outcomes: list[Outcome] = []
    with (
        tempfile.TemporaryDirectory(prefix="ragmeter-probe-") as name,
        FakeOpenAIServer(responder=responder) as server,
    ):
        tmp = Path(name)
        JUDGE_ENV.update(
            RAGMETER_JUDGE_API_KEY="probe-key",
            RAGMETER_EMBEDDINGS_MODEL="fake-embed",
            RAGMETER_EMBEDDINGS_BASE_URL=server.base_url,
            RAGMETER_EMBEDDINGS_API_KEY="probe-key",
        )
        judge = ["--judge-base-url", server.base_url, "--judge-model", "fake-model"]
        data = tmp / "data.jsonl"
        data.write_text(
            "\n".join(dumps(dict(GOOD_ROW, id=f"s{i}")) for i in range(3)) + "\n", "utf-8"
        )
        env = probe_env(tmp)
        monitor, prepare_monitor = monitor_cases(tmp, judge)
        runs, prepare_runs = run_folder_cases(tmp, data)
        prepare_monitor(tmp)
        prepare_runs(tmp)
        plan = [
            *import_cases(tmp),
            *eval_cases(tmp),
            *monitor,
            *mine_cases(tmp),
            *custom_metric_cases(tmp, data),
            *generate_cases(tmp, judge),
            *runs,
        ]
        only = os.environ.get("PROBE_ONLY")  # a surface name, to rerun one while debugging
        if only:
            plan = [case for case in plan if case.surface == only]
        print(f"{len(plan)} cases", flush=True)
        for case in plan:
            outcome = run_case(case, tmp, env)
            outcomes.append(outcome)
            mark = "." if outcome.verdict == "ok" else outcome.verdict[0].upper()
            print(mark, end="", flush=True)
        print()
        with contextlib.suppress(OSError):
            (tmp / "mine" / "readonly").chmod(0o755)
    wall = time.monotonic() - t0
    print_tables(outcomes)
    print(f"wall {wall:.0f} s")
    write_results(outcomes, command, load, started, wall)
    print(f"wrote {RESULTS.relative_to(REPO)}")
    return 0


def print_tables(outcomes: list[Outcome]) -> None:
    classes = ["ok", "traceback", "hang", "bad-exit"]
    for surface in dict.fromkeys(o.case.surface for o in outcomes):
        print(f"\n== {surface}")
        print(f"{'case':<48} {'class':<10} {'exit':>5} {'s':>6}  last line")
        for o in outcomes:
            if o.case.surface == surface:
                print(
                    f"{o.case.name[:48]:<48} {o.verdict:<10} {o.code!s:>5} {o.seconds:6.1f}  "
                    f"{o.last_line[:90]}"
                )
    print("\n== totals")
    print(f"{'surface':<20} {'cases':>5} " + " ".join(f"{c:>9}" for c in classes))
    for surface in dict.fromkeys(o.case.surface for o in outcomes):
        counts = Counter(o.verdict for o in outcomes if o.case.surface == surface)
        n = sum(counts.values())
        print(f"{surface:<20} {n:>5} " + " ".join(f"{counts[c]:>9}" for c in classes))
    total = Counter(o.verdict for o in outcomes)
    print(f"{'total':<20} {len(outcomes):>5} " + " ".join(f"{total[c]:>9}" for c in classes))


if __name__ == "__main__":
    sys.exit(main())
