"""Calling the user's pipeline on every sample: a concurrency limit, a timeout per call,
retries with exponential backoff, and one record per sample whatever happened.

A failing sample is recorded with its error, never dropped, and the records come back in
dataset order whatever order the calls finished in.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.dataset import Sample
from ragmeter.experiments._adapters import stream
from ragmeter.experiments._outputs import Outputs, PipelineOutputError, read_outputs
from ragmeter.metrics import is_async


@dataclass(frozen=True)
class CallPolicy:
    """How each pipeline call is made."""

    concurrency: int = 8
    #: Seconds one attempt may take (``None``: no limit).
    timeout_s: float | None = 60.0
    #: Attempts after the first one, for exceptions and timeouts.
    retries: int = 2
    #: Wait before the n-th retry: ``backoff_s * 2 ** (n - 1)``.
    backoff_s: float = 0.1

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive (or None), got {self.timeout_s}")
        if self.retries < 0:
            raise ValueError(f"retries must be 0 or more, got {self.retries}")
        if self.backoff_s < 0:
            raise ValueError(f"backoff_s must be 0 or more, got {self.backoff_s}")


@dataclass(frozen=True)
class PipelineCall:
    """What happened when the pipeline ran on one sample.

    ``latency_s`` is the successful attempt's; ``attempt_errors`` lists the error of every
    failed attempt, so a flaky backend shows even when a retry saved the sample.
    """

    sample_id: str
    outputs: Outputs | None
    latency_s: float | None
    attempts: int
    attempt_errors: list[str] = field(default_factory=list)
    error_type: str | None = None
    error_message: str | None = None

    @property
    def ok(self) -> bool:
        return self.outputs is not None

    @property
    def failure(self) -> str:
        """The failure in one line, as the sample's metrics report it."""
        tries = "attempt" if self.attempts == 1 else "attempts"
        return (
            f"pipeline failed: {self.error_type} after {self.attempts} {tries}: "
            f"{self.error_message}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The record stored with the run (``Store.pipeline_outputs``)."""
        record: dict[str, Any] = {
            "id": self.sample_id,
            "ok": self.ok,
            "outputs": None if self.outputs is None else self.outputs.fields,
            "latency_s": self.latency_s,
            "attempts": self.attempts,
            "error": None if self.ok else {"type": self.error_type, "message": self.error_message},
        }
        if self.outputs is not None and self.outputs.extra:
            record["extra"] = self.outputs.extra
        if self.attempt_errors:
            record["attempt_errors"] = self.attempt_errors
        return record


async def _in_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a thread of its own.

    Not ``asyncio.to_thread``: its shared executor has min(32, CPUs + 4) workers, which would
    cap the concurrency below the limit asked for on a small machine and count the time a
    call waits for a worker against its timeout. A call that timed out keeps its thread
    until it returns (Python cannot stop a thread); the thread is a daemon, so a hung call
    does not keep the process alive.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(value: Any, error: BaseException | None) -> None:
        if future.done():  # timed out or cancelled meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(value)

    def target() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = context.run(fn, *args, **kwargs)
        except BaseException as raised:  # noqa: BLE001 - handed to the awaiting task
            error = raised
        # The loop may have closed after the call timed out: then nobody waits for it.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=target, name="ragmeter-pipeline", daemon=True).start()
    return await future


def _one_line(error: BaseException, timeout_s: float | None) -> str:
    if isinstance(error, asyncio.TimeoutError) and not str(error):
        return f"no result within {timeout_s} s"
    return str(error) or repr(error)


class Caller:
    """Runs one pipeline over samples under a :class:`CallPolicy`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        policy: CallPolicy,
        kwargs: Mapping[str, Any],
        on_done: Callable[[PipelineCall], None] | None = None,
    ) -> None:
        self.fn = fn
        self.policy = policy
        self.kwargs = dict(kwargs)
        self.on_done = on_done
        self._async = is_async(fn)

    async def _attempt(self, sample: Sample) -> Any:
        if self._async:
            value = await self.fn(sample, **self.kwargs)
        else:
            value = await _in_thread(self.fn, sample, **self.kwargs)
        # A sync wrapper around an async function hands back its coroutine.
        value = await value if inspect.isawaitable(value) else value
        # A streamed answer (LlamaIndex) is read to its end here, within the timeout.
        kind = stream(value)
        if kind == "async":
            return await value.get_response()
        return await _in_thread(value.get_response) if kind == "sync" else value

    async def call(self, sample: Sample, sample_id: str, limit: asyncio.Semaphore) -> PipelineCall:
        """One sample, with retries; never raises for the pipeline's own errors."""
        policy = self.policy
        errors: list[str] = []
        last: BaseException | None = None
        attempt = 0
        while attempt <= policy.retries:
            attempt += 1
            async with limit:  # held per attempt: a sample waiting to retry frees its slot
                started = time.perf_counter()
                try:
                    value = await asyncio.wait_for(self._attempt(sample), policy.timeout_s)
                    outputs = read_outputs(value, sample, sample_id)
                except PipelineOutputError as error:
                    last = error
                    errors.append(f"{type(error).__name__}: {error}")
                    break  # the same code returns the same wrong type: no retry
                except Exception as error:  # noqa: BLE001 - the user's pipeline may raise anything
                    last = error
                    errors.append(f"{type(error).__name__}: {_one_line(error, policy.timeout_s)}")
                else:
                    return PipelineCall(
                        sample_id, outputs, time.perf_counter() - started, attempt, errors
                    )
            if attempt <= policy.retries and policy.backoff_s:
                await asyncio.sleep(policy.backoff_s * 2 ** (attempt - 1))
        assert last is not None
        error_type = (
            "TimeoutError" if isinstance(last, asyncio.TimeoutError) else type(last).__name__
        )
        return PipelineCall(
            sample_id,
            None,
            None,
            attempt,
            errors,
            error_type=error_type,
            error_message=_one_line(last, policy.timeout_s),
        )

    async def call_all(self, samples: Sequence[Sample], ids: Sequence[str]) -> list[PipelineCall]:
        """Every sample, at most ``concurrency`` at once, records in dataset order."""
        limit = asyncio.Semaphore(self.policy.concurrency)

        async def one(sample: Sample, sample_id: str) -> PipelineCall:
            record = await self.call(sample, sample_id, limit)
            if self.on_done is not None:
                self.on_done(record)
            return record

        return list(await asyncio.gather(*(one(s, i) for s, i in zip(samples, ids))))
