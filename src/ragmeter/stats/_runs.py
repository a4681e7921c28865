"""Reading what the statistics need out of an :class:`EvaluationResult`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ragmeter.metrics import Status
from ragmeter.results import EvaluationResult, tags_of


def metric_names(
    result: EvaluationResult, metrics: Iterable[str] | None, which: str = ""
) -> list[str]:
    """The metrics asked for (all of the run's by default), checked against the run."""
    known = [m.name for m in result.metrics]
    if metrics is None:
        return known
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in names if m not in known]
    if unknown:
        raise ValueError(f"no metric(s) {unknown} in the {which}run; it has {known}")
    return names


@dataclass
class RunScores:
    """Per sample (in dataset order): its id, its tags, and each metric's ok score or None."""

    ids: list[str] = field(default_factory=list)
    questions: list[str | None] = field(default_factory=list)
    tags: list[dict[str, list[str]]] = field(default_factory=list)
    scores: dict[str, list[float | None]] = field(default_factory=dict)


def read_scores(result: EvaluationResult, metrics: list[str]) -> RunScores:
    """One pass over the run's samples (streamed from its store when it has one)."""
    out = RunScores(scores={m: [] for m in metrics})
    for sample in result:
        out.ids.append(sample.sample_id)
        out.questions.append(sample.sample_value("user_input"))
        out.tags.append(tags_of(sample.sample_value("metadata")))
        for m in metrics:
            r = sample.scores[m]
            out.scores[m].append(r.score if r.status is Status.OK else None)
    return out


def tag_values(run: RunScores, tag: str) -> list[str]:
    return sorted({v for tags in run.tags for v in tags.get(tag, [])})


def restrict(run: RunScores, tag: str, value: str, which: str) -> RunScores:
    """The samples of ``run`` whose tag ``tag`` has ``value`` (a list-valued tag: contains it)."""
    keep = [i for i, tags in enumerate(run.tags) if value in tags.get(tag, [])]
    if not keep:
        values = tag_values(run, tag)
        raise ValueError(
            f"no sample of the {which} run has {tag}={value!r}; "
            + (f"its values of {tag!r}: {values}" if values else f"no sample carries {tag!r}")
        )
    return RunScores(
        [run.ids[i] for i in keep],
        [run.questions[i] for i in keep],
        [run.tags[i] for i in keep],
        {m: [s[i] for i in keep] for m, s in run.scores.items()},
    )


def check_pairing(base: RunScores, cand: RunScores) -> None:
    """Samples paired by id must ask the same question: ids made from row numbers (no id
    field) pair unrelated samples when the two datasets differ."""
    questions = dict(zip(base.ids, base.questions))
    for sample_id, question in zip(cand.ids, cand.questions):
        before = questions.get(sample_id)
        if before is not None and question is not None and before != question:
            raise ValueError(
                f"sample {sample_id!r} asks a different question in the two runs "
                f"({before[:60]!r} vs {question[:60]!r}): pairing by id needs stable ids; "
                "give every sample an id field in both datasets"
            )
