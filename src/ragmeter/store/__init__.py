"""The run store: every evaluation run recorded in SQLite (embedded default) or PostgreSQL,
listed, loaded back as an :class:`~ragmeter.EvaluationResult` and compared."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.store._store import DEFAULT_URL as DEFAULT_URL
    from ragmeter.store._store import ESTIMATE_RESAMPLES as ESTIMATE_RESAMPLES
    from ragmeter.store._store import AmbiguousRunError as AmbiguousRunError
    from ragmeter.store._store import RunInfo as RunInfo
    from ragmeter.store._store import RunNotFoundError as RunNotFoundError
    from ragmeter.store._store import Store as Store
    from ragmeter.store._store import StoreError as StoreError
    from ragmeter.store._store import git_state as git_state
    from ragmeter.store._store import parameter_changes as parameter_changes
    from ragmeter.store._store import run_estimates as run_estimates
    from ragmeter.store._store import store_exists as store_exists
    from ragmeter.store._store import store_url as store_url

_lazy.attach(__name__, __file__)
