"""Fault injection: the failures a request can be given, queued or at random."""

from __future__ import annotations

import random
import threading
from collections import deque
from dataclasses import dataclass
from typing import Literal, get_args

FaultKind = Literal[
    "rate_limit",
    "http_error",
    "timeout",
    "trickle",
    "malformed_json",
    "truncated",
    "connection_drop",
]
_FAULT_KINDS: frozenset[str] = frozenset(get_args(FaultKind))

#: Content of the ``malformed_json`` fault: prose around JSON that never closes.
DEFAULT_MALFORMED_CONTENT = (
    'Sure! Here is my assessment:\n{"verdict": "yes", "reason": "the context supports the claim'
    "\nLet me know if you need anything else."
)


@dataclass(frozen=True)
class Fault:
    """One injected failure, consumed by one request (see :meth:`FakeOpenAIServer.inject`).

    Build it with the class methods; ``kind`` says which fields matter:

    - ``rate_limit``: HTTP 429, OpenAI error body (``code: "rate_limit_exceeded"``) and, unless
      ``retry_after_s`` is ``None``, headers ``Retry-After`` (seconds, ``"2"`` or ``"0.5"``)
      and ``retry-after-ms``; with ``retry_after_header``, only ``Retry-After`` with exactly
      that text (``"1e9"``, ``"inf"``, an HTTP date, garbage).
    - ``http_error``: HTTP ``status`` (400-599) with an OpenAI error body (``message``).
    - ``timeout``: hold the request ``delay_s`` seconds (after the latency), then answer
      normally; a client whose timeout is shorter sees a read timeout.
    - ``trickle``: answer normally, but send the body a byte at a time spread over
      ``delay_s`` seconds: no single read waits long, the whole answer does.
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
    retry_after_header: str | None = None

    def retry_headers(self, name: str = "Retry-After", *, ms: bool = True) -> dict[str, str]:
        """A ``rate_limit``'s headers: ``name`` (``Retry-After``) as written in
        ``retry_after_header``, else ``retry_after_s`` in seconds and (``ms``) as
        ``retry-after-ms``."""
        if self.retry_after_header is not None:
            return {name: self.retry_after_header}
        if self.retry_after_s is None:
            return {}
        headers = {name: f"{self.retry_after_s:g}"}
        if ms:
            headers["retry-after-ms"] = str(round(self.retry_after_s * 1000))
        return headers

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
    def rate_limit(
        cls,
        retry_after_s: float | None = 1.0,
        message: str | None = None,
        *,
        retry_after_header: str | None = None,
    ) -> Fault:
        """HTTP 429 with ``Retry-After: retry_after_s`` (no header when ``None``), or with
        ``Retry-After: retry_after_header`` verbatim."""
        return cls(
            "rate_limit",
            status=429,
            retry_after_s=retry_after_s,
            message=message,
            retry_after_header=retry_after_header,
        )

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
    def trickle(cls, delay_s: float = 30.0) -> Fault:
        """The normal answer, its body sent a byte at a time over ``delay_s`` seconds."""
        return cls("trickle", delay_s=delay_s)

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


class FaultQueue:
    """Faults waiting for requests: queued ones first (FIFO), then random ones."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: deque[Fault] = deque()
        self._random_fault: Fault | None = None
        self._random_probability = 0.0
        self._rng = random.Random(0)

    def extend(self, faults: tuple[Fault, ...]) -> None:
        for fault in faults:
            if not isinstance(fault, Fault):
                raise TypeError(f"inject() takes Fault objects, got {type(fault).__name__}")
        with self._lock:
            self._faults.extend(faults)

    def set_rate(self, fault: Fault | FaultKind | None, probability: float, seed: int) -> None:
        if not 0.0 <= probability <= 1.0:
            raise ValueError("probability must be in [0, 1]")
        if isinstance(fault, str):
            fault = Fault(fault)
        with self._lock:
            self._random_fault = fault
            self._random_probability = probability if fault is not None else 0.0
            self._rng = random.Random(seed)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
            self._random_fault = None
            self._random_probability = 0.0

    def __len__(self) -> int:
        with self._lock:
            return len(self._faults)

    def next(self) -> Fault | None:
        """The fault for the next request, or None."""
        with self._lock:
            if self._faults:
                return self._faults.popleft()
            if self._random_fault is not None and self._rng.random() < self._random_probability:
                return self._random_fault
            return None
