"""The abstention section (the four outcomes, wrong ones linked) and the claim-level
diagnostics section (RAGChecker's view: retriever vs generator), with the counts the
markdown summary shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ragmeter.metrics import Status
from ragmeter.report import _format as fmt
from ragmeter.report._html_samples import Links
from ragmeter.report._markup import Markup, el, head_row, join, num, table
from ragmeter.results import EvaluationResult, SampleResult

ABSTENTION = "abstention"
#: The outcomes in the order shown, with what each means; the last two are wrong (score 0).
OUTCOMES: tuple[tuple[str, str], ...] = (
    ("answered", "should answer, answered"),
    ("abstained", "should abstain, abstained"),
    ("wrongly_refused", "should answer, refused"),
    ("hallucinated_instead_of_refusing", "should abstain, answered"),
)
WRONG = ("wrongly_refused", "hallucinated_instead_of_refusing")


@dataclass
class AbstentionCounts:
    """How the run's samples split over the abstention outcomes, failures, n/a and samples
    not started included (``unknown``: scored without an outcome, e.g. a metric of the same
    name of your own)."""

    n_total: int = 0
    outcomes: dict[str, list[SampleResult]] = field(
        default_factory=lambda: {name: [] for name, _ in OUTCOMES}
    )
    failed: list[SampleResult] = field(default_factory=list)
    not_applicable: list[SampleResult] = field(default_factory=list)
    not_started: list[SampleResult] = field(default_factory=list)
    unknown: list[SampleResult] = field(default_factory=list)

    def rows(self) -> list[tuple[str, str, list[SampleResult]]]:
        """(outcome, meaning, samples) for every outcome, then the samples without one."""
        rows = [(name, meaning, self.outcomes[name]) for name, meaning in OUTCOMES]
        rows.append(("failed", "no verdict: the judge or the input failed", self.failed))
        rows.append(("not applicable", "nothing to judge", self.not_applicable))
        if self.not_started:
            rows.append(("not started", "the run stopped before judging it", self.not_started))
        if self.unknown:
            rows.append(("no outcome recorded", "scored without an outcome", self.unknown))
        return rows

    def share(self, samples: Sequence[SampleResult]) -> str:
        return fmt.percent(len(samples) / self.n_total) if self.n_total else fmt.NONE


def abstention_counts(result: EvaluationResult) -> AbstentionCounts | None:
    """The outcome of every sample, or ``None`` when the run has no abstention metric.

    E.g. four samples that answered, abstained, were wrongly refused and failed: one in
    each of those rows, each 1/4 = 25% of the samples (tests/report/test_abstention.py).
    """
    if ABSTENTION not in {m.name for m in result.metrics}:
        return None
    counts = AbstentionCounts()
    for sample in result.samples:
        found = sample.scores.get(ABSTENTION)
        if found is None:
            continue
        counts.n_total += 1
        if found.status is Status.FAILED:
            counts.failed.append(sample)
        elif found.status is Status.NOT_APPLICABLE:
            counts.not_applicable.append(sample)
        elif found.status is Status.NOT_STARTED:
            counts.not_started.append(sample)
        elif found.details.abstention is None:
            counts.unknown.append(sample)
        else:
            counts.outcomes[found.details.abstention.outcome.value].append(sample)
    return counts


def abstention_section(counts: AbstentionCounts, links: Links) -> Markup:
    """The outcome table (count and share of all samples) and links to the wrong ones."""
    head = head_row("outcome", "meaning", num("samples"), num("share"))
    rows = [
        el(
            "tr",
            el("td", name),
            el("td", meaning, class_="muted"),
            el("td", len(samples), class_="num worse" if name in WRONG and samples else "num"),
            el("td", counts.share(samples), class_="num"),
            data_outcome=name,
        )
        for name, meaning, samples in counts.rows()
    ]
    wrong = [
        el(
            "p",
            el("b", f"{name.replace('_', ' ')}: "),
            links.link_list(counts.outcomes[name]),
            data_outcome=name,
        )
        for name in WRONG
        if counts.outcomes[name]
    ]
    note = el(
        "p",
        "Shares are of all samples with an abstention result, failed and not applicable "
        "included. Wrongly refused: the contexts (or the sample's metadata) supported an "
        "answer and the system declined; hallucinated instead of refusing: it should have "
        "said it does not know and answered.",
        class_="muted caption",
    )
    return join([note, table(head, rows, class_="fit"), *wrong])


Side = Literal["retriever", "generator"]
#: RAGChecker's claim-level view: (side, metric, what its mean says).
CLAIM_DIAGNOSTICS: tuple[tuple[Side, str, str], ...] = (
    (
        "retriever",
        "context_recall",
        "claim recall: share of the reference's claims found in the retrieved contexts "
        "— what retrieval missed",
    ),
    (
        "retriever",
        "context_precision",
        "rank-weighted share of the retrieved contexts useful for the answer — noise ranked "
        "above the facts",
    ),
    (
        "retriever",
        "claim_context_utilization",
        "share of the reference's claims found in the contexts that the response states "
        "— facts retrieved but left unused",
    ),
    (
        "generator",
        "faithfulness",
        "share of the response's claims the contexts support — grounded in what was retrieved",
    ),
    (
        "generator",
        "noise_sensitivity_relevant",
        "share of claims wrong and taken from relevant contexts — misled by noise next to "
        "the facts",
    ),
    (
        "generator",
        "noise_sensitivity_irrelevant",
        "share of claims wrong and taken from irrelevant contexts — misled by passages off "
        "the question",
    ),
    (
        "generator",
        "hallucination",
        "share of claims wrong and in no context — the generator made them up",
    ),
    (
        "generator",
        "self_knowledge",
        "share of claims correct but in no context — answered from the model's own memory",
    ),
)
#: The metrics whose presence shows the section (context precision alone does not).
CLAIM_LEVEL = frozenset(m for _, m, _ in CLAIM_DIAGNOSTICS) - {"context_precision"}


def claim_diagnostics(result: EvaluationResult) -> list[tuple[Side, str, str]]:
    """The rows of :data:`CLAIM_DIAGNOSTICS` the run has, or none when it has no claim-level
    metric."""
    names = {m.name for m in result.metrics}
    if not names & CLAIM_LEVEL:
        return []
    return [row for row in CLAIM_DIAGNOSTICS if row[1] in names]


def claim_section(result: EvaluationResult, rows: list[tuple[Side, str, str]]) -> Markup:
    """The run's means split into retriever and generator, one reading each."""
    head = head_row(
        "side", "metric", "better", num("mean"), num("coverage"), num("failed"), "reading"
    )
    body = []
    for side, name, reading in rows:
        agg = result.aggregates[name]
        body.append(
            el(
                "tr",
                el("td", side),
                el("td", name),
                el("td", fmt.arrow(agg.direction), class_="dir"),
                el("td", fmt.score(agg.mean), class_="num"),
                el("td", f"{agg.n_ok}/{agg.n_total}", class_="num"),
                el("td", agg.n_failed, class_="num worse" if agg.n_failed else "num"),
                el("td", reading, class_="muted"),
                data_metric=name,
            )
        )
    note = el(
        "p",
        "RAGChecker's claim-level view of this run: retriever metrics say what retrieval "
        "found, generator metrics what the generator did with it. Means cover the scored "
        "samples only.",
        class_="muted caption",
    )
    return join([note, table(head, body)])


def abstention_sections(result: EvaluationResult, links: Links) -> list[tuple[str, str, Markup]]:
    """The sections this module adds to the HTML report, where the run has their metrics."""
    sections = []
    counts = abstention_counts(result)
    if counts is not None:
        sections.append(("abstention", "Abstention", abstention_section(counts, links)))
    rows = claim_diagnostics(result)
    if rows:
        sections.append(("claims", "Claim-level diagnostics", claim_section(result, rows)))
    return sections
