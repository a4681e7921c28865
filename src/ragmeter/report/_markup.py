"""A few helpers to build HTML safely: text is escaped unless it is already markup."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class Markup(str):
    """A string that is already HTML (never escaped again)."""

    __slots__ = ()


def esc(value: object) -> Markup:
    """``value`` as HTML: markup as is, anything else escaped text."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Markup:
    """Parts joined, each escaped unless it is markup; ``None`` is left out."""
    return Markup(sep.join(esc(p) for p in parts if p is not None))


def _flatten(children: Iterable[object]) -> Iterable[object]:
    for child in children:
        if child is None:
            continue
        if isinstance(child, list | tuple):
            yield from _flatten(child)
        else:
            yield child


def attrs(**values: object) -> Markup:
    """HTML attributes; ``class_`` stands for ``class``, ``data_x`` for ``data-x``, and
    ``None`` or ``False`` leaves an attribute out."""
    out = []
    for key, value in values.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        out.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    return Markup("".join(out))


#: HTML elements that have no content and no end tag.
VOID = frozenset({"br", "col", "hr", "img", "input", "link", "meta", "wbr"})


def el(tag: str, *children: object, **attributes: object) -> Markup:
    """``<tag ...>children</tag>``; lists of children are flattened, ``None`` skipped."""
    if tag in VOID:
        return Markup(f"<{tag}{attrs(**attributes)}>")
    body = join(_flatten(children))
    return Markup(f"<{tag}{attrs(**attributes)}>{body}</{tag}>")


def text(value: str, tag: str = "div", **attributes: object) -> Markup:
    """User text in ``tag``, marked ``lang="zh"`` when it holds Chinese (for CJK glyphs)."""
    lang = "zh" if _CJK.search(value) else None
    return el(tag, value, lang=lang, **attributes)


def shorten(value: str, limit: int) -> str:
    """``value`` cut to ``limit`` characters, with an ellipsis when cut."""
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def breakable(name: str) -> Markup:
    """``name`` with line-break opportunities after ``_``, ``@`` and ``.`` (metric names)."""
    return join(re.split(r"(?<=[_@.])", name), sep="<wbr>")


def num(label: object, title: str | None = None) -> Markup:
    """The header cell of a column of numbers (right-aligned), with its ``title``."""
    return el("th", label, class_="num", title=title)


def table(head: Markup, rows: object, *, scroll: bool = False, **attributes: object) -> Markup:
    """A ``<table>`` of the header row ``head`` and the body ``rows``; in a ``<div>`` that
    scrolls sideways when ``scroll``."""
    made = el("table", el("thead", head), el("tbody", rows), **attributes)
    return el("div", made, class_="scroll") if scroll else made


def head_row(*cells: object) -> Markup:
    """A table's header row: a ``<th>`` for each plain text; markup (a :func:`num` cell, a
    ``<th>`` already made) as it is; lists flattened, ``None`` left out."""
    return el("tr", [c if isinstance(c, Markup) else el("th", c) for c in _flatten(cells)])
