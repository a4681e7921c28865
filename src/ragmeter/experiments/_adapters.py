"""What LangChain and LlamaIndex pipelines return, read as a pipeline's outputs.

Neither library is imported: a value is recognised by the module its type (or a base class)
comes from (``langchain*``, ``llama_index``), then read by its attributes, so ``import
ragmeter`` stays light and works whichever of them is installed. A value the adapters do not
recognise is left to :func:`~ragmeter.experiments._outputs.read_outputs` as before (a str,
an object with ``response`` / ``retrieved_contexts`` / ``retrieved_context_ids``).

Retrieval scores, when the value holds them, are kept in the sample's record as the extra
output ``retrieved_context_scores`` (one per context, ``None`` where a hit has none).

LangChain
---------
- ``Document``: ``page_content`` is the context text. Its id is the first of ``Document.id``,
  ``metadata["id"]``, ``metadata["doc_id"]``, ``metadata["document_id"]``, then
  ``metadata["source"]``, followed by ``#`` and the first of ``metadata["chunk"]``,
  ``["chunk_index"]``, ``["start_index"]``, ``["page"]`` when one is set
  (``"guide.pdf#3"``). Either every document of a result has an id or none has (then the
  contexts are returned without ids); a mix is an error. A ``relevance_score`` or ``score``
  in the metadata (rerankers) is kept as the document's score.
- A list of Documents (a retriever's output), or of ``(Document, score)`` pairs
  (``similarity_search_with_score``): the retrieved contexts and ids, in rank order.
- ``AIMessage`` / any ``BaseMessage``: ``.content`` is the response; a content made of
  parts has its text parts joined.
- A chain's dict output, e.g. ``create_retrieval_chain``'s ``{"input", "context",
  "answer"}``: the response is the first of ``response``, ``answer``, ``output``, ``result``,
  ``text`` holding a str or a message; the contexts are ``retrieved_contexts`` or else the
  first of ``context``, ``source_documents``, ``documents``, ``docs`` holding a list of
  documents. The other keys are kept as extra outputs.
- A ``Runnable`` passed to ``experiment`` in place of a function is called with
  ``ainvoke``: with the question (``sample.user_input``) when its input is a string, or
  ``{key: question}`` when its input is an object with one field (``{"input": ...}``).

LlamaIndex
----------
- ``Response`` (and any value with ``response`` and ``source_nodes``): ``.response`` is the
  response, ``.source_nodes`` the retrieved contexts.
- ``NodeWithScore`` (a retriever's output is a list of them) or a node: the text is
  ``node.get_content()``, the id ``node.node_id``, the score ``score``.
- ``StreamingResponse`` / ``AsyncStreamingResponse``: read to its end (within the call's
  timeout), then as a ``Response``.
- A query engine (``aquery``) or a retriever (``aretrieve``) passed to ``experiment`` in
  place of a function is called with the question.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

#: Keys of a chain's dict output read as the response, in this order, after ``response``.
RESPONSE_KEYS: tuple[str, ...] = ("answer", "output", "result", "text")
#: Keys of a chain's dict output read as the retrieved documents, in this order, after
#: ``retrieved_contexts``.
CONTEXT_KEYS: tuple[str, ...] = ("context", "source_documents", "documents", "docs")
#: Metadata keys of a LangChain Document read as its id, in this order, after ``.id``.
ID_KEYS: tuple[str, ...] = ("id", "doc_id", "document_id")
#: Metadata keys giving a chunk's position within its ``source``, in this order.
POSITION_KEYS: tuple[str, ...] = ("chunk", "chunk_index", "start_index", "page")
#: Metadata keys holding a LangChain Document's score (set by rerankers).
SCORE_KEYS: tuple[str, ...] = ("relevance_score", "score")
#: The extra output that keeps the retrieval scores.
SCORES = "retrieved_context_scores"

_OUTPUT_FIELDS = ("response", "retrieved_contexts", "retrieved_context_ids")

Library = Literal["langchain", "llama_index"]


class UnusableValue(ValueError):
    """A LangChain or LlamaIndex value that cannot be read as outputs; the message says why
    and what to return (the caller adds the sample id)."""


@dataclass(frozen=True)
class Adapted:
    """Output fields (not yet type-checked) and the extra outputs kept in the record."""

    fields: dict[str, Any]
    extra: dict[str, Any]


@dataclass(frozen=True)
class _Hit:
    text: str
    id: str | int | None
    score: float | None


def library(value: Any) -> Library | None:
    """The library ``value``'s type (or a base class) comes from."""
    for cls in type(value).__mro__:
        root = str(getattr(cls, "__module__", "") or "").split(".", 1)[0]
        if root.startswith("langchain"):
            return "langchain"
        if root == "llama_index":
            return "llama_index"
    return None


def describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60] + '…' if len(text) > 60 else text}"


