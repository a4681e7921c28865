"""Live quality: score new production samples in windows, compare each to a baseline, alert
on drops.

:class:`Monitor` follows a growing JSONL file (or a folder of them): new samples are scored
with reference-free metrics in windows of N samples or of a time span, each window is
stored as a run (so ``ragmeter runs list`` and the dashboard's trends show it), its means
come with bootstrap CIs, and each metric is compared with a baseline run by an unpaired
test; a significant drop is an alert (a log line, a webhook). Its state folder lets a
restart lose nothing and score nothing twice. :func:`monitor` is one pass (``--once``).
"""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.monitor._monitor import (
        DEFAULT_METRICS,
        Monitor,
        PollReport,
        Window,
        WindowMetric,
        WindowSpec,
        monitor,
    )

__all__ = [
    "DEFAULT_METRICS",
    "Monitor",
    "PollReport",
    "Window",
    "WindowMetric",
    "WindowSpec",
    "monitor",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.monitor._monitor": (
            "DEFAULT_METRICS",
            "Monitor",
            "PollReport",
            "Window",
            "WindowMetric",
            "WindowSpec",
            "monitor",
        ),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
