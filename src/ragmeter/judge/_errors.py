"""Judge output failures (the endpoint failures are shared: :mod:`ragmeter._services`)."""

from __future__ import annotations

from ragmeter._services import JudgeError


class JudgeOutputError(JudgeError):
    """The judge answered, but not with output matching the schema (after a repair re-ask)."""

    def __init__(self, message: str, *, raw: str | None = None) -> None:
        super().__init__(message)
        self.raw = raw


class JudgeTruncatedError(JudgeOutputError):
    """The answer was cut off by the token limit (``finish_reason == "length"``)."""
