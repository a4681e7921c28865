"""What the run store's labels say of a run's judged metrics (issue 39): each one's
validation ("validated on 120 of your labels: kappa 0.71 [0.58, 0.83]" or "not validated on
your data") and the labelled pairs of its interval with judge error. ``ragmeter show``, the
eval summary, ``ragmeter report`` and the gate's ``min_agreement`` read them from here.

Cheap when nothing is labelled: a SQLite store file without labels of the run's metrics is
asked with the standard library (no SQLAlchemy); another store, one COUNT query; the agreement
code (numpy, the bootstrap) loads only when there are labels of the run's metrics.
"""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ragmeter.cli._app import print_warnings

if TYPE_CHECKING:
    from ragmeter.results import EvaluationResult
    from ragmeter.stats import LabelledPairs, Validation
    from ragmeter.store import Store


@dataclass(frozen=True)
class Trust:
    """Per metric: its validation on the team's labels, and its labelled (judge, human)
    pairs when some line up with the run's verdicts."""

    validations: "dict[str, Validation]" = field(default_factory=dict)
    labelled: "dict[str, LabelledPairs]" = field(default_factory=dict)


def _not_validated(metrics: list[str]) -> Trust:
    from ragmeter.stats import Validation

    return Trust({name: Validation(name, 0) for name in metrics})


def stored_trust(
    result: "EvaluationResult", store: str | None, opened: "Store | None" = None
) -> Trust:
    """The validations and labelled pairs of ``result``'s judged metrics from the labels
    kept in the run store ``opened`` (else the one at ``store``, when it exists). A run with
    no judged metric opens no store; a store that cannot be read is a warning and no
    validation at all (nothing is claimed)."""
    judged = result.judged_metrics()
    if not judged:
        return Trust()
    from ragmeter.store import may_hold_labels, store_url

    if opened is None and not may_hold_labels(store, judged):  # nothing more is loaded
        return _not_validated(judged)
    from sqlalchemy.exc import SQLAlchemyError

    from ragmeter._services import redact_secrets, redact_url
    from ragmeter.store import Store

    try:
        if opened is None:
            opened = Store(store)
        if not opened.count_labels(judged):
            return _not_validated(judged)
        labels = [k for k in opened.labels() if k.metric in judged]
    except (SQLAlchemyError, OSError, ValueError, ImportError) as error:
        where = store_url(store)
        said = redact_secrets(str(error).splitlines()[0] if str(error) else repr(error), where)
        print_warnings(
            [
                f"the labels in the run store {redact_url(where)} were not read ({said}): "
                "no validation shown"
            ]
        )
        return Trust()
    from ragmeter.align import judge_error_pairs, validations

    pairs = {name: judge_error_pairs(result, labels, name) for name in judged}
    return Trust(
        validations(result, labels, judged),
        {name: found for name, found in pairs.items() if found is not None},
    )
