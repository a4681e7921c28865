"""Reading the free-form values of Langfuse and LangSmith exports: files of records, times,
questions and answers inside message lists or objects, retrieved documents.

Neither tool fixes the shape of an input, an output or a list of documents; these helpers
recognise the shapes their SDKs and integrations record (chat messages, LangChain's
serialized messages and ``Document`` objects, ``{"question": ...}`` objects) so that each
format module only says which value holds what.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import itertools
import json
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragmeter._services import check_regular_file
from ragmeter.dataset import parse_json_line, read_csv_rows
from ragmeter.traces._build import as_utc
from ragmeter.traces._compression import open_export
from ragmeter.traces._span import Document, TraceFileError

#: Keys under which an input object holds the question, most specific first.
QUESTION_KEYS: tuple[str, ...] = (
    "question",
    "user_input",
    "query",
    "input",
    "prompt",
    "prompts",
    "message",
    "messages",
    "text",
    "content",
)
#: Keys under which an output object holds the answer, most specific first.
ANSWER_KEYS: tuple[str, ...] = (
    "answer",
    "response",
    "output",
    "result",
    "text",
    "content",
    "message",
    "messages",
    "choices",
    "generations",
)
#: Keys under which an object holds a list of retrieved documents.
DOCUMENT_LIST_KEYS: tuple[str, ...] = (
    "documents",
    "docs",
    "context",
    "contexts",
    "results",
    "nodes",
    "source_nodes",
    "output",
)
_CONTENT_KEYS = ("page_content", "pageContent", "content", "text", "document", "chunk")
_ID_KEYS = ("id", "doc_id", "document_id", "chunk_id", "node_id", "id_")
# A reranker's relevance_score first: a reranked document keeps its retrieval score too.
_SCORE_KEYS = ("relevance_score", "score", "similarity", "similarity_score", "_score")
_ROLE_OF_TYPE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}
_ROLE_OF_CLASS = {
    "HumanMessage": "user",
    "HumanMessageChunk": "user",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
}
_USER_ROLES = frozenset({"user", "human"})
_ASSISTANT_ROLES = frozenset({"assistant", "ai", "model"})


# -- files -------------------------------------------------------------------------------------

#: Span names that read as a retrieval (a chain or tool span returning documents).
RETRIEVAL_NAME = re.compile(r"retriev|search|vector|similarity|knowledge|lookup", re.IGNORECASE)


EXPORT_FIX = "give the export file itself (JSON, JSON lines, CSV or Parquet), as it was downloaded"


def check_export(path: Path) -> None:
    """Refuse a path that is not a regular file before opening it (a FIFO would block, a link
    to ``/dev/zero`` read forever); a missing file is ``FileNotFoundError`` (exit 4)."""
    try:
        check_regular_file(path, what="trace export file", fix=EXPORT_FIX)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path)) from None
    except ValueError as error:
        raise TraceFileError(str(error)) from None


#: What :func:`read_json` gives as ``where`` for a file that is one JSON document.
DOCUMENT = None
FLATTEN_FIX = "export the traces again: no tracing tool nests a record that deep"
NOT_UTF8_FIX = "give JSON or JSON lines as exported (a Parquet file's name must end in .parquet)"


def read_json(path: Path, expected: str) -> Iterator[tuple[str | None, Any]]:
    """A JSON export: ``(DOCUMENT, value)`` once for a file that is one JSON document (``[]``
    for an empty one), else ``(where, value)`` for each line of a JSON lines file, read a line
    at a time (the file's text is never held whole). A line that is not JSON, nesting too
    deep, a number too long or bytes that are not UTF-8 are an error naming the file and the
    line, then saying what is ``expected``."""
    check_export(path)
    with open_export(path) as handle:  # gzip, zstd, the collector's framing: decompressed
        lines = ((n, _utf8(path, n, raw)) for n, raw in enumerate(handle, start=1))
        first = next(((n, line) for n, line in lines if line.strip()), None)
        if first is None:
            yield DOCUMENT, []
            return
        value, message, _ = parse_json_line(first[1])
        second = None if message else next(((n, x) for n, x in lines if x.strip()), None)
        if second is None:  # one document, over one line or many
            rest = "".join(line for _, line in lines)
            yield DOCUMENT, _whole_document(path, first[1] + rest, expected)
            return
        yield f"{path}, line {first[0]}", value
        for number, line in itertools.chain([second], lines):
            if line.strip():
                yield _json_line(path, number, line, expected)


def _utf8(path: Path, number: int, raw: bytes) -> str:
    """Line ``number`` of ``path`` as text (a UTF-8 byte-order mark left out)."""
    try:
        return raw.decode("utf-8-sig" if number == 1 else "utf-8")
    except UnicodeDecodeError as error:
        raise TraceFileError(
            f"{path}, line {number}: not UTF-8 text ({error.reason} at byte {error.start} of "
            f"the line); {NOT_UTF8_FIX}"
        ) from None


def _json_line(path: Path, number: int, line: str, expected: str) -> tuple[str, Any]:
    value, message, _ = parse_json_line(line)
    if message is not None:
        raise TraceFileError(f"{path}, line {number}: {message}; {expected}")
    return f"{path}, line {number}", value


def _whole_document(path: Path, text: str, expected: str) -> Any:
    """``text``, the whole of ``path``, as one JSON document; when it is none, the error
    names its first line that is not JSON (nesting too deep or a number too long: the file)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    except RecursionError:
        if len(text.strip().splitlines()) < 2:
            raise TraceFileError(f"{path}: JSON nested too deeply to read; {FLATTEN_FIX}") from None
    except ValueError as error:  # an integer of more than 4300 digits
        raise TraceFileError(f"{path}: {error}; write very long numbers as strings") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            _json_line(path, number, line, expected)  # raises for the first that is not JSON
    raise TraceFileError(f"{path}: not one JSON document; {expected}")  # a value split over lines


def read_records(path: Path, *, list_keys: Sequence[str] = ("data",)) -> Iterator[tuple[str, Any]]:
    """Each record of an export file, with where it came from (``file, line N``, ``record N``
    or ``row N``).

    ``.csv`` and ``.parquet``: one record a row (cells holding JSON text are decoded by the
    caller with :func:`decode_cell`). Any other file is JSON: a list of records, an object
    holding the list under one of ``list_keys`` (an API page's ``{"data": [...], "meta":
    {...}}``), or one record; or JSON lines, one record a line.
    """
    check_export(path)
    if path.suffix.lower() == ".parquet":
        for n, row in enumerate(parquet_rows(path), start=1):
            yield f"{path}, row {n}", row
        return
    if path.suffix.lower() == ".csv":
        yield from csv_records(path)
        return
    expected = "give one JSON object a line (JSON lines), or one JSON list or object"
    values = read_json(path, expected)
    where, data = next(values)
    if where is not DOCUMENT:
        yield where, data
        yield from ((str(at), value) for at, value in values)
        return
    if isinstance(data, Mapping):
        for key in list_keys:
            if isinstance(data.get(key), list):
                data = data[key]
                break
    if isinstance(data, list):
        for n, record in enumerate(data, start=1):
            yield f"{path}, record {n}", record
    else:
        yield str(path), data


def csv_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """The rows of a CSV export, read as ``ragmeter eval`` reads CSV (cells of any size, any
    UTF encoding); a row that does not read (a quote never closed, more cells than the
    header, bytes that do not decode) is an error naming it, never swallowed."""
    records, rows, problems = read_csv_rows(path)
    if problems:
        first = problems[0]
        raise TraceFileError(
            f"{path}, row {first.row}: {first.message}; fix: {first.fix}"
            + (f" ({len(problems) - 1} more row(s) with problems)" if len(problems) > 1 else "")
        )
    for row, record in zip(rows, records, strict=True):
        yield f"{path}, row {row}", record


def parquet_rows(path: Path, fix: str = "give the file as it was exported") -> list[dict[str, Any]]:
    """The rows of a Parquet file (LangSmith's bulk export, a Phoenix span dataframe),
    pyarrow imported only here; an unreadable file says ``fix``."""
    check_export(path)
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            "reading Parquet exports needs pyarrow: pip install 'ragmeter[parquet]'"
        ) from None
    try:
        rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    except (OSError, ValueError) as error:
        raise TraceFileError(f"{path}: not a readable Parquet file ({error}); {fix}") from None
    return rows


