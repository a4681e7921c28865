"""The fake server's Anthropic Messages API (``POST /v1/messages``): what a client gets
from ``https://api.anthropic.com`` (Anthropic's own error shapes, stop reasons and usage),
and what the real API refuses, refused the same way.

Refused, as the real API does (a deliberately wrong client sees it):

- no ``x-api-key`` header (also when the key comes as ``Authorization: Bearer``): 401
  ``authentication_error``; a key other than the server's ``api_key``: 401 as well;
- no ``anthropic-version`` header, or one that is no API version: 400;
- a body without ``model`` or ``max_tokens`` (an integer >= 1), without ``messages``, with a
  ``"system"`` role inside ``messages`` (the system prompt is the top-level ``system``),
  with a key the API does not take (``response_format``, ``seed``, ``logprobs``...: "Extra
  inputs are not permitted"), an empty text, a ``temperature`` outside 0-1, a malformed
  tool (name, ``input_schema``), a ``tool_choice`` naming no given tool, a ``tool_use``
  without its ``tool_result`` in the next message: 400 ``invalid_request_error``;
- roles that do not alternate user/assistant (the API merges consecutive turns today; older
  versions and some gateways refuse them, so the emulation does, unless
  ``require_alternation=False``).

Model knobs of :class:`FakeAnthropicServer`: ``forced_tool_use=False`` refuses ``tool_choice``
``{"type": "tool"}``/``{"type": "any"}`` with the API's thinking-models message, and
``accepts_temperature=False`` refuses a ``temperature`` other than 1 (newer models).

Answers: the responder's content (a :class:`ScriptedReply`, a string or a dict) becomes a
``tool_use`` block whose ``input`` is that JSON object when the request offers tools (and
``tool_choice`` is not ``none``), else a ``text`` block. ``stop_reason`` is ``tool_use`` or
``end_turn``; ``max_tokens`` when the answer is cut by the request's ``max_tokens`` or by a
``truncated`` fault (a cut tool input is reported as ``{}``); a reply's own
``finish_reason`` other than ``stop``/``length`` (e.g. ``"refusal"``) is reported as is.

Usage, with the server's tokenizer (:func:`tokenize`): ``input_tokens`` counts the
``system`` text, the messages' texts (a tool input as its JSON, a tool result's text) and
the ``tools`` as JSON (:func:`input_tokens_of`); ``output_tokens`` counts the answer's
text (the JSON of a tool input); the cache counts are 0.

Faults (:meth:`FakeOpenAIServer.inject`) are taken after the key and version checks:
``rate_limit`` is 429 ``rate_limit_error`` with ``retry-after``; ``http_error`` has the
status's Anthropic error type (529 ``overloaded_error``, 500 ``api_error``...); the others
act as on the chat endpoint (``malformed_json`` answers prose instead of the JSON).
"""

from __future__ import annotations

import hmac
import itertools
import json
import re
from collections.abc import Mapping
from typing import Any

from ragmeter.testing._fake_server._faults import Fault
from ragmeter.testing._fake_server._handler import Handler, _Dropped
from ragmeter.testing._fake_server._replies import (
    Responder,
    ScriptedReply,
    answer_text,
    reply_for,
)
from ragmeter.testing._fake_server._server import FakeOpenAIServer
from ragmeter.testing._fake_server._tokens import content_text, tokenize

#: The API versions the ``anthropic-version`` header may name.
ANTHROPIC_VERSIONS = frozenset({"2023-06-01", "2023-01-01"})
#: The top-level request fields the Messages API takes; any other is refused.
_REQUEST_FIELDS = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "system",
        "temperature",
        "top_p",
        "top_k",
        "stop_sequences",
        "stream",
        "tools",
        "tool_choice",
        "metadata",
        "thinking",
        "service_tier",
        "output_config",
        "container",
        "mcp_servers",
        "context_management",
    }
)
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "model: not found",
    429: "Number of request tokens has exceeded your per-minute rate limit.",
    529: "Overloaded",
}
_TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_BLOCK_TYPES = frozenset(
    {"text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking"}
)
_ids = itertools.count(1)


