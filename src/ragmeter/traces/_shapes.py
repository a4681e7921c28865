"""Reading the free-form values of Langfuse and LangSmith exports: files of records, times,
questions and answers inside message lists or objects, retrieved documents.

Neither tool fixes the shape of an input, an output or a list of documents; these helpers
recognise the shapes their SDKs and integrations record (chat messages, LangChain's
serialized messages and ``Document`` objects, ``{"question": ...}`` objects) so that each
format module only says which value holds what.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

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


def read_records(path: Path, *, list_keys: Sequence[str] = ("data",)) -> Iterator[tuple[str, Any]]:
    """Each record of an export file, with where it came from (``file, line N``, ``record N``
    or ``row N``).

    ``.csv`` and ``.parquet``: one record a row (cells holding JSON text are decoded by the
    caller with :func:`decode_cell`). Any other file is JSON: a list of records, an object
    holding the list under one of ``list_keys`` (an API page's ``{"data": [...], "meta":
    {...}}``), or one record; or JSON lines, one record a line.
    """
    if not path.is_file():
        raise TraceFileError(f"{path}: no such file; give the path of an export file")
    if path.suffix.lower() == ".parquet":
        for n, row in enumerate(parquet_rows(path), start=1):
            yield f"{path}, row {n}", row
        return
    try:
        if path.suffix.lower() == ".csv":
            with path.open(encoding="utf-8-sig", newline="") as handle:
                rows = list(csv.DictReader(handle))
            for n, row in enumerate(rows, start=1):
                yield f"{path}, row {n}", dict(row)
            return
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise TraceFileError(
            f"{path}: not UTF-8 text ({error.reason}); give the export as it was downloaded "
            "(JSON, JSON lines or CSV)"
        ) from None
    try:
        data = json.loads(text) if text.strip() else []
    except json.JSONDecodeError as error:
        lines = [line for line in text.splitlines() if line.strip()]
        if len(lines) < 2:
            raise TraceFileError(
                f"{path}, line {error.lineno}: not valid JSON ({error.msg}); give the export "
                "as it was downloaded (a JSON list or object, or one JSON object a line)"
            ) from None
        # every line is read before the first record is given
        yield from list(
            json_lines(
                path,
                text,
                "give one JSON object a line (JSON lines), or one JSON list or object",
                column=True,
            )
        )
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


def parquet_rows(path: Path, fix: str = "give the file as it was exported") -> list[dict[str, Any]]:
    """The rows of a Parquet file (LangSmith's bulk export, a Phoenix span dataframe),
    pyarrow imported only here; an unreadable file says ``fix``."""
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


def json_lines(
    path: Path, text: str, expected: str, *, column: bool = False
) -> Iterator[tuple[str, Any]]:
    """``(where, value)`` for each non-blank line of ``text`` (JSON lines read from ``path``);
    a line that is not JSON is an error naming it (and the ``column``, if asked), then saying
    what is ``expected``."""
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"{path}, line {n}", json.loads(line)
        except json.JSONDecodeError as error:
            at = f", column {error.colno}" if column else ""
            raise TraceFileError(
                f"{path}, line {n}: not valid JSON ({error.msg}{at}); {expected}"
            ) from None


def decode_cell(value: Any) -> Any:
    """A CSV cell as the JSON value it holds (objects, lists, numbers), empty as None."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text:
        return None
    if text[0] in "[{" or text in ("null", "true", "false"):
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return value
    return value


# -- scalars -----------------------------------------------------------------------------------


def parse_time(value: Any) -> dt.datetime | None:
    """An ISO 8601 time (``Z`` or an offset; naive times are UTC), epoch seconds or
    milliseconds (the JS SDKs'), or a datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):  # a Parquet timestamp column
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        return dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc)
    if isinstance(value, str):
        text = value.strip().replace(" ", "T", 1) if "T" not in value else value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)
    return None


def as_int(value: Any) -> int | None:
    """A token count: an int, or a float or text holding a whole number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


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
        if found is not None:
            return found
        return content_text(messages[-1].get("content"))
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
    out: list[Document] = []
    for item in value:
        doc = _document(item)
        if doc is None:
            return None
        out.append(doc)
    return out


def _document(item: Any) -> Document | None:
    if isinstance(item, str):
        return Document(content=item)
    if isinstance(item, list | tuple) and len(item) == 2 and as_float(item[1]) is not None:
        # similarity_search_with_score: (Document, score)
        doc = _document(item[0])
        if doc is None:
            return None
        return Document(content=doc.content, id=doc.id, score=as_float(item[1]))
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