def decode_cell(value: Any) -> Any:
    """A CSV cell as the JSON value it holds (objects, lists, numbers), empty as None."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    if text[0] in "[{" or text in ("null", "true", "false"):
        decoded, message, _ = parse_json_line(text)
        return value if message is not None else decoded
    return value


# -- scalars -----------------------------------------------------------------------------------


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
#: Epoch units by their size in a second; a number is read in the first unit in which it is
#: after 1973 (1e8 s), so seconds, milliseconds, micro- and nanoseconds are told apart.
_UNITS = {"ns": 10**9, "us": 10**6, "ms": 10**3, "s": 1}
TIME_FIX = (
    "give an ISO 8601 time (2026-01-31T14:00:00Z, or with an offset: it is converted to UTC) "
    "or a number since the epoch (seconds, milliseconds, micro- or nanoseconds)"
)


def parse_time(value: Any, *, unit: str | None = None) -> dt.datetime | None:
    """A time in UTC: ISO 8601 text (``Z`` or an offset, converted; naive times are UTC), a
    datetime (a Parquet or pandas timestamp), or a number since the epoch (text of digits
    too), in ``unit`` (``"s"``, ``"ms"``, ``"us"``, ``"ns"``) or, without one, the unit its
    size says. ``None`` and ``""`` are no time; anything else that is not a time (text that
    does not read, NaN, infinity, a year out of 1..9999) is a ``ValueError`` saying why."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return as_utc(value)
    if hasattr(value, "to_pydatetime"):  # a pandas Timestamp that is not a datetime
        return as_utc(value.to_pydatetime())
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            return _epoch(int(text), value, unit)
        text = text.replace(" ", "T", 1) if "T" not in text else text
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            return as_utc(dt.datetime.fromisoformat(text))
        except ValueError:
            raise ValueError(f"not a time: {_shown(value)}") from None
        except OverflowError:  # an offset that takes it past year 1 or 9999
            raise ValueError(f"time {_shown(value)} is out of range in UTC") from None
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise ValueError(f"not a time: {value!r}")
        return _epoch(value, value, unit)
    raise ValueError(f"not a time: {type(value).__name__} {_shown(value)}")