class _Rejected(Exception):
    """A request the API refuses: HTTP ``status`` with Anthropic's error ``message``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class FakeAnthropicServer(FakeOpenAIServer):
    """A local Anthropic Messages API for tests: ``with FakeAnthropicServer() as server``;
    give ``server.base_url`` (``http://127.0.0.1:PORT``, the API root without ``/v1``, like
    ``https://api.anthropic.com``) to an Anthropic client. Everything else is the
    :class:`FakeOpenAIServer`'s: responder, ``api_key``, latency, faults, recorded requests
    (``x-api-key`` is never recorded). The chat endpoint keeps working under ``/v1``.

    Args (besides the :class:`FakeOpenAIServer` ones):
        forced_tool_use: ``False`` emulates a model that refuses ``tool_choice`` forcing a
            tool (extended-thinking models): 400.
        accepts_temperature: ``False`` emulates a model that refuses sampling settings
            other than the default (``temperature`` other than 1): 400.
        require_alternation: ``False`` accepts consecutive turns of one role (the current
            API merges them).

    >>> import http.client, json
    >>> with FakeAnthropicServer(responder=lambda body: "Paris.") as server:
    ...     conn = http.client.HTTPConnection(*server.address, timeout=5)
    ...     conn.request("POST", "/v1/messages", json.dumps({"model": "claude-fake",
    ...                  "max_tokens": 50, "messages": [{"role": "user", "content": "Capital?"}]}),
    ...                  {"x-api-key": "k", "anthropic-version": "2023-06-01"})
    ...     reply = json.load(conn.getresponse())
    ...     conn.close()
    >>> reply["content"], reply["stop_reason"], reply["usage"]["output_tokens"]
    ([{'type': 'text', 'text': 'Paris.'}], 'end_turn', 2)
    """

    def __init__(
        self,
        *,
        forced_tool_use: bool = True,
        accepts_temperature: bool = True,
        require_alternation: bool = True,
        model: str = "claude-fake",
        responder: Responder | None = None,
        **settings: Any,
    ) -> None:
        super().__init__(model=model, responder=responder, **settings)
        self.forced_tool_use = forced_tool_use
        self.accepts_temperature = accepts_temperature
        self.require_alternation = require_alternation

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: the API root, as ``https://api.anthropic.com``."""
        host, port = self.address
        return f"http://{host}:{port}"

    def __repr__(self) -> str:
        where = self.base_url if self.running else "stopped"
        return f"FakeAnthropicServer({where}, model={self.model!r})"


def x_api_key_authorized(owner: FakeOpenAIServer, key: str | None) -> bool:
    """Whether a Messages request with ``x-api-key: key`` passes the key check: a key,
    equal to the server's ``api_key`` when it has one (any key otherwise: the API wants
    one)."""
    if key is None or not key.strip():
        return False
    if owner.api_key is None:
        return True
    return hmac.compare_digest(key.strip().encode(), owner.api_key.encode())


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """Anthropic's error answer for ``status``."""
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    text = (
        message
        or _DEFAULT_MESSAGES.get(status)
        or ("Internal server error" if status >= 500 else "Invalid request")
    )
    return {
        "type": "error",
        "error": {"type": kind, "message": text},
        "request_id": f"req_fake_{next(_ids)}",
    }


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    if block.get("type") == "tool_use":
        return json.dumps(block.get("input"), ensure_ascii=False)
    if block.get("type") == "tool_result":
        return content_text(block.get("content"))
    return str(block.get("text", ""))


def input_tokens_of(body: Mapping[str, Any]) -> int:
    """``usage.input_tokens`` for ``body``: the tokens of its ``system`` text, of its
    messages' texts (tool inputs as JSON) and of its ``tools`` as JSON."""
    texts = [content_text(body.get("system"))]
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            texts += [_block_text(block) for block in content]
        else:
            texts.append(content_text(content))
    if body.get("tools"):
        texts.append(json.dumps(body["tools"], ensure_ascii=False))
    return sum(len(tokenize(text)) for text in texts if text)


def handle_messages(handler: Handler, owner: FakeOpenAIServer, method: str, body: Any) -> None:
    """Answer one request to ``/v1/messages`` (the order of the checks is the API's: key,
    version, then the fault, the latency and the body)."""
    if method != "POST":
        handler._send_json(405, error_body(405, f"Method {method} not allowed on /v1/messages"))
        return
    headers = {name.lower(): value for name, value in handler.headers.items()}
    if not x_api_key_authorized(owner, headers.get("x-api-key")):
        if headers.get("x-api-key"):
            message = "invalid x-api-key"
        elif headers.get("authorization"):
            message = "x-api-key header is required (this API does not take Authorization: Bearer)"
        else:
            message = "x-api-key header is required"
        handler._send_json(401, error_body(401, message))
        return
    version = headers.get("anthropic-version")
    if version is None:
        handler._send_json(400, error_body(400, "anthropic-version: header is required"))
        return
    if version.strip() not in ANTHROPIC_VERSIONS:
        handler._send_json(
            400, error_body(400, f"anthropic-version: {version!r} is not a valid version")
        )
        return

    fault = owner._faults.next()
    if not owner._sleep(owner.latency_s):
        raise _Dropped
    if fault is not None:
        # the faults that replace the answer, with Anthropic's error shapes; the transport
        # faults (drop, timeout, trickle) act as on the chat endpoint
        if fault.kind == "rate_limit":
            headers = fault.retry_headers("retry-after", ms=False)
            handler._send_json(429, error_body(429, fault.message), headers=headers)
            return
        if fault.kind == "http_error":
            handler._send_json(fault.status, error_body(fault.status, fault.message))
            return
        handler._apply_transport_fault(owner, fault)
    try:
        request = _checked(body, owner)
    except _Rejected as rejected:
        handler._send_json(rejected.status, error_body(rejected.status, str(rejected)))
        return
    try:
        reply = reply_for(owner.responder, request)
    except Exception as exc:  # noqa: BLE001 - the test's responder failed: report it as a 500
        handler._send_json(500, error_body(500, f"responder raised {type(exc).__name__}: {exc}"))
        return
    handler._send_json(
        200, messages_payload(request, reply, fault, model=owner.model, usage=owner.report_usage)
    )


# -- what the API refuses ----------------------------------------------------------------

#: The API's words for a tool_use without its tool_result, and a tool_result without its use.
_NO_RESULT = (
    "tool_use ids were found without tool_result blocks immediately after: {}. Each "
    "tool_use block must have a corresponding tool_result block in the next message."
)
_NO_USE = (
    "unexpected tool_use_id found in tool_result blocks: {}. Each tool_result block must "
    "have a corresponding tool_use block in the previous message."
)


def _checked(body: Any, server: FakeOpenAIServer) -> dict[str, Any]:
    """``body`` when the API would take it; :class:`_Rejected` saying why not."""
    if not isinstance(body, dict):
        raise _Rejected("The request body is not valid JSON.")
    for name in body:
        if name not in _REQUEST_FIELDS:
            raise _Rejected(f"{name}: Extra inputs are not permitted")
    if not isinstance(body.get("model"), str) or not body["model"]:
        raise _Rejected("model: Field required")
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        raise _Rejected("max_tokens: Field required")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise _Rejected("max_tokens: Input should be an integer greater than or equal to 1")
    if body.get("stream"):
        raise _Rejected("stream: streaming is not supported by FakeAnthropicServer")
    _check_system(body.get("system"))
    _check_sampling(body, server)
    tool_names = _check_tools(body, server)
    _check_messages(body.get("messages"), server, tool_names)
    return body


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list) or not all(
        isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        for b in system
    ):
        raise _Rejected("system: Input should be a valid string or a list of text blocks")


