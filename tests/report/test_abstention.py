"""The report's Abstention section (outcome counts and shares, failures counted, wrong
outcomes linked) and its Claim-level diagnostics section, in HTML and markdown."""

from __future__ import annotations

from ragmeter import EvaluationResult, Metric, MetricResult, Sample, evaluate
from ragmeter.metrics import AbstentionFinding, AbstentionOutcome, Details, Direction, Requirements
from ragmeter.report import render_html, render_markdown
from tests.report.dom import parse

#: Ten samples: 3 answered, 2 abstained, 1 wrongly refused, 2 hallucinated instead of
#: refusing, 1 failed, 1 not applicable (shares 30%, 20%, 10%, 20%, 10%, 10% of 10).
OUTCOMES = {
    "a1": "answered",
    "a2": "answered",
    "a3": "answered",
    "b1": "abstained",
    "b2": "abstained",
    "w1": "wrongly_refused",
    "h1": "hallucinated_instead_of_refusing",
    "h2": "hallucinated_instead_of_refusing",
    "f1": "failed",
    "n1": None,
}
IDS = list(OUTCOMES)


class Outcomes(Metric):
    """An abstention metric with the outcome of each sample given (``failed``: a failure)."""

    name = "abstention"
    requires: Requirements = ()

    def score(self, sample: Sample) -> MetricResult:
        outcome = OUTCOMES[str(sample.id)]
        if outcome == "failed":
            return MetricResult.failed("JudgeError: the judge timed out")
        if outcome is None:
            return MetricResult.not_applicable("nothing to judge")
        found = AbstentionOutcome(outcome)
        should = found in (
            AbstentionOutcome.ABSTAINED,
            AbstentionOutcome.HALLUCINATED_INSTEAD_OF_REFUSING,
        )
        did = found in (AbstentionOutcome.ABSTAINED, AbstentionOutcome.WRONGLY_REFUSED)
        finding = AbstentionFinding(found, should, did, "metadata", "the sample is marked")
        return MetricResult.ok(float(found.right), details=Details(abstention=finding))


class Given(Metric):
    """Scores given by sample id (``None``: failed)."""

    requires: Requirements = ()

    def __init__(self, name: str, scores: list[float | None], lower: bool = False) -> None:
        self.name = name
        self.scores = dict(zip(IDS, scores))
        if lower:
            self.direction = Direction.LOWER_IS_BETTER

    def score(self, sample: Sample) -> MetricResult:
        value = self.scores[str(sample.id)]
        return MetricResult.failed("boom") if value is None else MetricResult.ok(value)


RECORDS = [{"id": i, "user_input": f"question {i}", "response": "r"} for i in IDS]


def _outcome_rows(page: str) -> dict[str, list[str]]:
    section = parse(page).find("section", id="abstention")
    return {
        row.attrs["data-outcome"]: [c.text() for c in row.find_all("td")][2:]
        for row in section.find_all("tr")
        if "data-outcome" in row.attrs
    }


def test_the_abstention_section_counts_every_outcome_failures_included():
    page = render_html(evaluate(RECORDS, [Outcomes()]))
    assert _outcome_rows(page) == {
        "answered": ["3", "30%"],
        "abstained": ["2", "20%"],
        "wrongly_refused": ["1", "10%"],
        "hallucinated_instead_of_refusing": ["2", "20%"],
        "failed": ["1", "10%"],
        "not applicable": ["1", "10%"],
    }
    section = parse(page).find("section", id="abstention")
    refused = section.find("p", data_outcome="wrongly_refused")
    assert [a.attrs["href"] for a in refused.find_all("a")] == ["#sample-5"]
    made_up = section.find("p", data_outcome="hallucinated_instead_of_refusing")
    assert [a.text() for a in made_up.find_all("a")] == ["h1", "h2"]
    # every linked sample has its card
    anchors = {n.attrs["id"] for n in parse(page).iter() if "id" in n.attrs}
    assert {"sample-5", "sample-6", "sample-7"} <= anchors
    nav = [a.attrs["href"] for a in parse(page).find("nav").find_all("a")]
    assert nav.index("#abstention") == nav.index("#diagnosis") + 1
    assert nav.index("#breakdowns") == nav.index("#abstention") + 1