def _epoch(number: float, given: Any, unit: str | None) -> dt.datetime:
    if unit is None:
        unit = next((u for u, size in _UNITS.items() if abs(number) > size * 1e8), "s")
    size = _UNITS[unit]
    try:
        if isinstance(number, int):  # exact: nanoseconds keep their microseconds
            return _EPOCH + dt.timedelta(microseconds=number * 10**6 // size)
        return _EPOCH + dt.timedelta(seconds=number / size)
    except OverflowError:
        raise ValueError(
            f"time {_shown(given)} ({unit} since the epoch) is out of range (years 1 to 9999)"
        ) from None


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@contextlib.contextmanager
def reading(where: str) -> Iterator[None]:
    """What goes wrong reading one record (a value that is not what its field should be,
    nesting too deep to follow) as one :class:`TraceFileError` naming ``where``."""
    try:
        yield
    except TraceFileError:
        raise
    except RecursionError:
        raise TraceFileError(f"{where}: nested too deeply to read; {FLATTEN_FIX}") from None
    except (ValueError, OverflowError) as error:
        raise TraceFileError(f"{where}: {error}") from None


def time_field(
    record: Mapping[str, Any], key: str, *, unit: str | None = None
) -> dt.datetime | None:
    """``record[key]`` read with :func:`parse_time`; a value that is not a time is a
    ``ValueError`` naming the field and the fix."""
    try:
        return parse_time(record.get(key), unit=unit)
    except ValueError as error:
        raise ValueError(f"field {key!r}: {error}; {TIME_FIX}") from None


def as_int(value: Any, name: str = "") -> int | None:
    """A token count: an int, or a float or text holding a whole number; ``None`` for none.
    Anything else (a fraction, a negative count, NaN, infinity, text that is no number) is a
    ``ValueError`` saying why."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    field = f"field {name!r}: " if name else ""
    raise ValueError(f"{field}not a token count: {_shown(value)}; give a whole number of tokens")


def as_float(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def as_str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else str(value)


# -- messages, questions and answers ---------------------------------------------------------


def _lc_kwargs(value: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """A LangChain-serialized object (``{"lc": 1, "id": [..., "HumanMessage"], "kwargs":
    {...}}``): its class name and its fields; any other object as it is."""
    if value.get("lc") is not None and isinstance(value.get("kwargs"), Mapping):
        ids = value.get("id")
        cls = ids[-1] if isinstance(ids, list) and ids and isinstance(ids[-1], str) else None
        return cls, value["kwargs"]
    return None, value


def message_role(value: Any) -> str | None:
    """The role of a chat message (OpenAI ``role``, LangChain ``type`` or class), else None."""
    if not isinstance(value, Mapping):
        return None
    cls, fields = _lc_kwargs(value)
    if cls in _ROLE_OF_CLASS:
        return _ROLE_OF_CLASS[cls]
    role = fields.get("role")
    if isinstance(role, str) and "content" in fields:
        return role.lower()
    kind = fields.get("type")
    if isinstance(kind, str) and kind in _ROLE_OF_TYPE and "content" in fields:
        return _ROLE_OF_TYPE[kind]
    return None


def content_text(content: Any) -> str | None:
    """A message's content: text, or the text parts of a multi-part content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p if isinstance(p, str) else p.get("text")
            for p in content
            if isinstance(p, str) or (isinstance(p, Mapping) and isinstance(p.get("text"), str))
        ]
        return "".join(str(p) for p in parts) if parts else None
    return None


