"""Judge output failures (the endpoint failures are shared: :mod:`ragmeter._services`), and
the one place an endpoint judge builds them: every answer quoted in an error (``raw``)
passes through the endpoint's redaction first, whichever dialect it came from."""

from __future__ import annotations

from collections.abc import Callable

from ragmeter._services import JudgeError

#: The largest token budget a truncated answer is retried with (the budget doubles each
#: time an answer is cut off, up to this).
MAX_TOKEN_BUDGET = 16384

#: What removes the endpoint's secrets from a text (``EndpointClient.redact`` and the like).
Redact = Callable[[str], str]


class JudgeOutputError(JudgeError):
    """The judge answered, but not with output matching the schema (after a repair re-ask)."""

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class JudgeTruncatedError(JudgeOutputError):
    """The answer was cut off by the token limit (``finish_reason == "length"``)."""


def truncated_error(
    max_tokens: int, reason: str, answer: str, redact: Redact
) -> JudgeTruncatedError:
    """An answer cut off at ``max_tokens`` (``reason``, e.g. ``finish_reason=length``), its
    text redacted."""
    return JudgeTruncatedError(
        f"answer cut off at {max_tokens} tokens ({reason})", raw=redact(answer)
    )


def output_error(
    message: str, answer: str, redact: Redact, *, truncated: bool = False
) -> JudgeOutputError:
    """An answer that cannot be used (``message`` says why), its text redacted."""
    kind = JudgeTruncatedError if truncated else JudgeOutputError
    return kind(message, raw=redact(answer))


def after_repair_error(error: JudgeOutputError, answer: str, redact: Redact) -> JudgeOutputError:
    """The answer to the repair re-ask was invalid too: ``error``, its text redacted."""
    return JudgeOutputError(f"{error} (after one repair re-ask)", raw=redact(answer))
