"""A small retrieval-only run whose every logged number is worked out by hand below."""

from __future__ import annotations

from ragmeter import Metric, MetricResult, Sample, evaluate
from ragmeter.metrics import Requirements
from ragmeter.results import EvaluationResult


class Exploding(Metric):
    """1.0 for every response but 'boom', on which it raises (a failed result)."""

    name = "exploding"
    requires: Requirements = (("response",),)

    def score(self, sample: Sample) -> MetricResult:
        if sample.response == "boom":
            raise ValueError("cannot score boom")
        return MetricResult.ok(1.0)


#: Every sample retrieves a, b, c; the relevant id is at rank 1, 2, 3 and nowhere.
RECORDS = [
    {
        "id": f"s{i}",
        "user_input": f"question {i}?",
        "response": response,
        "reference": f"reference {i}",
        "retrieved_context_ids": ["a", "b", "c"],
        "reference_context_ids": [relevant],
        "question_type": question_type,
    }
    for i, (relevant, question_type, response) in enumerate(
        [
            ("a", "lookup", "ok"),
            ("b", "multi/hop", "ok"),
            ("c", "lookup", "boom"),
            ("z", "multi/hop", "ok"),
        ]
    )
]

#: Reciprocal ranks 1, 1/2, 1/3, 0; recall@2 finds the first two only.
MRR = [1.0, 0.5, 1 / 3, 0.0]
RECALL_AT_2 = [1.0, 1.0, 0.0, 0.0]

#: The numbers logged, by hand. exploding scores 1.0 on s0, s1, s3 and fails on s2, so its CI
#: is the zero-width [1, 1]; "multi/hop" is logged as multi_hop (a slash would add a level).
EXPECTED = {
    "mrr": (1 + 0.5 + 1 / 3 + 0) / 4,
    "mrr/median": (1 / 3 + 0.5) / 2,
    "mrr/coverage": 1.0,
    "mrr/n_ok": 4,
    "mrr/n_total": 4,
    "mrr/n_failed": 0,
    "mrr/n_not_applicable": 0,
    "mrr/n_not_started": 0,
    "recall@2": 0.5,
    "recall@2/median": 0.5,
    "exploding": 1.0,
    "exploding/ci_low": 1.0,
    "exploding/ci_high": 1.0,
    "exploding/coverage": 0.75,
    "exploding/n_ok": 3,
    "exploding/n_failed": 1,
    "by_question_type/lookup/n_samples": 2,
    "by_question_type/lookup/mrr": (1 + 1 / 3) / 2,
    "by_question_type/lookup/recall@2": 0.5,
    "by_question_type/lookup/exploding": 1.0,
    "by_question_type/multi_hop/n_samples": 2,
    "by_question_type/multi_hop/mrr": 0.25,
    "by_question_type/multi_hop/recall@2": 0.5,
    "n_samples": 4,
    "n_skipped": 0,
}


def small_run() -> EvaluationResult:
    return evaluate(RECORDS, ["mrr", "recall@2", Exploding()], progress=False)