def _check_sampling(body: dict[str, Any], server: FakeOpenAIServer) -> None:
    temperature = body.get("temperature")
    if temperature is None:
        return
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise _Rejected("temperature: Input should be a valid number")
    if not 0.0 <= temperature <= 1.0:
        raise _Rejected("temperature: Input should be less than or equal to 1")
    if not getattr(server, "accepts_temperature", True) and temperature != 1.0:
        raise _Rejected(
            "temperature: this model does not accept sampling parameters other than the "
            "default; omit temperature"
        )


def _check_tools(body: dict[str, Any], server: FakeOpenAIServer) -> set[str]:
    tools = body.get("tools")
    choice = body.get("tool_choice")
    names: set[str] = set()
    if tools is not None:
        if not isinstance(tools, list):
            raise _Rejected("tools: Input should be a valid list")
        for index, tool in enumerate(tools):
            where = f"tools.{index}"
            if not isinstance(tool, dict):
                raise _Rejected(f"{where}: Input should be an object")
            name = tool.get("name")
            if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
                raise _Rejected(
                    f"{where}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
                )
            schema = tool.get("input_schema")
            if not isinstance(schema, dict):
                raise _Rejected(f"{where}.input_schema: Field required")
            if schema.get("type") != "object":
                raise _Rejected(f"{where}.input_schema.type: Input should be 'object'")
            if name in names:
                raise _Rejected(f"tools: Tool names must be unique ({name!r})")
            names.add(name)
    if choice is None:
        return names
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        raise _Rejected("tool_choice: Input should be auto, any, tool or none")
    if not names and choice["type"] != "none":
        raise _Rejected("tool_choice: may only be specified while providing tools")
    if choice["type"] == "tool" and choice.get("name") not in names:
        raise _Rejected(f"tool_choice.name: no tool named {choice.get('name')!r} was given")
    if choice["type"] in ("any", "tool") and not getattr(server, "forced_tool_use", True):
        raise _Rejected("Thinking may not be enabled when tool_choice forces tool use.")
    return names


