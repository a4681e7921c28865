"""The HTTP side of the fake server: routing, authentication, transport faults, errors."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from ragmeter.testing._fake_server._dialects import (
    AZURE_ACCESS_DENIED,
    add_reasoning,
    azure_error,
    azure_route,
    openai_error,
    reasoning_refusal,
)
from ragmeter.testing._fake_server._faults import Fault
from ragmeter.testing._fake_server._replies import (
    chat_payload,
    embeddings_payload,
    models_payload,
    reply_for,
)

if TYPE_CHECKING:
    from ragmeter.testing._fake_server._server import FakeOpenAIServer

_CHAT_PATH = "/v1/chat/completions"
_EMBEDDINGS_PATH = "/v1/embeddings"
_MODELS_PATH = "/v1/models"
#: Anthropic's Messages API, emulated in ``_anthropic`` (imported there on first use).
_MESSAGES_PATH = "/v1/messages"
_REDACTED_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})


class HTTPServer(ThreadingHTTPServer):
    """Serves one :class:`FakeOpenAIServer` on ``127.0.0.1``, a thread per connection."""

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, owner: FakeOpenAIServer) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        # where to listen: a subclass may say (FakeJudgeServer), else a free local port
        super().__init__(getattr(owner, "bind_to", ("127.0.0.1", 0)), Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Wake every handler blocked on its socket (idle keep-alive or slow request)."""
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], OSError):
            return  # client went away: expected with timeouts and drops
        super().handle_error(request, client_address)


class _Dropped(Exception):
    """Raised inside a handler to close the connection without a response."""


class _Handled(Exception):
    """Raised inside a handler once a fault's response is sent (the connection stays open)."""


def _status_error(status: int, message: str | None) -> dict[str, Any]:
    if status == 404:
        message = message or "The model does not exist or you do not have access to it."
        return openai_error(message, None, "model_not_found")
    if status >= 500:
        message = message or "The server had an error while processing your request."
        return openai_error(message, None, None, "server_error")
    return openai_error(message or "Invalid request.", None, None)


