"""Log runs to experiment trackers: MLflow (:func:`log_to_mlflow`) and Weights & Biases
(:func:`log_to_wandb`), the same numbers, settings and files in both.

Each takes an :class:`~ragmeter.EvaluationResult` (or an experiment's result) and logs per
metric its mean, 95% CI, coverage and counts, per tag value the means, the judge's usage, the
run's settings (ragmeter version, dataset fingerprint, metric settings, judge, prompt
versions) and its files (the HTML report, results.jsonl). The libraries are optional
(``pip install 'ragmeter[mlflow]'`` / ``'ragmeter[wandb]'``) and imported only when called.
"""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.tracking._mlflow import log_to_mlflow as log_to_mlflow
    from ragmeter.tracking._record import TrackedRun as TrackedRun
    from ragmeter.tracking._record import TrackingError as TrackingError
    from ragmeter.tracking._wandb import log_to_wandb as log_to_wandb

_lazy.attach(__name__, __file__)
