"""The package boundaries: another package is used only through what its __init__ exports."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import ragmeter

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SRC = Path(ragmeter.__file__).parent
ROOT = Path(__file__).parents[1]


def _module_parts(path: Path, root: Path) -> list[str]:
    parts = ["ragmeter", *path.relative_to(root).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imported(node: ast.Import | ast.ImportFrom, parts: list[str], is_package: bool) -> list[str]:
    """The dotted names an import statement reaches: modules, and ``module.name`` for each
    name a ``from`` import takes (it may be a submodule)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = parts if is_package else parts[:-1]
        base = package[: len(package) - (node.level - 1)]
        module = ".".join([*base, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    return [module, *(f"{module}.{alias.name}" for alias in node.names)]


def private_imports(root: Path = SRC) -> list[str]:
    """``file:line: name`` for every import of another package's underscore module or name
    (``ragmeter.judge._cache``, ``from ragmeter.judge import _cache``), at any depth, module
    level or inside a function. Top-level private modules and packages (``ragmeter._text``,
    ``ragmeter._services``) are shared by design: their public names may be imported, but
    not the private modules inside them (``ragmeter._services._config``)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = _module_parts(path, root)
        own = parts[1] if len(parts) > 1 else None
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _imported(node, parts, path.name == "__init__.py"):
                pieces = name.split(".")
                if len(pieces) < 3 or pieces[0] != "ragmeter":
                    continue
                package = pieces[1]
                if package == own:
                    continue
                if any(p.startswith("_") and not p.startswith("__") for p in pieces[2:]):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {name}")
    return sorted(set(found))


def test_no_package_imports_another_packages_private_modules():
    offenders = private_imports()
    assert not offenders, "import the package's public names instead:\n" + "\n".join(offenders)


def test_the_check_finds_private_imports(tmp_path):
    root = tmp_path / "ragmeter"
    (root / "embed").mkdir(parents=True)
    (root / "embed" / "__init__.py").write_text("")
    # Text fed to the checker, not imports: "ragmeter" is spelled apart so that a grep of
    # tests/ for private imports (issue 36) does not count these lines.
    r = "ragmeter"
    (root / "embed" / "_base.py").write_text(
        f"from {r}.judge._cache import Cache\n"
        f"from {r}.judge import _usage\n"
        f"from {r}.judge import Judge\n"
        f"from {r}._services import Usage\n"
        f"from {r}._services._config import check_proxy\n"
        f"from {r}._text import tokens\n"
        f"from {r}.embed._config import X\n"
        "from ._local import Y\n"
        "def later():\n"
        f"    import {r}.runner._progress\n"
    )
    found = private_imports(root)
    assert sorted(line.split(": ", 1)[1] for line in found) == [
        "ragmeter._services._config",
        "ragmeter._services._config.check_proxy",
        "ragmeter.judge._cache",
        "ragmeter.judge._cache.Cache",
        "ragmeter.judge._usage",
        "ragmeter.runner._progress",
    ]


def _contract_layers() -> list[str]:
    """The ``layers`` of the import-linter contract in pyproject.toml, highest first."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [" ".join(layer.split()) for layer in contract["layers"]]


def _diagram_layers() -> list[str]:
    """The layer list of docs/extending.md: the first ``text`` block after "Where things live"."""
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text.split("\n## Where things live\n", 1)[1]
    block = re.search(r"^```text\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert block, "docs/extending.md: no ```text block of layers under 'Where things live'"
    return [" ".join(line.split()) for line in block.group(1).splitlines() if line.strip()]


def test_the_layer_diagram_in_the_docs_is_the_contract():
    assert _diagram_layers() == _contract_layers(), (
        "docs/extending.md's layers differ from pyproject.toml's contract: copy the contract's"
        " layers into the diagram, highest first"
    )


def _overview_layers() -> list[str]:
    """The one-line layers of docs/extending.md's opening section (``a > b | c > ...``)."""
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text.split("\n## The architecture on one screen\n", 1)[1]
    block = re.search(r"^```\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert block, "docs/extending.md: no ``` block of layers under 'The architecture on one screen'"
    return [" ".join(layer.split()) for layer in block.group(1).split(">")]


def test_the_overview_in_the_docs_is_the_contract():
    assert _overview_layers() == _contract_layers(), (
        "docs/extending.md's opening diagram differs from pyproject.toml's contract: write the"
        " contract's layers, highest first, separated by '>'"
    )


def _python_block(heading: str) -> str:
    """The first ``python`` block of docs/extending.md after ``heading``."""
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1]
    block = re.search(r"^```python\n(.*?)^```$", section, re.MULTILINE | re.DOTALL)
    assert block, f"docs/extending.md: no python block under {heading!r}"
    return block.group(1)


def test_the_docs_show_the_whole_metric_and_provider_modules_they_count():
    """The extension examples of docs/extending.md are the code that runs, line counts too."""
    text = (ROOT / "docs" / "extending.md").read_text(encoding="utf-8")
    metric = (SRC / "metrics" / "text" / "string_presence.py").read_text(encoding="utf-8")
    assert _python_block("### A built-in metric: one module") == metric
    assert f"`text/string_presence.py`, {metric.count(chr(10))}\nlines" in text
    module = (ROOT / "tests" / "judge" / "test_new_provider.py").read_text(encoding="utf-8")
    start = module.index("class OllamaConfig")
    end = module.index("\n", module.index('register_provider("ollama"')) + 1
    provider = module[start:end]
    assert _python_block("## Adding a judge provider") == provider
    assert f"is {provider.count(chr(10))} lines" in " ".join(text.split())


def test_every_package_has_a_layer():
    layered = {name for layer in _contract_layers() for name in re.split(r"[|:]", layer)}
    packages = {path.parent.name for path in SRC.glob("*/__init__.py")}
    assert {name.strip() for name in layered} == packages
