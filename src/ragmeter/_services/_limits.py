"""Per-endpoint limits shared by everything in the process: concurrency, requests and tokens
per minute. Safe across threads and event loops (a sync ``score()`` in Jupyter runs its own)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from ragmeter._services._errors import EndpointUnavailableError

#: Failed calls in a row (timeouts, 5xx, dropped connections, no success between) that open
#: an endpoint's breaker: a run stops dispatching (``breaker_failures`` in a config).
DEFAULT_BREAKER_FAILURES = 10
#: Seconds without any answer, across at least two failed calls, that open it too
#: (``breaker_silence_s``).
DEFAULT_BREAKER_SILENCE_S = 90.0


class TokenBucket:
    """Reservation-style token bucket: a caller reserves now and waits until its turn, so
    waiters are served in order and the long-run rate never exceeds ``rate_per_s``."""

    def __init__(self, rate_per_s: float, capacity: float) -> None:
        self.rate = rate_per_s
        self.capacity = capacity
        self._level = capacity
        self._stamp = time.monotonic()
        self._lock = threading.Lock()

    def reserve(self, amount: float) -> float:
        """Take ``amount``; return the seconds to wait before using it."""
        with self._lock:
            now = time.monotonic()
            self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
            self._stamp = now
            self._level -= amount
            return 0.0 if self._level >= 0 else -self._level / self.rate

    def refund(self, amount: float) -> None:
        """Give back (or, negative, take more) once the true amount is known."""
        with self._lock:
            self._level = min(self.capacity, self._level + amount)


class _CrossLoopSemaphore:
    """A counting semaphore awaitable from any event loop or thread."""

    def __init__(self, value: int) -> None:
        self._value = value
        self._lock = threading.Lock()
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self.in_flight = 0
        self.max_in_flight = 0

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._value > 0 and not self._waiters:
                self._value -= 1
                self._count_in()
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, future))
        try:
            await future
        except asyncio.CancelledError:
            with self._lock:
                if (loop, future) in self._waiters:
                    self._waiters.remove((loop, future))
                    raise
            self.release()  # we were handed a slot while being cancelled: pass it on
            raise

    def _count_in(self) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def release(self) -> None:
        with self._lock:
            self.in_flight -= 1
            while self._waiters:
                loop, future = self._waiters.popleft()
                if not future.done() and not loop.is_closed():
                    self._count_in()
                    loop.call_soon_threadsafe(_wake, future)
                    return
            self._value += 1


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass(frozen=True)
class LimitSettings:
    max_concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    breaker_failures: int = DEFAULT_BREAKER_FAILURES
    breaker_silence_s: float = DEFAULT_BREAKER_SILENCE_S


class WatchedCall:
    """A call in flight that an opening :class:`Breaker` cuts (``cut``: it did)."""

    __slots__ = ("cut", "loop", "task")

    def __init__(self, loop: asyncio.AbstractEventLoop, task: asyncio.Task[object]) -> None:
        self.loop = loop
        self.task = task
        self.cut = False


class Breaker:
    """Whether an endpoint can answer at all: the one circuit breaker of an endpoint, held
    by its :class:`Limiter` (so every judge and embeddings client of the endpoint, and the
    runner, see the same one; on Ray, every worker too).

    It opens (:meth:`trip`) when the endpoint asks to wait longer than a client may
    (``Retry-After`` past ``max_retry_wait_s``), or when ``failures`` calls in a row failed,
    or at least two did across ``silence_s`` seconds, with no success between
    (:meth:`failed`). One failure among successes never opens it: each success starts the
    count again. Once open, calls are not sent (:meth:`check` raises
    :class:`EndpointUnavailableError`) until the endpoint's asked wait (or ``silence_s``)
    has passed, or :meth:`reset`; ``reason`` says why in words."""

    def __init__(
        self,
        failures: int = DEFAULT_BREAKER_FAILURES,
        silence_s: float = DEFAULT_BREAKER_SILENCE_S,
    ) -> None:
        self.failures = failures
        self.silence_s = silence_s
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._until = 0.0
        self._streak = 0
        self._since: float | None = None
        self._watched: set[WatchedCall] = set()

    @property
    def reason(self) -> str | None:
        """Why the breaker is open (``rate limited: ... asks to wait 3600 s``), else ``None``."""
        with self._lock:
            if self._reason is not None and time.monotonic() >= self._until:
                self._reason = None  # the wait is over: the next call may try again
            return self._reason

    def state(self) -> tuple[str, float] | None:
        """``(reason, seconds it stays open)`` while open, else ``None`` (for a breaker
        that mirrors this one in another process: :meth:`trip` it with these)."""
        reason = self.reason
        with self._lock:
            return None if reason is None else (reason, self._until - time.monotonic())

    def check(self) -> None:
        """Raise :class:`EndpointUnavailableError` while the breaker is open."""
        reason = self.reason
        if reason is not None:
            raise EndpointUnavailableError(reason)

    def trip(self, reason: str, for_s: float) -> None:
        """Open the breaker for ``for_s`` seconds (``inf``: until :meth:`reset`); the first
        reason stays. The calls in flight that :meth:`watch` them are cut: an endpoint that
        cannot answer is not waited for until each one's timeout."""
        with self._lock:
            if self._reason is None:
                self._reason = reason
            self._until = max(self._until, time.monotonic() + for_s)
            watched = list(self._watched)
        for call in watched:
            if not call.loop.is_closed():
                call.loop.call_soon_threadsafe(self._cut, call)

    def watch(self) -> WatchedCall | None:
        """Register the call the current task is about to await: :meth:`trip` cancels it
        (:meth:`unwatch` it as soon as it returns, before any other ``await``)."""
        task = asyncio.current_task()
        if task is None:
            return None
        call = WatchedCall(asyncio.get_running_loop(), task)
        with self._lock:
            self._watched.add(call)
        return call

    def unwatch(self, call: WatchedCall | None) -> None:
        if call is not None:
            with self._lock:
                self._watched.discard(call)

    def _cut(self, call: WatchedCall) -> None:
        """In the call's own loop: cancel it if it is still awaited (then it is suspended
        in the watched call: nothing runs between its end and :meth:`unwatch`)."""
        with self._lock:
            if call not in self._watched:
                return
            self._watched.discard(call)
        call.cut = True
        call.task.cancel()

    def succeeded(self) -> None:
        """An answer came back: the failures so far were a blip."""
        with self._lock:
            self._streak = 0
            self._since = None

    def failed(self, where: str, started: float) -> None:
        """A call started at ``started`` (``time.monotonic()``) failed for good or for now
        (a timeout, a 5xx, a dropped connection); opens the breaker when the streak is long
        enough."""
        now = time.monotonic()
        with self._lock:
            self._streak += 1
            self._since = started if self._since is None else min(self._since, started)
            silent = now - self._since
            streak = self._streak
        if streak >= self.failures or (streak >= 2 and silent >= self.silence_s):
            self.trip(
                f"no answer from {where} for {silent:.0f} s across {streak} calls",
                self.silence_s,
            )

    def reset(self) -> None:
        """Closed, no failure counted (a new run starts)."""
        with self._lock:
            self._reason = None
            self._until = 0.0
            self._streak = 0
            self._since = None