def test_the_abstention_section_reads_a_stored_run(tmp_path):
    evaluate(RECORDS, [Outcomes()], run_dir=tmp_path)
    loaded = EvaluationResult.load(tmp_path)
    assert _outcome_rows(render_html(loaded))["hallucinated_instead_of_refusing"] == ["2", "20%"]


def test_the_markdown_summary_has_the_abstention_table_and_the_wrong_samples():
    text = render_markdown(evaluate(RECORDS, [Outcomes()]))
    section = text.split("### Abstention\n\n", 1)[1]
    assert "| answered | should answer, answered | 3 | 30% |" in section
    assert "| wrongly\\_refused |" not in section  # underscores are not markdown specials
    assert "| wrongly_refused | should answer, refused | 1 | 10% |" in section
    assert "| failed | no verdict: the judge or the input failed | 1 | 10% |" in section
    assert "| not applicable | nothing to judge | 1 | 10% |" in section
    assert "- wrongly refused: `w1`" in section
    assert "- hallucinated instead of refusing: `h1`, `h2`" in section


def test_no_section_without_their_metrics():
    result = evaluate(RECORDS, [Given("exact_match", [1.0] * 10)])
    dom = parse(render_html(result))
    assert not dom.find_all("section", id="abstention")
    assert not dom.find_all("section", id="claims")
    text = render_markdown(result)
    assert "### Abstention" not in text and "### Claim-level diagnostics" not in text


def _claim_run() -> EvaluationResult:
    return evaluate(
        RECORDS,
        [
            # generator first in the run: the section still puts the retriever first
            Given("hallucination", [0.2, 0.0, 0.4, None, 0.0, 0.0, 0.0, 0.2, 0.0, 0.2], True),
            Given("faithfulness", [1.0, 0.5] * 5),
            Given("context_recall", [1.0, 0.0] * 5),
            Given("context_precision", [0.5] * 10),
        ],
    )


def test_the_claim_level_section_splits_retriever_and_generator():
    dom = parse(render_html(_claim_run()))
    section = dom.find("section", id="claims")
    rows = [[c.text() for c in r.find_all("td")] for r in section.find_all("tr")[1:]]
    assert [r[:2] for r in rows] == [
        ["retriever", "context_recall"],
        ["retriever", "context_precision"],
        ["generator", "faithfulness"],
        ["generator", "hallucination"],
    ]
    # recall: (1 + 0) * 5 / 10 = 0.5; faithfulness: (1 + 0.5) * 5 / 10 = 0.75;
    # hallucination: (0.2 + 0.4 + 0.2 + 0.2) / 9 scored = 1.0 / 9 = 0.1111, 1 failed
    assert rows[0][2:6] == ["↑", "0.5000", "10/10", "0"]
    assert rows[2][3] == "0.7500"
    assert rows[3][2:6] == ["↓", "0.1111", "9/10", "1"]
    assert "the generator made them up" in rows[3][6]
    nav = [a.attrs["href"] for a in dom.find("nav").find_all("a")]
    assert nav.index("#claims") == nav.index("#diagnosis") + 1


def test_the_markdown_claim_level_table():
    text = render_markdown(_claim_run())
    section = text.split("### Claim-level diagnostics\n\n", 1)[1]
    lines = section.splitlines()
    assert lines[0] == "| side | metric | better | mean | coverage | failed | reading |"
    assert lines[2].startswith("| retriever | `context_recall` | ↑ | 0.5000 | 10/10 | 0 | ")
    assert lines[5].startswith("| generator | `hallucination` | ↓ | 0.1111 | 9/10 | 1 | ")


def test_context_precision_alone_shows_no_claim_level_section():
    result = evaluate(RECORDS, [Given("context_precision", [0.5] * 10)])
    assert not parse(render_html(result)).find_all("section", id="claims")


def test_samples_the_run_never_started_get_their_own_row_not_no_outcome():
    from ragmeter import Status
    from ragmeter.results import MetricInfo, SampleResult

    not_started = MetricResult(None, Status.NOT_STARTED, reason="not started: max_cost")
    samples = [
        SampleResult(0, 1, "s0", Sample(id="s0", user_input="q"), {"abstention": not_started})
    ]
    run = EvaluationResult(samples, [MetricInfo("abstention", Direction.HIGHER_IS_BETTER)], {})
    rows = _outcome_rows(render_html(run))
    assert rows["not started"] == ["1", "100%"]  # the one sample, in its own row
    assert "no outcome recorded" not in rows and sum(int(n) for n, _ in rows.values()) == 1
