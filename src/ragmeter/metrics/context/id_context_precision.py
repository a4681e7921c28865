from ragmeter.dataset import Sample
from ragmeter.metrics._base import BatchMetric, MetricResult
from ragmeter.metrics._details import Details, PassageMatch
from ragmeter.metrics._spec import builtin_metric
from ragmeter.metrics.context._ids import ID_REQUIREMENTS, relevant_ids
from ragmeter.metrics.retrieval._ranking import average_precision


def id_verdicts(retrieved: list[str], relevant: set[str]) -> list[int]:
    """1 for each retrieved id that is relevant (a repeated id counts once)."""
    seen: set[str] = set()
    verdicts = []
    for doc in retrieved:
        verdicts.append(int(doc in relevant and doc not in seen))
        seen.add(doc)
    return verdicts


@builtin_metric(
    "id_context_precision",
    family="context",
    rank=270,
    summary=(
        "rank-weighted precision of retrieved ids (AP; RAGAS's id_based_context_precision ignores "
        "rank: precision@K with K = the number retrieved gives that)"
    ),
    aliases=("id_based_context_precision",),
)
class IDContextPrecision(BatchMetric):
    """Rank-weighted precision of the retrieved context ids (Average Precision, no LLM).

    Each retrieved id is useful when it is among ``reference_context_ids`` (or has a
    ``relevance`` grade of at least 1); the verdicts
    combine as in context precision: the mean of precision@k over the useful ranks k.
    (RAGAS's IDBasedContextPrecision ignores rank; ``precision@K`` gives that figure.)

    >>> s = Sample(retrieved_context_ids=list("axbyz"), reference_context_ids=["a", "b"])
    >>> round(IDContextPrecision().score(s).score, 3)
    0.833
    """

    name = "id_context_precision"
    requires = ID_REQUIREMENTS

    def score(self, sample: Sample) -> MetricResult:
        retrieved = sample.retrieved_context_ids or []
        if not retrieved:
            return MetricResult.not_applicable("no context was retrieved")
        verdicts = id_verdicts(retrieved, relevant_ids(sample))
        score = float(average_precision([verdicts])[0])
        return MetricResult.ok(
            score,
            reason=f"{sum(verdicts)} of {len(verdicts)} retrieved ids are relevant",
            details=Details(matches=tuple(PassageMatch(bool(v)) for v in verdicts)),
        )
