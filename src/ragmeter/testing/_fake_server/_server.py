"""The fake server's lifecycle and what it observed: start, stop, requests, in flight."""

from __future__ import annotations

import hmac
import itertools
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from ragmeter.testing._fake_server._dialects import (
    DIALECTS,
    Dialect,
    Headers,
    azure_authorized,
)
from ragmeter.testing._fake_server._faults import Fault, FaultKind, FaultQueue
from ragmeter.testing._fake_server._handler import HTTPServer
from ragmeter.testing._fake_server._replies import Embedder, Responder, embedding_for


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
        dialect: provider rules on top of OpenAI's. ``"openai"`` (default) takes every
            parameter. ``"openai-reasoning"``: every model is an OpenAI reasoning model
            (o1/o3/o4-mini/gpt-5): ``max_tokens`` and ``top_p`` get a 400
            ``unsupported_parameter``, a temperature other than 1 a 400 ``unsupported_value``
            (OpenAI's exact error bodies, ``param`` naming the parameter), logprobs a 403;
            answers spend ``reasoning_tokens`` hidden tokens, counted in
            ``completion_tokens`` (``completion_tokens_details.reasoning_tokens``) and against
            ``max_completion_tokens``. ``"azure"``: Azure OpenAI's paths under
            :attr:`root_url` (``/openai/deployments/{d}/chat/completions?api-version=...``,
            404 without ``api-version``; ``/openai/v1/chat/completions`` with the deployment
            as ``model``; the same for ``embeddings``) and its key in an ``api-key`` header:
            a key sent as ``Authorization: Bearer`` gets Azure's 401.
        reasoning_models: models that follow the reasoning rules in any dialect.
        reasoning_tokens: hidden tokens a reasoning model spends per answer (default 16).
        azure_deployments: the deployments an ``azure`` server has (else any name is one):
            another gets Azure's 404 ``DeploymentNotFound``.
        azure_ad_token: a Microsoft Entra ID token an ``azure`` server accepts as
            ``Authorization: Bearer``.

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
        dialect: Dialect = "openai",
        reasoning_models: Collection[str] = (),
        reasoning_tokens: int = 16,
        azure_deployments: Collection[str] | None = None,
        azure_ad_token: str | None = None,
    ) -> None:
        if embedding_dimensions < 1:
            raise ValueError("embedding_dimensions must be >= 1")
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}; expected one of {sorted(DIALECTS)}")
        if reasoning_tokens < 0:
            raise ValueError("reasoning_tokens must be >= 0")
        #: Provider rules on top of OpenAI's (see ``_dialects``): ``"openai-reasoning"``
        #: treats every model as a reasoning model, ``"azure"`` serves Azure OpenAI's paths.
        self.dialect = dialect
        #: Models that follow the reasoning-model rules in any dialect.
        self.reasoning_models = frozenset(reasoning_models)
        #: Hidden tokens a reasoning model spends before its answer (counted and billed).
        self.reasoning_tokens = reasoning_tokens
        #: Azure: the deployments the resource has (``None``: any name is one).
        self.azure_deployments = None if azure_deployments is None else set(azure_deployments)
        #: Azure: a Microsoft Entra ID token accepted as ``Authorization: Bearer``.
        self.azure_ad_token = azure_ad_token
        self.latency_s = latency_s
        self.responder = responder
        self.supports_json_schema = supports_json_schema
        self.api_key = api_key
        self.model = model
        self.report_usage = report_usage
        self.embedding_dimensions = embedding_dimensions
        self.embedder = embedder

        self._lock = threading.Lock()
        self._faults = FaultQueue()
        self._requests: list[RecordedRequest] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._ids = itertools.count(1)  # numbers completions and tool calls
        self._stopping = threading.Event()
        self._httpd: HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._created = int(time.time())

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        """Bind ``127.0.0.1:0`` and serve in a daemon thread; returns ``self``. Idempotent."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = HTTPServer(self)
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

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT``: the "resource endpoint" of the ``azure`` dialect (its
        paths are ``/openai/deployments/{d}/...?api-version=`` and ``/openai/v1/...``)."""
        host, port = self.address
        return f"http://{host}:{port}"

    def is_reasoning_model(self, model: Any) -> bool:
        """Whether requests for ``model`` follow OpenAI's reasoning-model rules."""
        return self.dialect == "openai-reasoning" or model in self.reasoning_models

    def __repr__(self) -> str:
        where = self.base_url if self.running else "stopped"
        return f"FakeOpenAIServer({where}, model={self.model!r})"

    # -- faults -----------------------------------------------------------------------------

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each authorized POST request takes the next one (FIFO) before its
        normal reply. Requests after the queue is empty are answered normally."""
        self._faults.extend(faults)

    def fault_rate(
        self, fault: Fault | FaultKind | None, probability: float = 0.0, seed: int = 0
    ) -> None:
        """Random faults: while the queue is empty, each authorized POST request gets
        ``fault`` with ``probability`` (drawn from ``random.Random(seed)``, so a sequential
        run is reproducible). ``fault_rate(None)`` or probability 0 turns it off."""
        self._faults.set_rate(fault, probability, seed)

    def clear_faults(self) -> None:
        """Drop queued faults and turn random faults off."""
        self._faults.clear()

    @property
    def pending_faults(self) -> int:
        """How many queued faults no request has taken yet."""
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
        return embedding_for(text, dimensions)

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

    def _authorize(self, headers: Headers) -> bool:
        """Whether a request's headers pass the key check of the server's dialect."""
        if self.dialect == "azure":
            return azure_authorized(self, headers)
        if self.api_key is None:
            return True
        header = headers.get("Authorization")
        expected = f"Bearer {self.api_key}".encode()
        return header is not None and hmac.compare_digest(header.strip().encode(), expected)

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless stopping; False when the server is stopping."""
        if seconds > 0:
            return not self._stopping.wait(seconds)
        return not self._stopping.is_set()