def _score(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _document_id(document: Any) -> str | int | None:
    """A LangChain Document's id, in the order the module docstring gives."""
    own = getattr(document, "id", None)
    if isinstance(own, (str, int)) and not isinstance(own, bool) and own != "":
        return own
    metadata = getattr(document, "metadata", None)
    if not isinstance(metadata, Mapping):
        return None
    for key in ID_KEYS:
        value = metadata.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
            return value
    source = metadata.get("source")
    if not isinstance(source, (str, int)) or isinstance(source, bool) or source == "":
        return None
    for key in POSITION_KEYS:
        position = metadata.get(key)
        if position is not None and not isinstance(position, bool):
            return f"{source}#{position}"
    return source


def _hit(item: Any) -> _Hit | None:
    """One retrieved document or node, or None when ``item`` is not one."""
    if isinstance(item, tuple) and len(item) == 2 and _score(item[1]) is not None:
        inner = _hit(item[0])  # (Document, score) from similarity_search_with_score
        return None if inner is None else _Hit(inner.text, inner.id, _score(item[1]))
    found = library(item)
    if found == "langchain":
        text = getattr(item, "page_content", None)
        if not isinstance(text, str):
            return None
        metadata = getattr(item, "metadata", None)
        scores = metadata if isinstance(metadata, Mapping) else {}
        score = next(
            (_score(scores[k]) for k in SCORE_KEYS if _score(scores.get(k)) is not None), None
        )
        return _Hit(text, _document_id(item), score)
    if found == "llama_index":
        node = getattr(item, "node", None)
        if node is not None and hasattr(item, "score"):  # NodeWithScore
            inner = _hit(node)
            return None if inner is None else _Hit(inner.text, inner.id, _score(item.score))
        get_content = getattr(item, "get_content", None)
        node_id = getattr(item, "node_id", None)
        if callable(get_content) and isinstance(node_id, str):
            text = get_content()
            return _Hit(text, node_id or None, None) if isinstance(text, str) else None
    return None


def _hits(value: Any) -> list[_Hit] | None:
    """The retrieved documents or nodes ``value`` lists, or None when it lists something
    else (an empty list is a retrieval that found nothing)."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        return None
    hits = [_hit(item) for item in value]
    return None if any(h is None for h in hits) else [h for h in hits if h is not None]


def _from_hits(hits: list[_Hit]) -> Adapted:
    fields: dict[str, Any] = {"retrieved_contexts": [h.text for h in hits]}
    missing = [rank for rank, h in enumerate(hits, 1) if h.id is None]
    if not missing:
        fields["retrieved_context_ids"] = [h.id for h in hits]
    elif len(missing) < len(hits):
        raise UnusableValue(
            f"retrieved document {missing[0]} of {len(hits)} has no id while others have "
            f"one ({hits[missing[0] - 1].text[:40]!r}): give every document an id "
            f"(Document.id, or metadata {', '.join(ID_KEYS)} or source) or none"
        )
    scores = [h.score for h in hits]
    return Adapted(fields, {SCORES: scores} if any(s is not None for s in scores) else {})


def _message_text(message: Any) -> str:
    """A LangChain message's text: its content, or the text parts of a content in parts."""
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part if isinstance(part, str) else part["text"]
            for part in content
            if isinstance(part, str)
            or (
                isinstance(part, Mapping)
                and part.get("type") == "text"
                and isinstance(part.get("text"), str)
            )
        ]
        if parts:
            return "".join(parts)
    raise UnusableValue(
        f"the {type(message).__name__} returned holds no text (content "
        f"{describe(content)}); return the model's final answer"
    )


def _is_message(value: Any) -> bool:
    return (
        library(value) == "langchain"
        and hasattr(value, "content")
        and not hasattr(value, "page_content")
    )


def plain(value: Any) -> Any:
    """``value`` with the LangChain / LlamaIndex objects in it made plain (documents and
    nodes as ``{"id", "text", "score"}``, messages as their text), for the record."""
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if type(value) is tuple:
        return tuple(plain(item) for item in value)
    if library(value) is None:
        return value
    if _is_message(value):
        try:
            return _message_text(value)
        except UnusableValue:
            return repr(value)
    hit = _hit(value)
    if hit is not None:
        return {"id": hit.id, "text": hit.text, "score": hit.score}
    return value


def _read_mapping(value: Mapping[Any, Any]) -> Adapted:
    """A dict returned by a pipeline or a chain: the output fields, or the keys a chain
    uses for them, and the other keys as extra outputs."""
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    used = set(_OUTPUT_FIELDS)
    for key in ("response", *RESPONSE_KEYS):
        item = value.get(key)
        text = item if isinstance(item, str) else _message_text(item) if _is_message(item) else None
        if (key == "response" and item is not None) or text is not None:
            fields["response"] = item if text is None else text  # a wrong type: checked later
            used.add(key)
            break
    for key in ("retrieved_contexts", *CONTEXT_KEYS):
        item = value.get(key)
        hits = _hits(item)
        if key == "retrieved_contexts" and item is not None and not hits:
            fields[key] = item  # as given, not documents: checked later
            break
        if item is not None and hits is not None:
            adapted = _from_hits(hits)
            fields.update(adapted.fields)
            extra.update(adapted.extra)
            used.add(key)
            break
    if value.get("retrieved_context_ids") is not None:  # given ids win over derived ones
        fields["retrieved_context_ids"] = value["retrieved_context_ids"]
    extra.update({str(k): plain(v) for k, v in value.items() if k not in used})
    return Adapted(fields, extra)