class Limiter:
    """The limits of one endpoint. Get it with :func:`limiter_for` so all callers share it."""

    def __init__(self, settings: LimitSettings) -> None:
        self.settings = settings
        self._slots = _CrossLoopSemaphore(settings.max_concurrency)
        rpm, tpm = settings.requests_per_minute, settings.tokens_per_minute
        self._requests = TokenBucket(rpm / 60, max(1.0, rpm / 60)) if rpm else None
        self._tokens = TokenBucket(tpm / 60, max(1.0, tpm / 60)) if tpm else None
        #: Whether the endpoint can answer at all (shared like the limits).
        self.breaker = Breaker(settings.breaker_failures, settings.breaker_silence_s)

    @property
    def max_in_flight(self) -> int:
        return self._slots.max_in_flight

    @asynccontextmanager
    async def slot(self, estimated_tokens: int = 0) -> AsyncIterator[None]:
        """Hold one request slot, after waiting for the request and token budgets."""
        await self.acquire(estimated_tokens)
        try:
            yield
        finally:
            self.release()

    async def acquire(self, estimated_tokens: int = 0) -> None:
        """Take one request slot, after waiting for the request and token budgets (give it
        back with :meth:`release`; :meth:`slot` does both)."""
        await self._slots.acquire()
        try:
            wait = 0.0
            if self._requests is not None:
                wait = max(wait, self._requests.reserve(1))
            if self._tokens is not None and estimated_tokens:
                wait = max(wait, self._tokens.reserve(min(estimated_tokens, self._tokens.capacity)))
            if wait > 0:
                await asyncio.sleep(wait)
        except BaseException:
            self._slots.release()
            raise

    def release(self) -> None:
        """Give back a slot taken with :meth:`acquire`."""
        self._slots.release()

    def settle_tokens(self, estimated: int, actual: int) -> None:
        """Correct the token budget once a response says how many tokens it really used."""
        if self._tokens is not None:
            self._tokens.refund(min(estimated, self._tokens.capacity) - actual)


_REGISTRY: dict[str, Limiter] = {}
_REGISTRY_LOCK = threading.Lock()
#: Makes the limiters of this process (see :func:`share_limits`); ``None``: plain ones.
_FACTORY: Callable[[str, LimitSettings], Limiter] | None = None


def limiter_for(identity: str, settings: LimitSettings) -> Limiter:
    """The process-wide limiter of an endpoint (created on first use, with these settings)."""
    with _REGISTRY_LOCK:
        limiter = _REGISTRY.get(identity)
        if limiter is None or limiter.settings != settings:
            make = _FACTORY or (lambda _identity, given: Limiter(given))
            limiter = _REGISTRY[identity] = make(identity, settings)
        return limiter


def open_breakers() -> list[str]:
    """Why each open breaker of this process's endpoints is open (none: ``[]``)."""
    with _REGISTRY_LOCK:
        limiters = list(_REGISTRY.values())
    return [reason for limiter in limiters if (reason := limiter.breaker.reason) is not None]


def reset_breakers() -> None:
    """Close the breakers of this process's endpoints (a run starts: it tries again)."""
    with _REGISTRY_LOCK:
        limiters = list(_REGISTRY.values())
    for limiter in limiters:
        limiter.breaker.reset()


def share_limits(factory: Callable[[str, LimitSettings], Limiter] | None) -> None:
    """From now on, endpoints of this process get their limiter from ``factory`` (e.g. one
    that asks a cluster-wide limiter, so that N worker processes together keep one endpoint's
    limits); ``None`` goes back to limits of this process alone."""
    global _FACTORY
    with _REGISTRY_LOCK:
        _FACTORY = factory
        _REGISTRY.clear()
