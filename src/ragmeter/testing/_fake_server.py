"""A fake OpenAI-compatible HTTP server: latency, scripted replies and fault injection.

Standard library only. The server listens on ``127.0.0.1`` on an ephemeral port and answers
in background threads (one per connection, so concurrent requests overlap), which makes it
usable from unit tests, benchmarks and by users checking their own setup.

Endpoints (all under ``base_url`` = ``http://127.0.0.1:PORT/v1``):

``POST /v1/chat/completions``
    An OpenAI chat completion object. The content comes from the ``responder`` callable
    (see :class:`FakeOpenAIServer`); without one, the content is ``"{}"`` (valid JSON that
    says nothing). ``"logprobs": true`` adds ``choices[0].logprobs.content``; ``tools`` (with
    ``tool_choice`` other than ``"none"``) turns the content into the arguments of a single
    ``tool_calls`` entry; ``max_tokens``/``max_completion_tokens`` cut the reply (then
    ``finish_reason`` is ``"length"``); ``"stream": true`` is refused with 400.
``POST /v1/embeddings``
    Deterministic unit vectors (see :meth:`FakeOpenAIServer.embedding_for`), ``dimensions``
    from the request or the server's ``embedding_dimensions`` (default 8);
    ``encoding_format`` ``"float"`` or ``"base64"`` (little-endian float32, as OpenAI).
``GET /v1/models``
    A list holding the server's ``model``.

Tokens. One rule everywhere (usage counts and logprobs): a token is a run of word
characters or a single other non-space character, carrying the whitespace before it
(``"Is it yes?"`` -> ``["Is", " it", " yes", "?"]``); trailing whitespace is one more token.
``usage.prompt_tokens`` is the sum of the token counts of the messages' text contents,
``usage.completion_tokens`` the count of the reply (equal to ``len(logprobs.content)``).

Order of handling a request: it is recorded (``requests``, ``request_times``), then
authenticated (401), then, for the two POST endpoints only, the next queued fault is taken
(every authorized POST consumes one, whatever its body), ``latency_s`` is slept, the fault
is applied, and the body is validated and answered (the ``json_schema`` rejection happens
here, after the fault). ``GET /v1/models`` takes no fault and has no latency.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import itertools
import json
import math
import random
import re
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Union, get_args
from urllib.parse import urlsplit

FaultKind = Literal[
    "rate_limit", "http_error", "timeout", "malformed_json", "truncated", "connection_drop"
]
_FAULT_KINDS: frozenset[str] = frozenset(get_args(FaultKind))

Responder = Callable[[dict[str, Any]], Union["ScriptedReply", str, dict[str, Any]]]
Embedder = Callable[[str], Sequence[float]]

#: Probability given to an emitted yes/no/0/1 token when its reply sets no ``p_yes``.
DEFAULT_BINARY_CONFIDENCE = 0.99
#: Content of the ``malformed_json`` fault: prose around JSON that never closes.
DEFAULT_MALFORMED_CONTENT = (
    'Sure! Here is my assessment:\n{"verdict": "yes", "reason": "the context supports the claim'
    "\nLet me know if you need anything else."
)

_TOKEN_RE = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")
_BINARY_PAIRS = {"yes": "no", "no": "yes", "1": "0", "0": "1"}
_POSITIVE = frozenset({"yes", "1"})
_MIN_PROB = 1e-12
_FILLER_LOGPROB = -30.0
_CHAT_PATH = "/v1/chat/completions"
_EMBEDDINGS_PATH = "/v1/embeddings"
_MODELS_PATH = "/v1/models"
_REDACTED_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})


def tokenize(text: str) -> list[str]:
    """Split ``text`` into the fake server's tokens; ``"".join(tokenize(t)) == t``.

    >>> tokenize('{"verdict": "yes"}')
    ['{', '"', 'verdict', '"', ':', ' "', 'yes', '"', '}']
    """
    return _TOKEN_RE.findall(text)


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


@dataclass(frozen=True)
class Fault:
    """One injected failure, consumed by one request (see :meth:`FakeOpenAIServer.inject`).

    Build it with the class methods; ``kind`` says which fields matter:

    - ``rate_limit``: HTTP 429, OpenAI error body (``code: "rate_limit_exceeded"``) and, unless
      ``retry_after_s`` is ``None``, headers ``Retry-After`` (seconds, ``"2"`` or ``"0.5"``)
      and ``retry-after-ms``.
    - ``http_error``: HTTP ``status`` (400-599) with an OpenAI error body (``message``).
    - ``timeout``: hold the request ``delay_s`` seconds (after the latency), then answer
      normally; a client whose timeout is shorter sees a read timeout.
    - ``malformed_json``: HTTP 200 whose content is ``content`` (default: prose around broken
      JSON, :data:`DEFAULT_MALFORMED_CONTENT`); on embeddings, a body that is not JSON.
    - ``truncated``: the normal content cut to ``keep_fraction`` of its characters (at
      least one character is dropped) with ``finish_reason: "length"``; on embeddings, the
      JSON body cut likewise.
    - ``connection_drop``: the socket is closed without any response.
    """

    kind: FaultKind
    status: int = 500
    message: str | None = None
    retry_after_s: float | None = 1.0
    delay_s: float = 30.0
    keep_fraction: float = 0.5
    content: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in _FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; expected one of {_FAULT_KINDS}")
        if self.kind == "http_error" and not 400 <= self.status <= 599:
            raise ValueError(f"http_error status must be 400-599, got {self.status}")
        if self.retry_after_s is not None and self.retry_after_s < 0:
            raise ValueError("retry_after_s must be >= 0")
        if self.delay_s < 0:
            raise ValueError("delay_s must be >= 0")
        if not 0.0 <= self.keep_fraction < 1.0:
            raise ValueError("keep_fraction must be in [0, 1)")

    @classmethod
    def rate_limit(cls, retry_after_s: float | None = 1.0, message: str | None = None) -> Fault:
        """HTTP 429 with ``Retry-After: retry_after_s`` (no header when ``None``)."""
        return cls("rate_limit", status=429, retry_after_s=retry_after_s, message=message)

    @classmethod
    def http_error(cls, status: int = 500, message: str | None = None) -> Fault:
        """HTTP ``status`` with an OpenAI-style error body."""
        return cls("http_error", status=status, message=message)

    @classmethod
    def server_error(cls, message: str | None = None) -> Fault:
        """HTTP 500 (``type: "server_error"``)."""
        return cls.http_error(500, message)

    @classmethod
    def bad_request(cls, message: str | None = None) -> Fault:
        """HTTP 400 (``type: "invalid_request_error"``)."""
        return cls.http_error(400, message)

    @classmethod
    def not_found(cls, message: str | None = None) -> Fault:
        """HTTP 404 (``code: "model_not_found"``)."""
        return cls.http_error(404, message)

    @classmethod
    def timeout(cls, delay_s: float = 30.0) -> Fault:
        """Answer only after ``delay_s`` more seconds (interrupted by ``stop()``)."""
        return cls("timeout", delay_s=delay_s)

    @classmethod
    def malformed_json(cls, content: str | None = None) -> Fault:
        """HTTP 200 whose content is not valid JSON."""
        return cls("malformed_json", content=content)

    @classmethod
    def truncated(cls, keep_fraction: float = 0.5) -> Fault:
        """Content cut in the middle, ``finish_reason: "length"``."""
        return cls("truncated", keep_fraction=keep_fraction)

    @classmethod
    def connection_drop(cls) -> Fault:
        """Close the connection without a response."""
        return cls("connection_drop")


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it. Credentials are never kept: ``headers`` (names
    lower-cased) lacks ``authorization``/``api-key``/``x-api-key``, and ``authorized`` says
    whether the request passed the key check (always ``True`` when the server has no key)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    authorized: bool
    received_at: float = field(repr=False)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, owner: FakeOpenAIServer) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

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


def _error_body(
    message: str, type_: str, code: str | int | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def _status_error(status: int, message: str | None) -> dict[str, Any]:
    if status == 404:
        return _error_body(
            message or "The model does not exist or you do not have access to it.",
            "invalid_request_error",
            "model_not_found",
        )
    if status >= 500:
        return _error_body(
            message or "The server had an error while processing your request.", "server_error"
        )
    return _error_body(message or "Invalid request.", "invalid_request_error")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without TCP_NODELAY, Nagle waits for the
    # client's delayed ACK (~40 ms) before sending the body, on every request.
    disable_nagle_algorithm = True
    server_version = "FakeOpenAI/1.0"
    server: _HTTPServer

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
        self.wfile.write(body)

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        self._send(status, json.dumps(payload, ensure_ascii=False).encode("utf-8"), headers)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
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
        try:
            raw = self._read_body()
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = None
            authorized = owner._is_authorized(self.headers.get("Authorization"))
            headers = {
                k.lower(): v for k, v in self.headers.items() if k.lower() not in _REDACTED_HEADERS
            }
            path = urlsplit(self.path).path.rstrip("/")
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
        expected = {_CHAT_PATH: "POST", _EMBEDDINGS_PATH: "POST", _MODELS_PATH: "GET"}
        if path not in expected:
            self._send_json(
                404, _error_body(f"Unknown URL: {method} {path}", "invalid_request_error")
            )
            return
        if expected[path] != method:
            self._send_json(
                405, _error_body(f"Method {method} not allowed on {path}", "invalid_request_error")
            )
            return
        if not authorized:
            missing = self.headers.get("Authorization") is None
            message = (
                "You didn't provide an API key (Authorization: Bearer <key>)."
                if missing
                else "Incorrect API key provided."
            )
            self._send_json(401, _error_body(message, "invalid_request_error", "invalid_api_key"))
            return
        if path == _MODELS_PATH:
            self._send_json(200, owner._models_payload())
            return

        fault = owner._next_fault()
        if not owner._sleep(owner.latency_s):
            raise _Dropped
        if fault is not None:
            self._apply_transport_fault(owner, fault)
        if not isinstance(body, dict):
            self._send_json(
                400, _error_body("The request body must be a JSON object.", "invalid_request_error")
            )
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
        if fault.kind == "rate_limit":
            headers: dict[str, str] = {}
            if fault.retry_after_s is not None:
                headers["Retry-After"] = f"{fault.retry_after_s:g}"
                headers["retry-after-ms"] = str(round(fault.retry_after_s * 1000))
            message = fault.message or "Rate limit reached for requests. Please try again later."
            self._send_json(
                429, _error_body(message, "requests", "rate_limit_exceeded"), headers=headers
            )
            raise _Handled
        if fault.kind == "http_error":
            self._send_json(fault.status, _status_error(fault.status, fault.message))
            raise _Handled

    # -- endpoints --------------------------------------------------------------------------

    def _chat(self, owner: FakeOpenAIServer, body: dict[str, Any], fault: Fault | None) -> None:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            self._send_json(
                400,
                _error_body(
                    "'messages' must be a non-empty array.",
                    "invalid_request_error",
                    None,
                    "messages",
                ),
            )
            return
        if body.get("stream"):
            self._send_json(
                400,
                _error_body(
                    "stream=true is not supported by FakeOpenAIServer.",
                    "invalid_request_error",
                    None,
                    "stream",
                ),
            )
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
                self._send_json(
                    400,
                    _error_body(
                        f"Invalid response_format type: {rf_type!r}.",
                        "invalid_request_error",
                        None,
                        "response_format",
                    ),
                )
                return
        try:
            reply = owner._reply_for(body)
        except Exception as exc:  # noqa: BLE001 - the test's responder failed: report it as a 500
            self._send_json(
                500, _error_body(f"responder raised {type(exc).__name__}: {exc}", "server_error")
            )
            return
        self._send_json(200, owner._chat_payload(body, reply, fault))

    def _embeddings(
        self, owner: FakeOpenAIServer, body: dict[str, Any], fault: Fault | None
    ) -> None:
        try:
            payload = owner._embeddings_payload(body)
        except ValueError as exc:
            self._send_json(400, _error_body(str(exc), "invalid_request_error"))
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


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def _binary_alternatives(token: str, p_yes: float | None) -> list[tuple[str, float]] | None:
    """[(token, logprob)] for the emitted yes/no/0/1 token and its counterpart, else None."""
    stripped = token.strip()
    key = stripped.lower()
    if key not in _BINARY_PAIRS:
        return None
    prefix = token[: len(token) - len(token.lstrip())]
    other = _BINARY_PAIRS[key]
    if stripped.isupper() and len(stripped) > 1:
        other = other.upper()
    elif stripped[:1].isupper():
        other = other.capitalize()
    if p_yes is None:
        p_emitted = DEFAULT_BINARY_CONFIDENCE
    else:
        p_emitted = p_yes if key in _POSITIVE else 1.0 - p_yes
    return [
        (token, math.log(max(p_emitted, _MIN_PROB))),
        (prefix + other, math.log(max(1.0 - p_emitted, _MIN_PROB))),
    ]


def _logprob_entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def _logprobs_content(tokens: list[str], top_n: int, p_yes: float | None) -> list[dict[str, Any]]:
    entries = []
    for token in tokens:
        alternatives = _binary_alternatives(token, p_yes)
        if alternatives is None:
            top = [(token, 0.0)]
            keep = top_n
        else:
            top = sorted(alternatives, key=lambda alt: -alt[1])
            keep = max(top_n, len(top))
        while len(top) < keep:  # placeholders, so that there are top_logprobs entries
            filler = len(top)
            top.append((f"<alt{filler}>", _FILLER_LOGPROB - filler))
        logprob = alternatives[0][1] if alternatives is not None else 0.0
        entry = _logprob_entry(token, logprob)
        entry["top_logprobs"] = [_logprob_entry(t, lp) for t, lp in top[:keep]]
        entries.append(entry)
    return entries


class FakeOpenAIServer:
    """A local OpenAI-compatible server for tests: ``with FakeOpenAIServer() as server: ...``.

    Args:
        latency_s: seconds every POST request waits before its answer (each request in its
            own thread, so concurrent requests overlap). A plain attribute: change it any time.
        responder: called with the parsed chat request body; returns a :class:`ScriptedReply`,
            a ``str`` (the content) or a ``dict`` (serialised to JSON content). It runs in the
            handler threads, so it must be thread-safe; if it raises, the request gets a 500.
            ``None`` answers ``"{}"``. Attribute, changeable at run time.
        supports_json_schema: ``False`` makes ``response_format: {"type": "json_schema"}``
            fail with HTTP 500 and llama.cpp's error body; ``json_object`` always works.
        api_key: when set, requests need ``Authorization: Bearer <api_key>`` or get 401.
        model: the model listed by ``/v1/models`` and echoed when a request names none.
        report_usage: ``False`` omits ``usage`` from chat and embedding responses.
        embedding_dimensions: vector size when an embeddings request gives no ``dimensions``.
        embedder: ``text -> vector`` replacing the built-in hash vectors.

    Observability: :attr:`requests`, :attr:`request_times`, :attr:`max_in_flight`,
    :attr:`in_flight`, :attr:`pending_faults`, :meth:`reset_stats`.

    >>> import http.client, json
    >>> with FakeOpenAIServer(responder=lambda body: "yes") as server:
    ...     conn = http.client.HTTPConnection(*server.address, timeout=5)
    ...     conn.request("POST", "/v1/chat/completions",
    ...                  json.dumps({"messages": [{"role": "user", "content": "ok?"}]}))
    ...     reply = json.load(conn.getresponse())
    ...     conn.close()
    >>> reply["choices"][0]["message"]["content"], reply["usage"]["total_tokens"]
    ('yes', 3)
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        responder: Responder | None = None,
        supports_json_schema: bool = True,
        api_key: str | None = None,
        model: str = "fake-model",
        report_usage: bool = True,
        embedding_dimensions: int = 8,
        embedder: Embedder | None = None,
    ) -> None:
        if embedding_dimensions < 1:
            raise ValueError("embedding_dimensions must be >= 1")
        self.latency_s = latency_s
        self.responder = responder
        self.supports_json_schema = supports_json_schema
        self.api_key = api_key
        self.model = model
        self.report_usage = report_usage
        self.embedding_dimensions = embedding_dimensions
        self.embedder = embedder

        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()
        self._random_fault: Fault | None = None
        self._random_probability = 0.0
        self._rng = random.Random(0)
        self._requests: list[RecordedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._created = int(time.time())

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind ``127.0.0.1:0`` and serve in a daemon thread; returns ``self``. Idempotent."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(self)
        thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"FakeOpenAIServer:{httpd.server_address[1]}",
            daemon=True,
        )
        self._httpd, self._thread = httpd, thread
        thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port, promptly: requests still sleeping (latency,
        timeout faults) and idle keep-alive connections are closed without a response."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5.0)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server is started."""
        return self._httpd is not None

    @property
    def address(self) -> tuple[str, int]:
        """The bound ``(host, port)``; the host is always ``127.0.0.1``."""
        if self._httpd is None:
            raise RuntimeError("FakeOpenAIServer is not started")
        host, port = self._httpd.socket.getsockname()[:2]
        return host, port

    @property
    def port(self) -> int:
        """The bound port."""
        return self.address[1]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, to give an OpenAI client as its base URL."""
        host, port = self.address
        return f"http://{host}:{port}/v1"

    def __repr__(self) -> str:
        where = self.base_url if self.running else "stopped"
        return f"FakeOpenAIServer({where}, model={self.model!r})"

    # -- faults -----------------------------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each authorized POST request takes the next one (FIFO) before its
        normal reply. Requests after the queue is empty are answered normally."""
        for fault in faults:
            if not isinstance(fault, Fault):
                raise TypeError(f"inject() takes Fault objects, got {type(fault).__name__}")
        with self._lock:
            self._faults.extend(faults)

    def fault_rate(
        self, fault: Fault | FaultKind | None, probability: float = 0.0, seed: int = 0
    ) -> None:
        """Random faults: while the queue is empty, each authorized POST request gets
        ``fault`` with ``probability`` (drawn from ``random.Random(seed)``, so a sequential
        run is reproducible). ``fault_rate(None)`` or probability 0 turns it off."""
        if not 0.0 <= probability <= 1.0:
            raise ValueError("probability must be in [0, 1]")
        if isinstance(fault, str):
            fault = Fault(fault)
        with self._lock:
            self._random_fault = fault
            self._random_probability = probability if fault is not None else 0.0
            self._rng = random.Random(seed)

    def clear_faults(self) -> None:
        """Drop queued faults and turn random faults off."""
        with self._lock:
            self._faults.clear()
            self._random_fault = None
            self._random_probability = 0.0

    @property
    def pending_faults(self) -> int:
        """How many queued faults no request has taken yet."""
        with self._lock:
            return len(self._faults)

    # -- observability ----------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def request_times(self) -> list[float]:
        """``time.monotonic()`` arrival times of :attr:`requests` (non-decreasing; taken when
        the request's headers and body have been read)."""
        with self._lock:
            return [r.received_at for r in self._requests]

    @property
    def in_flight(self) -> int:
        """Requests being handled now."""
        with self._lock:
            return self._in_flight

    @property
    def max_in_flight(self) -> int:
        """Most requests handled at once (latency sleeps included) since start/reset."""
        with self._lock:
            return self._max_in_flight

    def reset_stats(self) -> None:
        """Forget recorded requests; ``max_in_flight`` restarts from the current in-flight
        count. Queued faults are kept."""
        with self._lock:
            self._requests.clear()
            self._max_in_flight = self._in_flight

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
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

    # -- internals used by the handler ------------------------------------------------------

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _exit(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _record(
        self, method: str, path: str, headers: dict[str, str], body: Any, authorized: bool
    ) -> None:
        with self._lock:  # stamped under the lock, so that arrival times are in list order
            stamp = time.monotonic()
            self._requests.append(RecordedRequest(method, path, headers, body, authorized, stamp))

    def _is_authorized(self, header: str | None) -> bool:
        if self.api_key is None:
            return True
        expected = f"Bearer {self.api_key}".encode()
        return header is not None and hmac.compare_digest(header.strip().encode(), expected)

    def _next_fault(self) -> Fault | None:
        with self._lock:
            if self._faults:
                return self._faults.popleft()
            if self._random_fault is not None and self._rng.random() < self._random_probability:
                return self._random_fault
            return None

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless stopping; False when the server is stopping."""
        if seconds > 0:
            return not self._stopping.wait(seconds)
        return not self._stopping.is_set()

    def _reply_for(self, body: dict[str, Any]) -> ScriptedReply:
        responder = self.responder
        if responder is None:
            return ScriptedReply("{}")
        reply = responder(body)
        if isinstance(reply, ScriptedReply):
            return reply
        if isinstance(reply, str):
            return ScriptedReply(reply)
        if isinstance(reply, dict):
            return ScriptedReply(json.dumps(reply, ensure_ascii=False))
        raise TypeError(
            f"responder returned {type(reply).__name__}; expected ScriptedReply/str/dict"
        )

    def _models_payload(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [
                {"id": self.model, "object": "model", "created": self._created, "owned_by": "fake"}
            ],
        }

    def _chat_payload(
        self, body: dict[str, Any], reply: ScriptedReply, fault: Fault | None
    ) -> dict[str, Any]:
        content, finish_reason = reply.content, reply.finish_reason
        if fault is not None and fault.kind == "malformed_json":
            content = fault.content if fault.content is not None else DEFAULT_MALFORMED_CONTENT
        elif fault is not None and fault.kind == "truncated":
            keep = int(len(content) * fault.keep_fraction)
            content = content[: min(keep, max(len(content) - 1, 0))]
            finish_reason = "length"
        tokens = tokenize(content)
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        if isinstance(limit, int) and limit >= 0 and len(tokens) > limit:
            tokens = tokens[:limit]
            content = "".join(tokens)
            finish_reason = "length"

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
                    "id": f"call_fake_{next(self._ids)}",
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
                "content": _logprobs_content(tokens, top_n, reply.p_yes),
                "refusal": None,
            }

        payload: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
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
        if self.report_usage:
            prompt_tokens = sum(
                len(tokenize(_content_text(m.get("content"))))
                for m in body.get("messages", [])
                if isinstance(m, dict)
            )
            payload["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": len(tokens),
                "total_tokens": prompt_tokens + len(tokens),
            }
        return payload

    def _embeddings_payload(self, body: dict[str, Any]) -> dict[str, Any]:
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
        dimensions = body.get("dimensions", self.embedding_dimensions)
        if not isinstance(dimensions, int) or dimensions < 1:
            raise ValueError("'dimensions' must be a positive integer.")
        encoding = body.get("encoding_format", "float")
        if encoding not in ("float", "base64"):
            raise ValueError("'encoding_format' must be 'float' or 'base64'.")
        data = []
        for index, text in enumerate(texts):
            vector = (
                list(self.embedder(text))
                if self.embedder is not None
                else self.embedding_for(text, dimensions)
            )
            embedding: Any = vector
            if encoding == "base64":
                packed = struct.pack(f"<{len(vector)}f", *vector)
                embedding = base64.b64encode(packed).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        payload: dict[str, Any] = {
            "object": "list",
            "data": data,
            "model": body.get("model") or self.model,
        }
        if self.report_usage:
            tokens = sum(len(tokenize(t)) for t in texts)
            payload["usage"] = {"prompt_tokens": tokens, "total_tokens": tokens}
        return payload
