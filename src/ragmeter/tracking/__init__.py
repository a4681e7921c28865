"""Log runs to experiment trackers: MLflow (:func:`log_to_mlflow`) and Weights & Biases
(:func:`log_to_wandb`), the same numbers, settings and files in both.

Each takes an :class:`~ragmeter.EvaluationResult` (or an experiment's result) and logs per
metric its mean, 95% CI, coverage and counts, per tag value the means, the judge's usage, the
run's settings (ragmeter version, dataset fingerprint, metric settings, judge, prompt
versions) and its files (the HTML report, results.jsonl). The libraries are optional
(``pip install 'ragmeter[mlflow]'`` / ``'ragmeter[wandb]'``) and imported only when called.
"""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.tracking._mlflow import log_to_mlflow
    from ragmeter.tracking._record import TrackedRun, TrackingError
    from ragmeter.tracking._wandb import log_to_wandb

__all__ = ["TrackedRun", "TrackingError", "log_to_mlflow", "log_to_wandb"]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.tracking._mlflow": ("log_to_mlflow",),
        "ragmeter.tracking._record": ("TrackedRun", "TrackingError"),
        "ragmeter.tracking._wandb": ("log_to_wandb",),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
