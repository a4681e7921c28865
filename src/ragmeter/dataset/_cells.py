"""Cells of tabular formats that hold a list or an object as text.

ragmeter writes such cells as JSON. pandas (``df.to_csv()``, how RAGAS results are usually
exported) writes the Python repr instead: ``['c1', 'c2']``, and numpy arrays as
``['c1' 'c2']`` (no commas). A cell that is not JSON is read as a Python literal with
:func:`ast.literal_eval` (never ``eval``), numpy's comma-less form included, and kept only
when it has the shape its field expects; otherwise it stays text and validation says why.
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import tokenize
from typing import Any

#: Fields whose cells hold a list of ids, or an object; the other list fields hold texts.
ID_LIST_FIELDS = frozenset({"retrieved_context_ids", "reference_context_ids"})
OBJECT_FIELDS = frozenset({"relevance", "metadata"})

#: Longer cells are not read as Python literals (the parser's memory grows with them).
MAX_LITERAL_CHARS = 10_000_000

_VALUES = (tokenize.STRING, tokenize.NUMBER)
_UNQUOTED = "neither JSON nor a Python list: it holds unquoted words (quote each text)"


def _with_numpy_commas(text: str) -> tuple[str, bool]:
    """``text`` with a comma between values that only whitespace separates, as numpy writes
    an array (``['a' 'b']``, ``[3 7]``; Python would join the strings into one), and whether
    it holds a name (an unquoted word). Raises ``tokenize.TokenError`` for an unclosed
    quote or bracket."""
    inserts: list[int] = []
    starts = [0, *itertools.accumulate(len(line) for line in text.splitlines(keepends=True))]
    previous: tokenize.TokenInfo | None = None
    named = False
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            continue
        if token.type == tokenize.NAME and token.string not in ("True", "False", "None"):
            named = True
        if previous is not None and previous.type in _VALUES and token.type in _VALUES:
            row, col = previous.end
            inserts.append(starts[row - 1] + col)
        previous = token
    for offset in reversed(inserts):
        text = text[:offset] + "," + text[offset:]
    return text, named


def literal(text: str) -> tuple[Any, str | None]:
    """The Python literal ``text`` holds, or why it holds none."""
    if len(text) > MAX_LITERAL_CHARS:
        return None, "too long to read as a list"
    try:
        fixed, named = _with_numpy_commas(text)
        if named:
            return None, _UNQUOTED
        return ast.literal_eval(fixed), None
    except tokenize.TokenError:
        return None, "neither JSON nor a Python list: a quote or a bracket is not closed"
    except SyntaxError:
        return None, "neither JSON nor a Python list: check its commas, quotes and brackets"
    except (ValueError, TypeError):  # a call, an operator...
        return None, (
            "neither JSON nor a Python list: it holds something other than quoted texts and numbers"
        )
    except (RecursionError, MemoryError):
        return None, "nested too deeply to read"


def _shape_problem(value: Any, field: str) -> str | None:
    """What is wrong with ``value`` as the value of ``field``; None when it fits."""
    if field in OBJECT_FIELDS:
        return (
            None if isinstance(value, dict) else f"it holds a {type(value).__name__}, not an object"
        )
    if not isinstance(value, list | tuple):
        return f"it holds a {type(value).__name__}, not a list"
    if field == "history":  # messages: validation names a wrong one
        return None
    allowed: tuple[type, ...] = (str, int) if field in ID_LIST_FIELDS else (str,)
    for item in value:
        if isinstance(item, bool) or not isinstance(item, allowed):
            kind = "texts or integers" if field in ID_LIST_FIELDS else "texts"
            return f"its items must be {kind}, not {type(item).__name__} ({item!r:.40})"
    return None


def decode_cell(text: str, field: str) -> tuple[Any, str | None]:
    """The list or object a cell of ``field`` holds, from JSON or else a Python literal.

    Returns ``(value, None)``, or ``(None, reason)`` when the text is no JSON and no Python
    literal of the field's shape (the caller keeps the text; validation reports it with
    ``reason``); ``(None, None)`` for text that does not start like a list or an object.

    >>> decode_cell("['c1', \\"it's\\"]", "retrieved_contexts")
    (['c1', "it's"], None)
    >>> decode_cell("['a' 'b']", "retrieved_contexts")  # numpy's repr of an array
    (['a', 'b'], None)
    >>> decode_cell("('a', 1)", "retrieved_contexts")[1]
    'its items must be texts, not int (1)'
    """
    stripped = text.strip()
    if stripped[:1] not in ("[", "{", "("):
        return None, None
    try:
        return json.loads(stripped), None  # validation names a wrong item of a JSON list
    except (ValueError, RecursionError):
        value, reason = literal(stripped)
    if reason is not None:
        return None, reason
    problem = _shape_problem(value, field)
    if problem is not None:
        return None, problem
    return (list(value) if isinstance(value, tuple) else value), None


def looks_like_a_list(text: str) -> bool:
    """Whether a cell's text was meant as a list (so the fix is not to wrap it in one)."""
    stripped = text.strip()
    return stripped[:1] in ("[", "(") and stripped[-1:] in ("]", ")")