def _check_messages(messages: Any, server: FakeOpenAIServer, tool_names: set[str]) -> None:
    if not isinstance(messages, list) or not messages:
        raise _Rejected("messages: at least one message is required")
    previous_role: str | None = None
    pending_tool_ids: list[str] = []
    for index, message in enumerate(messages):
        where = f"messages.{index}"
        if not isinstance(message, dict):
            raise _Rejected(f"{where}: Input should be an object")
        role = message.get("role")
        if role == "system":
            raise _Rejected(
                f'{where}: Unexpected role "system". The Messages API accepts a top-level '
                '`system` parameter, not "system" as an input message role.'
            )
        if role not in ("user", "assistant"):
            raise _Rejected(f"{where}.role: Input should be 'user' or 'assistant'")
        if getattr(server, "require_alternation", True) and role == previous_role:
            raise _Rejected(
                f'{where}: roles must alternate between "user" and "assistant", '
                f'but found multiple "{role}" roles in a row'
            )
        blocks = _blocks_of(message.get("content"), where)
        result_ids = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        # every tool_use answered by a tool_result in the next message, and no other
        for unmatched, said in (
            ([i for i in pending_tool_ids if i not in result_ids], _NO_RESULT),
            ([i for i in result_ids if i not in pending_tool_ids], _NO_USE),
        ):
            if unmatched:
                raise _Rejected(f"{where}: {said.format(', '.join(map(str, unmatched)))}")
        if result_ids and role != "user":
            raise _Rejected(f"{where}: tool_result blocks belong in user messages")
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        if uses and role != "assistant":
            raise _Rejected(f"{where}: tool_use blocks belong in assistant messages")
        for block in uses:
            if not isinstance(block.get("id"), str) or not isinstance(block.get("input"), dict):
                raise _Rejected(f"{where}: a tool_use block needs an id and an input object")
            if block.get("name") not in tool_names:
                raise _Rejected(f"{where}: tool_use names a tool not in tools")
        pending_tool_ids = [b["id"] for b in uses]
        previous_role = role
    if pending_tool_ids:
        raise _Rejected(
            f"tool_use ids were found without tool_result blocks immediately after: "
            f"{', '.join(pending_tool_ids)}"
        )


def _blocks_of(content: Any, where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        if not content:
            raise _Rejected(f"{where}: text content blocks must be non-empty")
        return [{"type": "text", "text": content}]
    if not isinstance(content, list) or not content:
        raise _Rejected(f"{where}.content: Input should be a string or a non-empty list")
    for number, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") not in _BLOCK_TYPES:
            raise _Rejected(f"{where}.content.{number}: unknown content block type")
        if block["type"] == "text" and not (isinstance(block.get("text"), str) and block["text"]):
            raise _Rejected(f"{where}.content.{number}: text content blocks must be non-empty")
    return content


# -- the answer ----------------------------------------------------------------------------


def messages_payload(
    body: dict[str, Any], reply: ScriptedReply, fault: Fault | None, *, model: str, usage: bool
) -> dict[str, Any]:
    """The message answering ``body`` with ``reply``, changed by a content fault."""
    text, tokens, cut = answer_text(reply.content, fault, body["max_tokens"])
    stop_reason = (
        "max_tokens"
        if cut
        else {"stop": "end_turn", "length": "max_tokens"}.get(
            reply.finish_reason, reply.finish_reason
        )
    )

    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    tools = body.get("tools") or []
    choice = body.get("tool_choice") or {"type": "auto"}
    if tools and choice.get("type") != "none":
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None
        cut = stop_reason == "max_tokens"
        if isinstance(value, dict) or cut:
            name = choice.get("name") if choice.get("type") == "tool" else tools[0]["name"]
            tool_input = value if isinstance(value, dict) and not cut else {}
            content = [
                {
                    "type": "tool_use",
                    "id": f"toolu_fake_{next(_ids)}",
                    "name": name,
                    "input": tool_input,
                }
            ]
            if stop_reason == "end_turn":
                stop_reason = "tool_use"
    payload: dict[str, Any] = {
        "id": f"msg_fake_{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
    }
    if usage:
        payload["usage"] = {
            "input_tokens": input_tokens_of(body),
            "output_tokens": len(tokens),
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
    return payload
