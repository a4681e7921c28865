"""Tests go through ragmeter's public API (issue 36): the imports of a private module left in
tests/ are listed here, each with why, and the list can only shrink.

A private module is one with a ``_name`` part (``ragmeter.judge._models``,
``ragmeter._services``): imported with ``from``/``import`` anywhere in a test file, or written
in code a test runs in a subprocess. ``from ragmeter.judge import _models`` (a module by its
name, for white-box tests that read or patch its internals) is frozen separately: no file may
start doing it. ``monkeypatch.setattr("ragmeter.x._y.name", ...)`` targets are not imports and
are not counted.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: (test file, private module) -> why the test cannot use a public name.
ALLOWED: dict[tuple[str, str], str] = {
    ("tests/_services/test_gc.py", "ragmeter._services._gc"): (
        "the collector settings of bulk reads and writes: internal, no public home"
    ),
    ("tests/_services/test_http.py", "ragmeter._services"): (
        "the HTTP layer's URL and message redaction and Retry-After parsing, table by table: "
        "no public function shows an arbitrary URL redacted, and each Retry-After form "
        "through a judge would be a real wait"
    ),
    ("tests/dashboard/test_i18n.py", "ragmeter.dashboard._i18n"): (
        "the dashboard's string tables and language negotiation themselves"
    ),
    ("tests/dataset/test_stream.py", "ragmeter.dataset._stream"): (
        "the on-disk table of seen ids a streamed dataset keeps, white box: it reads what "
        "the table holds in memory and the queries it sends to its SQLite file"
    ),
    ("tests/judge/test_anthropic_judge.py", "ragmeter.cli._judging"): (
        "the CLI's judge options choosing the Anthropic judge, and their record for --resume: "
        "a temperature reaches them only from a --resume record, no option sets it"
    ),
    ("tests/metrics/retrieval/test_run_fast_path.py", "ragmeter.metrics.retrieval._run"): (
        "the vectorised path byte for byte against the public one, and its block size"
    ),
    ("tests/metrics/test_registry_names.py", "ragmeter.metrics._registry"): (
        "the table of explained names (other libraries' metrics), which no alias may shadow: "
        "nothing public lists it"
    ),
    ("tests/runner/test_ray_services.py", "ragmeter._services"): (
        "share_limits, how a Ray worker installs the cluster-wide limiter"
    ),
    ("tests/runner/test_ray_services.py", "ragmeter.runner._ray"): (
        "the cluster-wide limiter's bookkeeping without a cluster"
    ),
    ("tests/stats/test_format.py", "ragmeter.stats._format"): (
        "how the statistics' sentences write numbers, p-values and percentages"
    ),
    ("tests/steps/test_embedded_judge_facts.py", "ragmeter.steps._judgments"): (
        "the hedge phrases and the sentence claims of the embedded judge"
    ),
    ("tests/steps/test_evidence.py", "ragmeter.steps._evidence"): (
        "the evidence selection behind the embedded judge's prompts"
    ),
    ("tests/store/test_storage_errors.py", "ragmeter.store._store"): (
        "the engine options that bound a connection to a server that does not answer"
    ),
    ("tests/test_secrets.py", "ragmeter.cli._app"): (
        "record_run: a store failing after the run, which no command reaches on demand "
        "(eval opens the store before the run)"
    ),
    ("tests/testset/test_adversarial.py", "ragmeter._text"): (
        "the number extraction the adversarial checks share"
    ),
    ("tests/testset/test_adversarial.py", "ragmeter.testset._arithmetic"): (
        "the checked calculations of arithmetic questions"
    ),
    ("tests/testset/test_adversarial.py", "ragmeter.testset._difficulty"): (
        "the difficulty levels and the paraphrase distance"
    ),
    ("tests/testset/test_adversarial.py", "ragmeter.testset._temporal"): (
        "the time anchors and phrases of temporal questions"
    ),
    ("tests/traces/test_build.py", "ragmeter.traces._build"): (
        "the builder's rules on hand-written Span objects (Span is public, the builder is "
        "not: import_traces reads only files)"
    ),
    ("tests/tracking/test_record.py", "ragmeter.tracking._record"): (
        "what a tracker is given (params, metrics, tags, files), piece by piece, without "
        "MLflow or W&B installed"
    ),
}

#: Test files that import a private module by name (``from ragmeter.judge import _local``)
#: to read or patch its internals: white-box tests, frozen at today's list.
WHITE_BOX: set[tuple[str, str]] = {
    ("tests/_services/test_sync.py", "ragmeter.embed._base"),
    ("tests/cli/test_judge_check_providers.py", "ragmeter.judge._endpoint"),
    ("tests/dashboard/test_pages.py", "ragmeter.dashboard._views"),
    ("tests/embed/test_local_embeddings.py", "ragmeter.embed._local"),
    ("tests/judge/test_dialects.py", "ragmeter.judge._endpoint"),
    ("tests/judge/test_litellm_judge.py", "ragmeter.judge._endpoint"),
    ("tests/judge/test_litellm_judge.py", "ragmeter.judge._litellm"),
    ("tests/judge/test_local_judge.py", "ragmeter.judge._llama"),
    ("tests/judge/test_local_judge.py", "ragmeter.judge._local"),
    ("tests/judge/test_local_models.py", "ragmeter.judge._llama"),
    ("tests/judge/test_local_models.py", "ragmeter.judge._local"),
    ("tests/judge/test_local_models.py", "ragmeter.judge._models"),
    ("tests/judge/test_providers.py", "ragmeter.judge._config"),
    ("tests/metrics/test_registry_register.py", "ragmeter.metrics._registry"),
    ("tests/monitor/test_monitor.py", "ragmeter.monitor._monitor"),
    ("tests/report/test_parts.py", "ragmeter.report._format"),
    ("tests/store/test_store.py", "ragmeter.store._store"),
    ("tests/testset/test_embedded.py", "ragmeter.judge._llama"),
    ("tests/testset/test_neighbours.py", "ragmeter.testset._neighbours"),
}

#: Text that spells private imports as data, never run: the fixture of the src checker's own
#: test (test_architecture.py's test_the_check_finds_private_imports).
DATA_ONLY = {"tests/test_architecture.py"}

#: The most entries ALLOWED may hold (issue 36: at most 20; lower it as entries go).
MAX_ALLOWED = 20

_PRIVATE_PART = re.compile(r"^_(?!_)")
_CODE_LINE = re.compile(r"^\s*(?:from|import)\s+(ragmeter(?:\.\w+)*)")


def _private(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "ragmeter" and any(_PRIVATE_PART.match(p) for p in parts[1:])


def scan(root: Path, relative_to: Path) -> tuple[list[tuple[str, int, str]], set[tuple[str, str]]]:
    """``(private imports as (file, line, module), white-box (file, module) pairs)`` of the
    Python files under ``root``."""
    imports: list[tuple[str, int, str]] = []
    white_box: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(relative_to).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if _private(node.module):
                    imports.append((name, node.lineno, node.module))
                elif node.module.split(".")[0] == "ragmeter":
                    for alias in node.names:
                        if _PRIVATE_PART.match(alias.name):
                            white_box.add((name, f"{node.module}.{alias.name}"))
            elif isinstance(node, ast.Import):
                imports += [(name, node.lineno, a.name) for a in node.names if _private(a.name)]
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and name not in DATA_ONLY
            ):
                for line in node.value.splitlines():  # code a test runs in a subprocess
                    found = _CODE_LINE.match(line)
                    if found and _private(found.group(1)):
                        imports.append((name, node.lineno, found.group(1)))
    return imports, white_box


def test_no_test_imports_a_private_module_outside_the_allowed_list():
    imports, _ = scan(TESTS, TESTS.parent)
    unlisted = [f"{f}:{line}: {m}" for f, line, m in imports if (f, m) not in ALLOWED]
    assert not unlisted, (
        "import the public name instead (add it to the package's public names if it should "
        "be one), or list the import in ALLOWED with the reason:\n" + "\n".join(unlisted)
    )


def test_the_allowed_list_is_current_and_no_longer_than_its_ceiling():
    imports, _ = scan(TESTS, TESTS.parent)
    stale = set(ALLOWED) - {(f, m) for f, _, m in imports}
    assert not stale, f"no longer imported, take out of ALLOWED: {sorted(stale)}"
    assert len(ALLOWED) <= MAX_ALLOWED
    assert all(reason.strip() for reason in ALLOWED.values())


def test_no_new_white_box_import_of_a_private_module_by_name():
    _, white_box = scan(TESTS, TESTS.parent)
    assert white_box <= WHITE_BOX, f"new: {sorted(white_box - WHITE_BOX)}"
    assert not WHITE_BOX - white_box, f"gone, take out: {sorted(WHITE_BOX - white_box)}"


def test_the_scan_finds_every_form(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    r = "ragmeter"  # (spelled apart, so that a grep of tests/ for private imports skips it)
    (tests / "test_x.py").write_text(
        f"import {r}.runner._progress as progress\n"
        f"from {r}.judge._cache import Cache\n"
        f"from {r}._services import Usage\n"
        f"from {r}.judge import Judge, _local\n"
        f"from {r}.report import render_html\n"
        "from tests.report._helpers import x\n"
        "def f():\n"
        f"    code = 'import sys\\nfrom {r}.embed._config import X\\n'\n"
        f"    return code, '{r}._services._http.MAX_BACKOFF_S'\n",
        encoding="utf-8",
    )
    imports, white_box = scan(tests, tmp_path)
    assert [(line, m) for _, line, m in imports] == [
        (1, "ragmeter.runner._progress"),
        (2, "ragmeter.judge._cache"),
        (3, "ragmeter._services"),
        (8, "ragmeter.embed._config"),
    ]
    assert white_box == {("tests/test_x.py", "ragmeter.judge._local")}
