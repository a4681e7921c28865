"""The Judge interface: structured generation behind a shared cache and usage ledger.

Subclasses implement one uncached call (:meth:`Judge._call`); this class adds the cache,
in-flight de-duplication and usage accounting, so every judge gets them the same way.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from ragmeter._services import (
    Cache,
    JudgeConfigError,
    JudgeError,
    MemoryCache,
    Message,
    Portable,
    Usage,
    UsageLedger,
    cache_key,
)
from ragmeter.judge._parse import schema_for_key
from ragmeter.judge._types import Judgment, OutputT

if TYPE_CHECKING:
    from ragmeter.judge._calibration import VerdictCalibration

#: The usage of the call :meth:`Judge.generate` is making in this task (see ``_call_usage``).
_CALL_USAGE: contextvars.ContextVar[Usage | None] = contextvars.ContextVar(
    "ragmeter_call_usage", default=None
)


_J = TypeVar("_J", bound="Judge")


class Judge(Portable, ABC):
    """Asynchronous structured generation: messages and an output schema in, a validated
    object (plus usage and, where available, verdict probabilities) out."""

    #: Whether the judge answers many verdicts in one structured answer reliably; small
    #: local models do not, and get one :class:`BinaryVerdict` request per verdict instead.
    supports_batched_verdicts: bool = True
    #: Whether the judge scores a given text's likelihood (:class:`TextLikelihood` requests);
    #: then verdicts are decided from how much the evidence raises it, calibrated per task
    #: (:meth:`likelihood_probability`).
    supports_likelihood: bool = False
    #: A calibration fitted on the team's labels (:meth:`with_calibration`), applied to every
    #: verdict's P(yes) after the judge's own: the verdict is "yes" from 0.5 of its result.
    calibration: VerdictCalibration | None = None

    def __init__(self, *, cache: Cache | None = None, ledger: UsageLedger | None = None) -> None:
        self.cache: Cache = cache if cache is not None else MemoryCache()
        self.ledger = ledger if ledger is not None else UsageLedger()
        self._in_flight: dict[tuple[int, str], asyncio.Future[Judgment[Any]]] = {}

    #: A copy for another process (a cluster worker) is the same judge without its cache
    #: handle, usage ledger and calls in flight, which it gets afresh (the worker then gives
    #: it the cluster's shared cache); subclasses add theirs (e.g. HTTP clients).
    _process_local: tuple[str, ...] = ("cache", "ledger", "_in_flight")

    def _reopen(self) -> None:
        self.cache = MemoryCache()
        self.ledger = UsageLedger()
        self._in_flight = {}

    async def release_loop_resources(self) -> None:
        """Free what belongs to the running event loop (called before a sync run's loop
        closes, e.g. the HTTP client of an endpoint judge)."""

    def likelihood_probability(self, task: str, language: str, gain: float) -> float:
        """P(yes) for a verdict ``task`` ("supported", "useful", "relevant") in ``language``
        from the likelihood gain (mean log-probability per token of the claim, answer or
        question with the evidence minus without it). Only judges with
        ``supports_likelihood`` implement it."""
        raise NotImplementedError(f"{type(self).__name__} does not score likelihoods")

    def verdict_probability(self, task: str, language: str, p_yes: float) -> float:
        """P(yes) of a one-word yes/no verdict on ``task`` in ``language``, after the judge's
        calibration for it when it has one (a bundled model may); else ``p_yes`` as given."""
        return p_yes

    def calibrated_verdict_probability(self, task: str, language: str, p_yes: float) -> float:
        """:meth:`verdict_probability`, then through :attr:`calibration` when set: what a
        yes/no verdict is decided on."""
        p = self.verdict_probability(task, language, p_yes)
        return p if self.calibration is None else self.calibration.apply(task, language, p)

    def calibrated_likelihood_probability(self, task: str, language: str, gain: float) -> float:
        """:meth:`likelihood_probability`, then through :attr:`calibration` when set."""
        p = self.likelihood_probability(task, language, gain)
        return p if self.calibration is None else self.calibration.apply(task, language, p)

    def with_calibration(self: _J, calibration: VerdictCalibration | None) -> _J:
        """This judge with ``calibration`` applied to its verdicts. The copy shares the
        cache, usage ledger and clients: a calibration changes no answer, so answers are
        cached under the same keys and never paid for twice."""
        copied = object.__new__(type(self))
        copied.__dict__.update(self.__dict__)
        copied.calibration = calibration
        return copied

    def run_record(self) -> dict[str, Any]:
        """:meth:`describe` plus, when one is applied, the verdict calibration
        (``verdict_calibration``: its name, version and content hash), as run records keep
        it; a record without one was judged without."""
        if self.calibration is None:
            return self.describe()
        return {**self.describe(), "verdict_calibration": self.calibration.label}

    @property
    @abstractmethod
    def identity(self) -> str:
        """Endpoint and model: what answers belong to."""

    @abstractmethod
    def generation_params(self) -> dict[str, Any]:
        """Settings that change answers (part of every cache key)."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """For run records: model, endpoint, parameters. Never a secret."""

    @abstractmethod
    async def _call(self, messages: Sequence[Message], schema: type[OutputT]) -> Judgment[OutputT]:
        """One uncached generation, retries and repair included."""

    async def generate(
        self,
        messages: Sequence[Message],
        schema: type[OutputT],
        *,
        prompt_version: str,
        scope: str | None = None,
        sample_id: str | None = None,
        salt: str = "",
    ) -> Judgment[OutputT]:
        """A validated answer, from the cache when this exact work was done before.

        ``prompt_version`` is the template's version; ``salt`` separates deliberate repeats
        (e.g. judge-noise runs) in the cache. ``scope`` and ``sample_id`` attribute usage.
        """

        def key_for(params: dict[str, Any]) -> str:
            return cache_key(
                identity=self.identity,
                params=params,
                prompt_version=prompt_version,
                messages=messages,
                schema=schema_for_key(schema),
                salt=salt,
            )

        asked = self.generation_params()
        key = key_for(asked)
        cached = await self._from_cache(key, schema)
        if cached is None:
            live = Usage()
            token = _CALL_USAGE.set(live)
            self.ledger.begin_call(live, sample_id)
            try:
                cached = await self._shared_call(key, messages, schema)
            except JudgeError as error:
                # A failed call still cost what it sent: the ledger counts it too.
                if error.usage is not None:
                    self.ledger.record(error.usage, scope=scope, sample_id=sample_id)
                raise
            finally:
                self.ledger.end_call(live, sample_id)
                _CALL_USAGE.reset(token)
            sent = self.generation_params()
            if not cached.cached and sent != asked:
                # The endpoint refused a parameter during the call, which was answered to the
                # request as re-sent: the answer is also filed under the cache key of what was
                # sent, which later calls (asking that way from the start) look up.
                await self.cache.aput(key_for(sent), _entry(cached))
        self.ledger.record(cached.usage, scope=scope, sample_id=sample_id)
        return cached

    @staticmethod
    def _call_usage() -> Usage:
        """The usage object a :meth:`_call` fills as its requests go out: the one the ledger
        watches while the call is under way (so a run killed mid-call still counts what it
        sent), or a fresh one outside :meth:`generate`."""
        return _CALL_USAGE.get(None) or Usage()

    async def _from_cache(self, key: str, schema: type[OutputT]) -> Judgment[OutputT] | None:
        hit = await self.cache.aget(key)
        if hit is None:
            return None
        try:
            output = schema.model_validate(hit["output"])
        except (ValidationError, KeyError, TypeError):
            return None  # an entry from an incompatible schema: recompute
        return Judgment(
            output,
            Usage(cached_calls=1),
            cached=True,
            probabilities=hit.get("probabilities"),
            distribution=hit.get("distribution"),
        )

    async def _shared_call(
        self, key: str, messages: Sequence[Message], schema: type[OutputT]
    ) -> Judgment[OutputT]:
        """Identical concurrent requests share one call; the others wait for its answer."""
        loop_key = (id(asyncio.get_running_loop()), key)
        pending = self._in_flight.get(loop_key)
        if pending is not None:
            try:
                judgment = await asyncio.shield(pending)
            except JudgeError as error:
                raise _without_usage(error) from error.__cause__
            return Judgment(
                judgment.output,
                Usage(cached_calls=1),
                True,
                judgment.probabilities,
                judgment.distribution,
            )
        future: asyncio.Future[Judgment[Any]] = asyncio.get_running_loop().create_future()
        self._in_flight[loop_key] = future
        try:
            judgment = await self._call(messages, schema)
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # mark retrieved: waiters (if any) re-raise it themselves
            raise
        finally:
            del self._in_flight[loop_key]
        future.set_result(judgment)
        await self.cache.aput(key, _entry(judgment))
        return judgment


def _entry(judgment: Judgment[Any]) -> dict[str, Any]:
    """What the cache keeps of an answer."""
    return {
        "output": judgment.output.model_dump(mode="json"),
        "probabilities": judgment.probabilities,
        "distribution": judgment.distribution,
    }


def _without_usage(error: JudgeError) -> JudgeError:
    """``error`` as seen by a caller that shared another's call: the same failure, but its
    cost belongs to the caller that made the call (counted once)."""
    if error.usage is None:
        return error
    try:
        shared = copy.copy(error)
    except TypeError:  # an error type that cannot be rebuilt from its arguments
        kind = JudgeConfigError if isinstance(error, JudgeConfigError) else JudgeError
        return kind(str(error))
    shared.usage = None
    return shared