def _messages(value: Any) -> list[Mapping[str, Any]] | None:
    """A chat message list (LangChain nests one list per prompt: the first is taken)."""
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list):
        value = value[0]
    if isinstance(value, list) and value and all(message_role(m) for m in value):
        return [_lc_kwargs(m)[1] for m in value]
    return None


def _last_of(messages: list[Mapping[str, Any]], roles: frozenset[str]) -> str | None:
    for message in reversed(messages):
        if message_role(message) in roles or _role_name(message) in roles:
            return content_text(message.get("content"))
    return None


def _role_name(message: Mapping[str, Any]) -> str | None:
    role = message.get("role") or _ROLE_OF_TYPE.get(str(message.get("type")))
    return role.lower() if isinstance(role, str) else None


def question_text(value: Any) -> str | None:
    """The question a span's input holds: text, the last user message of a chat, or the
    text under a question key of an object (see :data:`QUESTION_KEYS`); an object without
    one is kept as its JSON text, so nothing is lost."""
    if isinstance(value, Mapping) and value and set(value) <= {"args", "kwargs"}:
        # Langfuse's @observe records a function's arguments: {"args": [...], "kwargs": {...}}
        kwargs, args = value.get("kwargs"), value.get("args")
        if isinstance(kwargs, Mapping):
            for key in QUESTION_KEYS:
                if isinstance(kwargs.get(key), str):
                    return str(kwargs[key])
        if isinstance(args, list):
            for arg in args:
                if isinstance(arg, str):
                    return arg
    return _text(value, QUESTION_KEYS, _USER_ROLES, depth=0)


def answer_text(value: Any) -> str | None:
    """The answer a span's output holds: text, the last assistant message, an OpenAI
    ``choices`` or LangChain ``generations`` list, or the text under an answer key."""
    return _text(value, ANSWER_KEYS, _ASSISTANT_ROLES, depth=0)


def _text(value: Any, keys: tuple[str, ...], roles: frozenset[str], depth: int) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    if depth > 4:
        return json.dumps(value, ensure_ascii=False, default=str)
    messages = _messages(value)
    if messages is not None:
        found = _last_of(messages, roles)
        return found if found is not None else content_text(messages[-1].get("content"))
    if isinstance(value, Mapping):
        _, fields = _lc_kwargs(value)
        if message_role(value) is not None:
            return content_text(fields.get("content"))
        for key in keys:
            if key in fields and fields[key] is not None:
                found = _text_of_key(key, fields[key], keys, roles, depth)
                if found is not None:
                    return found
    if isinstance(value, list) and len(value) == 1:
        return _text(value[0], keys, roles, depth + 1)
    return json.dumps(value, ensure_ascii=False, default=str)


