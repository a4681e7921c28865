"""A judge that answers from a script: for unit tests of metrics, steps and runners."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ragmeter._services import Cache, Message, Usage, UsageLedger, estimate_tokens
from ragmeter.judge import Judge, Judgment, OutputT, parse_output

Reply = BaseModel | dict[str, Any] | str | Exception
Responder = Callable[[Sequence[Message], type[BaseModel]], Reply]


@dataclass(frozen=True)
class ScriptedCall:
    messages: tuple[Message, ...]
    schema: type[BaseModel]

    @property
    def prompt(self) -> str:
        return "\n".join(m.content for m in self.messages)


class ScriptedJudge(Judge):
    """Answers with prepared replies, in order (a list) or computed (a callable).

    A reply is a pydantic object, a dict (validated against the requested schema), a string
    (parsed like a real judge's text answer) or an exception (raised). Every uncached call
    is recorded in ``calls``.

    >>> import asyncio
    >>> from pydantic import BaseModel
    >>> class Verdict(BaseModel):
    ...     verdict: int
    >>> judge = ScriptedJudge([{"verdict": 1}])
    >>> asyncio.run(judge.generate([Message("user", "ok?")], Verdict, prompt_version="t1")).output
    Verdict(verdict=1)
    >>> len(judge.calls)
    1
    """

    def __init__(
        self,
        replies: Iterable[Reply] | Responder,
        *,
        name: str = "scripted",
        probabilities: Callable[[BaseModel], list[float] | None] | None = None,
        distribution: Callable[[BaseModel], dict[str, float] | None] | None = None,
        cache: Cache | None = None,
        ledger: UsageLedger | None = None,
        record_calls: bool = True,
        likelihood_probability: Callable[[str, str, float], float] | None = None,
    ) -> None:
        super().__init__(cache=cache, ledger=ledger)
        self.name = name
        #: Off for long runs (memory tests): ``calls`` then stays empty and ``n_calls`` counts.
        self.record_calls = record_calls
        self.n_calls = 0
        self._responder: Responder | None = replies if callable(replies) else None
        self._queue: deque[Reply] = deque() if callable(replies) else deque(replies)
        self._probabilities = probabilities
        self._distribution = distribution
        self._lock = threading.Lock()
        self.calls: list[ScriptedCall] = []
        #: ``(task, language, gain) -> P(yes)``: given, the judge scores likelihoods
        #: (answer :class:`~ragmeter.judge.TextLikelihood` requests from the script).
        self._likelihood_probability = likelihood_probability
        self.supports_likelihood = likelihood_probability is not None

    _process_local = (*Judge._process_local, "_lock")

    def _reopen(self) -> None:
        super()._reopen()
        self._lock = threading.Lock()

    def likelihood_probability(self, task: str, language: str, gain: float) -> float:
        if self._likelihood_probability is None:
            return super().likelihood_probability(task, language, gain)
        return self._likelihood_probability(task, language, gain)

    @property
    def identity(self) -> str:
        return f"scripted|{self.name}"

    def generation_params(self) -> dict[str, Any]:
        return {}

    def describe(self) -> dict[str, Any]:
        return {"kind": "scripted", "name": self.name}

    async def _call(self, messages: Sequence[Message], schema: type[OutputT]) -> Judgment[OutputT]:
        with self._lock:
            self.n_calls += 1
            if self.record_calls:
                self.calls.append(ScriptedCall(tuple(messages), schema))
            if self._responder is not None:
                reply = self._responder(messages, schema)
            elif self._queue:
                reply = self._queue.popleft()
            else:
                raise AssertionError(f"ScriptedJudge ran out of replies at call {self.n_calls}")
        if isinstance(reply, Exception):
            raise reply
        if isinstance(reply, str):
            output = parse_output(reply, schema)
            text = reply
        else:
            output = schema.model_validate(
                reply.model_dump() if isinstance(reply, BaseModel) else reply
            )
            text = output.model_dump_json()
        usage = Usage(
            calls=1,
            prompt_tokens=sum(estimate_tokens(m.content) for m in messages),
            completion_tokens=estimate_tokens(text),
            estimated_calls=1,
        )
        probabilities = self._probabilities(output) if self._probabilities else None
        distribution = self._distribution(output) if self._distribution else None
        return Judgment(output, usage, probabilities=probabilities, distribution=distribution)
