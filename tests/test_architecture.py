"""The package boundaries: another package is used only through what its __init__ exports."""

from __future__ import annotations

import ast
from pathlib import Path

import ragmeter

SRC = Path(ragmeter.__file__).parent


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
    level or inside a function. Top-level private modules (``ragmeter._text``,
    ``ragmeter._services``) are shared by design and allowed."""
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
                if package == own or package.startswith("_"):
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
    (root / "embed" / "_base.py").write_text(
        "from ragmeter.judge._cache import Cache\n"
        "from ragmeter.judge import _usage\n"
        "from ragmeter.judge import Judge\n"
        "from ragmeter._services import Usage\n"
        "from ragmeter.embed._config import X\n"
        "from ._local import Y\n"
        "def later():\n"
        "    import ragmeter.runner._progress\n"
    )
    found = private_imports(root)
    assert [line.split(": ", 1)[1] for line in found] == [
        "ragmeter.judge._cache",
        "ragmeter.judge._cache.Cache",
        "ragmeter.judge._usage",
        "ragmeter.runner._progress",
    ]