class Handler(BaseHTTPRequestHandler):
    """Routes a request, applies its fault and sends the scripted answer."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY, Nagle waits for the
    # client's delayed ACK (~40 ms) before sending the body, on every request.
    disable_nagle_algorithm = True
    server_version = "FakeOpenAI/1.0"
    server: HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    # -- plumbing ---------------------------------------------------------------------------

    def _leave(self) -> None:
        """Stop counting this request as in flight (once), before its answer goes out: a
        client that has its answer must never see the request still counted."""
        if getattr(self, "_counted", False):
            self._counted = False
            self.server.owner._exit()

    def _send(self, status: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        self._leave()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        trickle_s = getattr(self, "_trickle_s", 0.0)
        if not trickle_s or not body:
            self.wfile.write(body)
            return
        pause = trickle_s / len(body)
        for i in range(len(body)):  # a byte at a time: each read is quick, the whole is not
            self.wfile.write(body[i : i + 1])
            self.wfile.flush()
            if not self.server.owner._sleep(pause):
                raise _Dropped

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), headers)

    def _invalid(
        self, status: int, message: str, *, code: str | None = None, param: str | None = None
    ) -> None:
        """An OpenAI ``invalid_request_error`` answer."""
        self._send_json(status, openai_error(message, param, code))

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks: list[bytes] = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _dispatch(self, method: str) -> None:
        owner = self.server.owner
        owner._enter()
        self._counted = True
        self._trickle_s = 0.0  # one handler serves every request of a kept-alive connection
        try:
            raw = self._read_body()
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            authorized = owner._authorize(self.headers)  # the dialect's key check
            headers = {
                k.lower(): v for k, v in self.headers.items() if k.lower() not in _REDACTED_HEADERS
            }
            path = urlsplit(self.path).path.rstrip("/")
            if path == _MESSAGES_PATH:  # Anthropic's Messages API: the key is x-api-key
                from ragmeter.testing._fake_server._anthropic import x_api_key_authorized

                authorized = x_api_key_authorized(owner, self.headers.get("x-api-key"))
            owner._record(method, path, headers, body, authorized)
            self._route(owner, method, path, body, authorized)
        except _Handled:
            pass
        except _Dropped:
            self.close_connection = True
        except OSError:
            self.close_connection = True
        finally:
            self._leave()

    def _route(
        self, owner: FakeOpenAIServer, method: str, path: str, body: Any, authorized: bool
    ) -> None:
        if owner._stopping.is_set():
            raise _Dropped
        if path == _MESSAGES_PATH:
            from ragmeter.testing._fake_server._anthropic import handle_messages

            handle_messages(self, owner, method, body)
            return
        if owner.dialect == "azure":  # Azure OpenAI's paths and errors (see _dialects)
            query = parse_qs(urlsplit(self.path).query)
            canonical, problem = azure_route(owner, path, query, body)
            if problem is not None or not authorized:
                status, payload = problem or (401, azure_error("401", AZURE_ACCESS_DENIED))
                self._send_json(status, payload)
                return
            path = canonical or path
        expected = {_CHAT_PATH: "POST", _EMBEDDINGS_PATH: "POST", _MODELS_PATH: "GET"}
        if path not in expected:
            self._invalid(404, f"Unknown URL: {method} {path}")
            return
        if expected[path] != method:
            self._invalid(405, f"Method {method} not allowed on {path}")
            return
        if not authorized:
            missing = self.headers.get("Authorization") is None
            message = (
                "You didn't provide an API key (Authorization: Bearer <key>)."
                if missing
                else "Incorrect API key provided."
            )
            self._invalid(401, message, code="invalid_api_key")
            return
        if path == _MODELS_PATH:
            self._send_json(200, models_payload(owner.model, owner._created))
            return

        fault = owner._faults.next()
        if not owner._sleep(owner.latency_s):
            raise _Dropped
        if fault is not None:
            self._apply_transport_fault(owner, fault)
        if not isinstance(body, dict):
            self._invalid(400, "The request body must be a JSON object.")
            return
        if path == _CHAT_PATH:
            self._chat(owner, body, fault)
        else:
            self._embeddings(owner, body, fault)

    def _apply_transport_fault(self, owner: FakeOpenAIServer, fault: Fault) -> None:
        """Faults that replace the response (or delay it); content faults pass through."""
        if fault.kind == "connection_drop":
            raise _Dropped
        if fault.kind == "timeout":
            if not owner._sleep(fault.delay_s):
                raise _Dropped
            return
        if fault.kind == "trickle":
            self._trickle_s = fault.delay_s
            return
        if fault.kind == "rate_limit":
            headers = fault.retry_headers()
            message = fault.message or "Rate limit reached for requests. Please try again later."
            self._send_json(
                429, openai_error(message, None, "rate_limit_exceeded", "requests"), headers=headers
            )
            raise _Handled
        if fault.kind == "http_error":
            self._send_json(fault.status, _status_error(fault.status, fault.message))
            raise _Handled

    # -- endpoints --------------------------------------------------------------------------

    def _chat(self, owner: FakeOpenAIServer, body: dict[str, Any], fault: Fault | None) -> None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            self._invalid(400, "'messages' must be a non-empty array.", param="messages")
            return
        if body.get("stream"):
            self._invalid(400, "stream=true is not supported by FakeOpenAIServer.", param="stream")
            return
        refusal = reasoning_refusal(owner, body)  # a reasoning model's refused parameters
        if refusal is not None:
            self._send_json(*refusal)
            return
        response_format = body.get("response_format")
        if response_format is not None:
            rf_type = response_format.get("type") if isinstance(response_format, dict) else None
            if rf_type == "json_schema" and not owner.supports_json_schema:
                # What llama.cpp's server answered before it supported json_schema.
                self._send_json(
                    500,
                    {
                        "error": {
                            "code": 500,
                            "message": 'response_format type must be one of "text" or '
                            '"json_object", but got: json_schema',
                            "type": "server_error",
                        }
                    },
                )
                return
            if rf_type not in ("text", "json_object", "json_schema"):
                message = f"Invalid response_format type: {rf_type!r}."
                self._invalid(400, message, param="response_format")
                return
        try:
            reply = reply_for(owner.responder, body)
        except Exception as exc:  # noqa: BLE001 - the test's responder failed: report it as a 500
            self._send_json(
                500,
                openai_error(
                    f"responder raised {type(exc).__name__}: {exc}", None, None, "server_error"
                ),
            )
            return
        payload = chat_payload(
            body, reply, fault, model=owner.model, report_usage=owner.report_usage, ids=owner._ids
        )
        add_reasoning(owner, body, payload)  # hidden reasoning tokens, for reasoning models
        self._send_json(200, payload)

    def _embeddings(
        self, owner: FakeOpenAIServer, body: dict[str, Any], fault: Fault | None
    ) -> None:
        try:
            payload = embeddings_payload(
                body,
                model=owner.model,
                report_usage=owner.report_usage,
                dimensions=owner.embedding_dimensions,
                embedder=owner.embedder,
            )
        except ValueError as exc:
            self._invalid(400, str(exc))
            return
        if fault is not None and fault.kind == "malformed_json":
            self._send(
                200, b'{"object": "list", "data": [{"object": "embedding", "embedding": [0.1'
            )
            return
        encoded = json.dumps(payload).encode("utf-8")
        if fault is not None and fault.kind == "truncated":
            keep = min(len(encoded) - 1, max(1, int(len(encoded) * fault.keep_fraction)))
            encoded = encoded[:keep]
        self._send(200, encoded)
