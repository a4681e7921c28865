"""Diagnosis: metrics read in pairs say where a RAG system fails and what to try."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.diagnosis._finding import Figure, Finding
    from ragmeter.diagnosis._rules import Condition, Rule, diagnose, load_rules

__all__ = ["Condition", "Figure", "Finding", "Rule", "diagnose", "load_rules"]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.diagnosis._finding": ("Figure", "Finding"),
        "ragmeter.diagnosis._rules": ("Condition", "Rule", "diagnose", "load_rules"),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
