"""The run store: every evaluation run recorded in SQLite (embedded default) or PostgreSQL,
listed, loaded back as an :class:`~ragmeter.EvaluationResult` and compared; and people's
labels of what the metrics judged (:class:`Label`, ``Store.add_labels`` / ``Store.labels``)."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.store._labels import LABEL_FIELDS as LABEL_FIELDS
    from ragmeter.store._labels import LEVELS as LEVELS
    from ragmeter.store._labels import PREFERENCES as PREFERENCES
    from ragmeter.store._labels import Label as Label
    from ragmeter.store._labels import LabelError as LabelError
    from ragmeter.store._labels import LabelValue as LabelValue
    from ragmeter.store._labels import sample_key as sample_key
    from ragmeter.store._labels import utc_text as utc_text
    from ragmeter.store._store import ESTIMATE_RESAMPLES as ESTIMATE_RESAMPLES
    from ragmeter.store._store import AmbiguousRunError as AmbiguousRunError
    from ragmeter.store._store import RunInfo as RunInfo
    from ragmeter.store._store import RunNotFoundError as RunNotFoundError
    from ragmeter.store._store import Store as Store
    from ragmeter.store._store import StoreError as StoreError
    from ragmeter.store._store import git_state as git_state
    from ragmeter.store._store import parameter_changes as parameter_changes
    from ragmeter.store._store import run_estimates as run_estimates
    from ragmeter.store._url import DEFAULT_URL as DEFAULT_URL
    from ragmeter.store._url import may_hold_labels as may_hold_labels
    from ragmeter.store._url import store_exists as store_exists
    from ragmeter.store._url import store_url as store_url

_lazy.attach(__name__, __file__)
