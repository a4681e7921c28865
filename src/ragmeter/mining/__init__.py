"""Test sets from real questions: pick a diverse, representative, hard set of production
samples to label, and merge the labelled ones into the golden set."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.mining._labels import LABEL_COLUMNS
    from ragmeter.mining._merge import MergeConflict, MergeResult, is_labelled, merge_labelled
    from ragmeter.mining._mine import MiningResult, Pick, describe, mine
    from ragmeter.mining._scores import Standing, standings

__all__ = [
    "LABEL_COLUMNS",
    "MergeConflict",
    "MergeResult",
    "MiningResult",
    "Pick",
    "Standing",
    "describe",
    "is_labelled",
    "merge_labelled",
    "mine",
    "standings",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.mining._labels": ("LABEL_COLUMNS",),
        "ragmeter.mining._merge": ("MergeConflict", "MergeResult", "is_labelled", "merge_labelled"),
        "ragmeter.mining._mine": ("MiningResult", "Pick", "describe", "mine"),
        "ragmeter.mining._scores": ("Standing", "standings"),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
