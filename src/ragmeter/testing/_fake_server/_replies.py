"""Scripted answers: what the chat, embeddings and models endpoints reply."""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import struct
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Union

from ragmeter.testing._fake_server._faults import DEFAULT_MALFORMED_CONTENT, Fault
from ragmeter.testing._fake_server._tokens import content_text, logprobs_content, tokenize

Responder = Callable[[dict[str, Any]], Union["ScriptedReply", str, dict[str, Any]]]
Embedder = Callable[[str], Sequence[float]]


@dataclass(frozen=True)
class ScriptedReply:
    """What the fake chat endpoint answers.

    ``content`` is the message text (or the tool-call arguments when the request has
    ``tools``); ``finish_reason`` is reported as is. ``p_yes`` is the probability reported in
    logprobs for the positive alternative (``yes``/``1``) of every yes/no/0/1 token of the
    reply, the negative one getting ``1 - p_yes``; ``None`` gives the emitted token
    :data:`DEFAULT_BINARY_CONFIDENCE`.
    """

    content: str
    finish_reason: str = "stop"
    p_yes: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.content, str):
            raise TypeError(f"ScriptedReply.content must be a str, got {type(self.content)}")
        if self.p_yes is not None and not 0.0 <= self.p_yes <= 1.0:
            raise ValueError(f"ScriptedReply.p_yes must be in [0, 1], got {self.p_yes}")


def reply_for(responder: Responder | None, body: dict[str, Any]) -> ScriptedReply:
    """The responder's answer to a chat request, as a :class:`ScriptedReply`."""
    if responder is None:
        return ScriptedReply("{}")
    reply = responder(body)
    if isinstance(reply, ScriptedReply):
        return reply
    if isinstance(reply, str):
        return ScriptedReply(reply)
    if isinstance(reply, dict):
        return ScriptedReply(json.dumps(reply, ensure_ascii=False))
    raise TypeError(f"responder returned {type(reply).__name__}; expected ScriptedReply/str/dict")


def embedding_for(text: str, dimensions: int = 8) -> list[float]:
    """The built-in embedding of ``text``: a unit vector whose components come from
    SHA-256 of the text (same text, same vector, across runs and platforms)."""
    values: list[float] = []
    for block in itertools.count():
        digest = hashlib.sha256(f"{block}\x00{text}".encode()).digest()
        for i in range(0, len(digest), 4):
            values.append(int.from_bytes(digest[i : i + 4], "big") / 2**31 - 1.0)
        if len(values) >= dimensions:
            break
    values = values[:dimensions]
    norm = math.sqrt(sum(v * v for v in values)) or 1.0
    return [v / norm for v in values]


def models_payload(model: str, created: int) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": model, "object": "model", "created": created, "owned_by": "fake"}],
    }


def answer_text(text: str, fault: Fault | None, limit: object) -> tuple[str, list[str], bool]:
    """The answer ``text`` as the server sends it (on every endpoint): changed by a content
    fault, cut at ``limit`` tokens (when that is a count); its tokens, and whether it was
    cut off."""
    cut = fault is not None and fault.kind == "truncated"
    if fault is not None and fault.kind == "malformed_json":
        text = fault.content if fault.content is not None else DEFAULT_MALFORMED_CONTENT
    elif fault is not None and cut:
        text = text[: min(int(len(text) * fault.keep_fraction), max(len(text) - 1, 0))]
    tokens = tokenize(text)
    if isinstance(limit, int) and limit >= 0 and len(tokens) > limit:
        tokens = tokens[:limit]
        text = "".join(tokens)
        cut = True
    return text, tokens, cut


def chat_payload(
    body: dict[str, Any],
    reply: ScriptedReply,
    fault: Fault | None,
    *,
    model: str,
    report_usage: bool,
    ids: Iterator[int],
) -> dict[str, Any]:
    """The chat completion answering ``body`` with ``reply``, changed by a content fault."""
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    content, tokens, cut = answer_text(reply.content, fault, limit)
    finish_reason = "length" if cut else reply.finish_reason

    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    tools = body.get("tools")
    tool_choice = body.get("tool_choice")
    if isinstance(tools, list) and tools and tool_choice != "none":
        name = None
        if isinstance(tool_choice, dict):
            name = (tool_choice.get("function") or {}).get("name")
        if name is None:
            first = tools[0] if isinstance(tools[0], dict) else {}
            name = (first.get("function") or {}).get("name", "function")
        message["content"] = None
        message["tool_calls"] = [
            {
                "id": f"call_fake_{next(ids)}",
                "type": "function",
                "function": {"name": name, "arguments": content},
            }
        ]
        if finish_reason == "stop":
            finish_reason = "tool_calls"

    logprobs = None
    if body.get("logprobs"):
        top_n = body.get("top_logprobs") or 0
        top_n = top_n if isinstance(top_n, int) and top_n > 0 else 0
        logprobs = {
            "content": logprobs_content(tokens, top_n, reply.p_yes),
            "refusal": None,
        }

    payload: dict[str, Any] = {
        "id": f"chatcmpl-fake-{next(ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or model,
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": logprobs,
                "finish_reason": finish_reason,
            }
        ],
    }
    if report_usage:
        prompt_tokens = sum(
            len(tokenize(content_text(m.get("content"))))
            for m in body.get("messages", [])
            if isinstance(m, dict)
        )
        payload["usage"] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(tokens),
            "total_tokens": prompt_tokens + len(tokens),
        }
    return payload


def embeddings_payload(
    body: dict[str, Any],
    *,
    model: str,
    report_usage: bool,
    dimensions: int,
    embedder: Embedder | None,
) -> dict[str, Any]:
    """The embeddings answering ``body``; ValueError for a request OpenAI would refuse."""
    raw = body.get("input")
    texts: list[str]
    if isinstance(raw, str):
        texts = [raw]
    elif isinstance(raw, list) and raw and all(isinstance(x, int) for x in raw):
        texts = [" ".join(map(str, raw))]  # one input given as token ids
    elif isinstance(raw, list) and raw and all(isinstance(x, str) for x in raw):
        texts = list(raw)
    elif (
        isinstance(raw, list)
        and raw
        and all(isinstance(x, list) and all(isinstance(t, int) for t in x) for x in raw)
    ):
        texts = [" ".join(map(str, x)) for x in raw]
    else:
        raise ValueError("'input' must be a string, a list of strings or of token ids.")
    dimensions = body.get("dimensions", dimensions)
    if not isinstance(dimensions, int) or dimensions < 1:
        raise ValueError("'dimensions' must be a positive integer.")
    encoding = body.get("encoding_format", "float")
    if encoding not in ("float", "base64"):
        raise ValueError("'encoding_format' must be 'float' or 'base64'.")
    data = []
    for index, text in enumerate(texts):
        vector = list(embedder(text)) if embedder is not None else embedding_for(text, dimensions)
        embedding: Any = vector
        if encoding == "base64":
            packed = struct.pack(f"<{len(vector)}f", *vector)
            embedding = base64.b64encode(packed).decode("ascii")
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    payload: dict[str, Any] = {
        "object": "list",
        "data": data,
        "model": body.get("model") or model,
    }
    if report_usage:
        tokens = sum(len(tokenize(t)) for t in texts)
        payload["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
    return payload
