"""Failures of a call to a judge or embeddings endpoint: values the caller sees and records,
never NaN. Messages never hold secrets."""

from __future__ import annotations

from ragmeter._services._types import Usage


class JudgeError(Exception):
    """A judge call that did not produce a valid answer.

    ``usage`` is what the failed call cost before it failed (the requests sent, the tokens
    of the answers that came back, e.g. a truncated answer and its re-asks), so a run's
    accounting counts every request a provider would bill. ``None`` when nothing was sent.
    """

    usage: Usage | None = None


class JudgeConfigError(JudgeError):
    """The endpoint refused the request for a reason retrying cannot fix (400/401/403/404)."""


class JudgeTransientError(JudgeError):
    """Rate limit, server error, timeout or connection failure: worth retrying."""

    def __init__(
        self, message: str, *, retry_after: float | None = None, no_answer: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        #: Whether the endpoint gave no usable answer at all (a timeout, a dropped
        #: connection, a 5xx): what an endpoint's breaker counts (a 429 is an answer).
        self.no_answer = no_answer


class EndpointUnavailableError(JudgeError):
    """Not sent: the endpoint's breaker is open (it asked to wait longer than
    ``max_retry_wait_s``, or a run of calls failed with no answer between): retrying now
    would only wait or pay for nothing. ``reason`` names the endpoint's state."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"not sent: {reason}")
        self.reason = reason