def _text_of_key(
    key: str, value: Any, keys: tuple[str, ...], roles: frozenset[str], depth: int
) -> str | None:
    if key == "choices" and isinstance(value, list) and value:
        # OpenAI chat completions: choices[0].message.content (or .text for completions)
        first = value[0]
        if isinstance(first, Mapping):
            if isinstance(first.get("message"), Mapping):
                return content_text(first["message"].get("content"))
            if isinstance(first.get("text"), str):
                return str(first["text"])
        return None
    if key == "generations" and isinstance(value, list) and value:
        # LangChain LLMResult: generations[0][0].text (or .message.kwargs.content)
        first = value[0][0] if isinstance(value[0], list) and value[0] else value[0]
        if isinstance(first, Mapping):
            if isinstance(first.get("text"), str) and first["text"]:
                return str(first["text"])
            if isinstance(first.get("message"), Mapping):
                return _text(first["message"], keys, roles, depth + 1)
        return None
    return _text(value, keys, roles, depth + 1)


# -- documents ---------------------------------------------------------------------------------


def documents(value: Any) -> list[Document] | None:
    """The retrieved documents a value holds, in order, or None if it holds no such list.

    Recognised: a list of texts; a list of objects with ``page_content`` / ``content`` /
    ``text`` (LangChain's ``Document`` as its callbacks serialize it, plain or
    ``{"lc": 1, ...}``; LlamaIndex's ``{"node": {...}, "score": ...}``), with an id in
    ``id`` or ``metadata.id`` (and the like) and a score in ``score`` or
    ``metadata.score``; ``[document, score]`` pairs; and an object holding such a list
    under one of :data:`DOCUMENT_LIST_KEYS`.
    """
    return _documents(value, depth=0)


def _documents(value: Any, depth: int) -> list[Document] | None:
    if depth > 3:
        return None
    if isinstance(value, Mapping):
        for key in DOCUMENT_LIST_KEYS:
            if key in value:
                found = _documents(value[key], depth + 1)
                if found is not None:
                    return found
        return None
    if not isinstance(value, list):
        return None
    docs = [_document(item) for item in value]
    return None if None in docs else [doc for doc in docs if doc is not None]


def _document(item: Any) -> Document | None:
    if isinstance(item, str):
        return Document(content=item)
    if isinstance(item, list | tuple) and len(item) == 2 and as_float(item[1]) is not None:
        # similarity_search_with_score: (Document, score)
        doc = _document(item[0])
        return None if doc is None else replace(doc, score=as_float(item[1]))
    if not isinstance(item, Mapping):
        return None
    _, fields = _lc_kwargs(item)
    score = _first(fields, _SCORE_KEYS, as_float)
    if isinstance(fields.get("node"), Mapping):  # LlamaIndex NodeWithScore
        fields = {**fields["node"], **({"score": score} if score is not None else {})}
    content = _first(fields, _CONTENT_KEYS, lambda v: v if isinstance(v, str) else None)
    metadata = fields.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    if content is None:
        return None
    doc_id = _first(fields, _ID_KEYS, as_str) or _first(metadata, _ID_KEYS, as_str)
    if score is None:
        score = _first(metadata, _SCORE_KEYS, as_float)
    return Document(content=content, id=doc_id, score=score)


def _first(fields: Mapping[str, Any], keys: Sequence[str], convert: Any) -> Any:
    for key in keys:
        if key in fields:
            value = convert(fields[key])
            if value is not None:
                return value
    return None


def is_document_list(value: Any) -> bool:
    """Whether a value is unmistakably a list of LangChain ``Document`` objects (so that a
    span returning it is a retrieval, whatever its name)."""
    if isinstance(value, Mapping):
        value = value.get("documents")
    if not isinstance(value, list) or not value:
        return False
    for item in value:
        if not isinstance(item, Mapping):
            return False
        cls, fields = _lc_kwargs(item)
        if not (
            cls == "Document"
            or fields.get("type") == "Document"
            or "page_content" in fields
            or "pageContent" in fields
        ):
            return False
    return documents(value) is not None