def _llama_response(value: Any) -> Adapted:
    """A LlamaIndex ``Response`` (or ``AgentChatResponse``, ``PydanticResponse``...)."""
    text = value.response
    fields: dict[str, Any] = {}
    if text is not None:
        dump = getattr(text, "model_dump_json", None)  # PydanticResponse: a pydantic model
        fields["response"] = text if isinstance(text, str) else dump() if callable(dump) else text
    if value.source_nodes is None:
        return Adapted(fields, {})
    hits = _hits(value.source_nodes)
    if hits is None:
        raise UnusableValue(
            f"the {type(value).__name__}'s source_nodes are not nodes "
            f"({describe(value.source_nodes)}); return the query engine's response as is"
        )
    adapted = _from_hits(hits)  # none retrieved: empty contexts, scored as such
    return Adapted({**fields, **adapted.fields}, adapted.extra)


def stream(value: Any) -> Literal["sync", "async"] | None:
    """Whether ``value`` is a LlamaIndex streaming response still to read to its end."""
    if library(value) != "llama_index" or not hasattr(value, "response_gen"):
        return None
    get_response = getattr(value, "get_response", None)
    if not callable(get_response):
        return None
    return "async" if inspect.iscoroutinefunction(get_response) else "sync"


def adapt(value: Any) -> Adapted | None:
    """The outputs in a dict, or in a LangChain / LlamaIndex value; None for any other value
    (left to the caller)."""
    if isinstance(value, Mapping):  # a chain's output is a dict (or LangChain's AddableDict)
        return _read_mapping(value)
    hits = _hits(value)
    if hits is not None:
        return _from_hits(hits)
    found = library(value)
    if found is None:
        return None
    if _is_message(value):
        return Adapted({"response": _message_text(value)}, {})
    hit = _hit(value)
    if hit is not None:
        return _from_hits([hit])
    kind = stream(value)
    if kind == "sync":
        return adapt(value.get_response())  # a sync stream read to its end
    if kind == "async":
        raise UnusableValue(
            f"the pipeline returned an unread {type(value).__name__}: await its "
            "get_response() and return that"
        )
    if found == "llama_index" and hasattr(value, "response") and hasattr(value, "source_nodes"):
        return _llama_response(value)
    return None


# -- a Runnable, query engine or retriever passed in place of a function -------------------


def _question(sample: Any) -> str:
    question = getattr(sample, "user_input", None)
    if not isinstance(question, str) or not question:
        raise ValueError(
            f"sample {getattr(sample, 'id', None)!r} has no user_input: the pipeline is "
            "called with the sample's question"
        )
    return question


def _input_key(runnable: Any) -> str | None:
    """The one field of a Runnable's object input (``"input"`` for a retrieval chain), or
    None when it takes the question itself."""
    try:
        schema = runnable.get_input_jsonschema()
    except Exception:  # noqa: BLE001 - some runnables cannot describe their input: a string
        return None
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        return None
    properties = schema.get("properties") or {}
    names = list(schema.get("required") or properties)
    if len(names) != 1:
        raise TypeError(
            f"the {runnable.get_name()} passed to experiment takes {sorted(properties)}, "
            "not one question: pass a function that builds its input instead, e.g. "
            "def rag(sample): return chain.invoke({...: sample.user_input, ...})"
        )
    return str(names[0])


def as_pipeline(obj: Any) -> Callable[..., Any] | None:
    """A pipeline function calling ``obj`` with a sample's question when ``obj`` is a
    LangChain Runnable, or a LlamaIndex query engine or retriever; None otherwise."""
    found = library(obj)
    if found is None:
        return None
    if found == "langchain" and callable(getattr(obj, "ainvoke", None)):
        key = _input_key(obj)
        get_name = getattr(obj, "get_name", None)
        name = str(get_name()) if callable(get_name) else type(obj).__name__

        async def call(sample: Any) -> Any:
            question = _question(sample)
            return await obj.ainvoke(question if key is None else {key: question})

    elif found == "llama_index" and callable(getattr(obj, "aquery", None)):
        name = type(obj).__name__

        async def call(sample: Any) -> Any:
            return await obj.aquery(_question(sample))

    elif found == "llama_index" and callable(getattr(obj, "aretrieve", None)):
        name = type(obj).__name__

        async def call(sample: Any) -> Any:
            return await obj.aretrieve(_question(sample))

    else:
        return None
    call.__name__ = call.__qualname__ = name
    call.__module__ = type(obj).__module__
    call.__doc__ = f"Calls the {name} with the sample's question."
    call.__wrapped__ = obj  # type: ignore[attr-defined]
    return call
