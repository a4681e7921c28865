from ragmeter.dataset import Sample
from ragmeter.metrics._base import Requirements

#: The retrieved ids, and the relevant ones: reference ids or graded ``relevance``.
ID_REQUIREMENTS: Requirements = (("retrieved_context_ids",), ("reference_context_ids", "relevance"))


def relevant_ids(sample: Sample, relevance_level: float = 1.0) -> set[str]:
    """Ids of the sample's relevant contexts: graded ``relevance`` >= level, else the reference ids.

    >>> sorted(relevant_ids(Sample(relevance={"a": 2, "b": 0})))
    ['a']
    """
    return {doc for doc, grade in sample.qrels().items() if grade >= relevance_level}
