"""The report's building blocks: formatting, histogram bins, markup, run comparison."""

from __future__ import annotations

import pytest

from ragmeter import Direction, MetricResult, Sample, evaluate
from ragmeter.report import Markup, el, esc, render_html, sample_card
from ragmeter.report import _format as fmt
from ragmeter.results import MetricInfo, SampleResult
from tests.report.conftest import built, ranking
from tests.report.dom import Node, parse


@pytest.mark.parametrize(
    ("value", "text"), [(None, "—"), (0.0, "0.0000"), (0.123456, "0.1235"), (1.0, "1.0000")]
)
def test_score(value, text):
    assert fmt.score(value) == text


@pytest.mark.parametrize(
    ("value", "text"), [(None, "—"), (0.25, "+0.2500"), (-0.1, "-0.1000"), (-1e-7, "0.0000")]
)
def test_signed(value, text):
    assert fmt.signed(value) == text


def test_change_follows_the_direction():
    up, down = Direction.HIGHER_IS_BETTER, Direction.LOWER_IS_BETTER
    assert fmt.change(0.1, up) == "better" and fmt.change(-0.1, up) == "worse"
    assert fmt.change(0.1, down) == "worse" and fmt.change(-0.1, down) == "better"
    assert fmt.change(0.0, up) == "same" and fmt.change(None, up) == "same"


def test_describe_service():
    assert fmt.describe_service({"kind": "scripted", "name": "scripted"}) == "scripted"
    line = fmt.describe_service(
        {"kind": "openai-compatible", "model": "qwen-plus", "base_url": "https://x/v1"}
    )
    assert line == "qwen-plus · openai-compatible · https://x/v1"
    assert fmt.describe_service({"kind": "local", "model": "m", "sha256": "ab12"}) == (
        "m · local · sha256 ab12"
    )


def test_describe_service_shows_no_credential_even_from_an_old_run_record():
    recorded = {"kind": "openai-compatible", "model": "m", "base_url": "https://u:pw@x/v1?key=k"}
    assert fmt.describe_service(recorded) == "m · openai-compatible · https://x/v1?key=***"


def bin_counts(scores: list[float | None]) -> list[int]:
    """The bins of the report's histogram of these scores (None: not applicable)."""
    results = [
        MetricResult.ok(v) if v is not None else MetricResult.not_applicable("-") for v in scores
    ]
    (histogram,) = parse(render_html(built({"m": results}))).find_all("svg", class_="hist")
    return [int(n) for n in histogram.attrs["data-counts"].split(",")]


def test_bins_clamp_and_skip_missing_scores():
    assert bin_counts([0.0, 0.1, 0.3, 0.7, 0.999, 1.0, 2.5, -1.0, None]) == [
        2, 1, 0, 1, 0, 0, 0, 1, 0, 3,
    ]  # fmt: skip


def test_markup_escapes_text_but_not_markup():
    assert esc("<b>&") == "&lt;b&gt;&amp;"
    assert el("p", "<x>", Markup("<i>y</i>"), None, ["a", "b"]) == "<p>&lt;x&gt;<i>y</i>ab</p>"
    assert el("td", 1, class_="num", data_x='"q"', hidden=True, title=None) == (
        '<td class="num" data-x="&quot;q&quot;" hidden>1</td>'
    )
    assert el("col", class_="c") == '<col class="c">'
    # the worst samples' question: white space made single spaces, cut at 200 with an ellipsis
    assert (
        _question("a  b\nc") == "a b c"
        and _question("abcdefghij" * 21) == "abcdefghij" * 19 + "abcdefghi…"
    )


def _question(text: str) -> str:
    """The question as the report's table of worst samples shows it."""
    result = built({"m": [MetricResult.ok(0.3)]}, texts=[text])
    section = parse(render_html(result, thresholds={"m": 0.5})).find(id="worst")
    (question,) = [div for div in section.find_all("div") if div.text().startswith("Q ")]
    return question.find_all("span")[1].text()


def _worst(result, n: int) -> list[str]:
    """The ids the report lists as the worst samples of metric m (those below 0.5)."""
    section = parse(render_html(result, worst=n, thresholds={"m": 0.5})).find(id="worst")
    block = [
        div for div in section.find_all("div", class_="worst") if div.attrs["data-metric"] == "m"
    ]
    return [a.text() for div in block for a in div.find_all("a")]


def test_worst_samples_skip_results_that_are_not_ok():
    result = built(
        {"m": [MetricResult.failed("x"), MetricResult.ok(0.3), MetricResult.not_applicable("y")]}
    )
    assert _worst(result, 5) == ["s1"]
    assert _worst(result, 0) == []


def test_failure_groups_largest_first():
    result = built(
        {"m": [MetricResult.failed("a"), MetricResult.failed("b"), MetricResult.failed("b")]}
    )
    rows = parse(render_html(result)).find(id="failures").find("tbody").find_all("tr")
    groups = [(r.find("code").text(), [a.text() for a in r.find_all("a")]) for r in rows]
    assert groups == [
        ("b", ["s1", "s2"]),
        ("a", ["s0"]),
    ]


def _compared(after, before) -> tuple[str, dict[str, list[str]], dict[str, list[tuple[str, str]]]]:
    """The report's comparison of ``after`` with ``before``: its text, per metric the cells
    of its row in the means table, and the samples that changed most with their Δ."""
    section = parse(render_html(after, compare=before)).find(id="compare")
    rows = {
        r.attrs["data-metric"]: [c.text() for c in r.find_all("td")]
        for r in section.find(id="compare-table").find_all("tr")
        if "data-metric" in r.attrs
    }
    changes: dict[str, list[tuple[str, str]]] = {}
    table = section.find_all("table", id="changes-table")
    for r in table[0].find_all("tr") if table else []:
        if "data-metric" in r.attrs:
            delta = r.find_all("td")[-2]  # Δ, before the question
            changes.setdefault(r.attrs["data-metric"], []).append(
                (r.find("a").text(), delta.text())
            )
    return section.text(), rows, changes


def test_comparison_on_hand_checked_data():
    before = evaluate(ranking([1, None, 3]), ["mrr"])  # 1, 0, 1/3
    after = evaluate(ranking([2, 1, 3]), ["mrr"])  # 1/2, 1, 1/3
    text, rows, changes = _compared(after, before)
    mrr = rows["mrr"]
    delta = (0.5 + 1 + 1 / 3 - 1 - 0 - 1 / 3) / 3
    assert mrr[4].split()[0] == f"{delta:+.4f}"
    assert mrr[6:9] == ["3", "1", "1"]  # paired, improved, worsened
    assert changes["mrr"] == [("q1", "+1.0000"), ("q0", "-0.5000")]
    assert "Both runs have the same 3 samples" in text  # the same samples
    assert "The dataset fingerprints differ" in text  # not the same dataset


def test_comparison_matches_samples_by_id_and_counts_status_changes():
    before = built(
        {"m": [MetricResult.ok(0.1), MetricResult.ok(0.2)]}, ids=["a", "b"], texts=["qa", "qb"]
    )
    after = built(
        {"m": [MetricResult.failed("x"), MetricResult.ok(0.9), MetricResult.ok(0.5)]},
        ids=["a", "c", "b"],
        texts=["qa", "qc", "qb"],
    )
    text, rows, changes = _compared(after, before)
    assert "compared on 2 shared samples (1 only in this run, 0 only in the baseline)" in text
    assert rows["m"][6] == "1" and rows["m"][9] == "1"  # paired, status changed
    assert changes["m"][0] == ("b", "+0.3000")
    assert "fingerprints differ" not in text  # hand-made runs carry no fingerprint


def test_a_metric_in_one_run_only_has_no_delta():
    before = built({"a": [MetricResult.ok(0.1)]})
    after = built({"b": [MetricResult.ok(0.2)]})
    _, rows, _ = _compared(after, before)
    assert list(rows) == ["b", "a"]
    assert rows["a"][4] == fmt.NONE and rows["a"][3] == fmt.NONE  # no delta, no current mean


def _details(metric: str, **details) -> Node:
    """The details of one result as a sample's card in the report shows them."""
    scored = SampleResult(0, 1, "s", Sample(id="s"), {metric: MetricResult.ok(0.5, **details)})
    card = parse(str(sample_card(scored, [MetricInfo(metric, Direction.HIGHER_IS_BETTER)])))
    (row,) = card.find("table", class_="metric-table").find("tbody").find_all("tr")
    return row.find_all("td")[3]  # reason or error, details


def test_details_of_answer_side_claims_entities_and_questions():
    dom = _details(
        "factual_correctness",
        tp=1,
        fp=1,
        fn=1,
        claims=[
            {"claim": "A", "side": "response", "in_reference": True},
            {"claim": "B", "side": "response", "in_reference": False},
            {"claim": "C", "side": "reference", "in_response": False},
        ],
    )
    items = [
        (li.attrs["class"], li.text()) for li in dom.find("ul", class_="claims").find_all("li")
    ]
    assert items == [
        ("good", "in referenceresponse: A"),
        ("bad", "not in referenceresponse: B"),
        ("warn", "missing in responsereference: C"),
    ]
    assert [c.text() for c in dom.find_all("span", class_="chip")] == ["tp 1", "fp 1", "fn 1"]
    entities = _details(
        "context_entity_recall", entities=[{"entity": "发票", "in_contexts": False}]
    )
    assert entities.find("span", class_="bad").text() == "✗ 发票"
    questions = _details(
        "answer_relevancy", questions=["q1", "q2"], similarities=[0.5, 0.25], noncommittal=False
    )
    assert [li.text() for li in questions.find_all("li")] == ["0.500q1", "0.250q2"]
    assert "similarities" not in questions.text() and "noncommittal False" in questions.text()


def test_details_of_noise_sensitivity_claims():
    dom = _details(
        "noise_sensitivity_relevant",
        claims=[
            {"claim": "x", "correct": False, "counted": True},
            {"claim": "y", "correct": False, "counted": False},
            {"claim": "z", "correct": True, "counted": False},
        ],
        relevant_contexts=[1, 3],
    )
    verdicts = [s.text() for s in dom.find_all("span", class_="verdict")]
    assert verdicts == ["incorrect · counted as noise", "incorrect", "correct"]
    assert "relevant_contexts 1, 3" in dom.text()


def test_verdict_strips_say_what_they_follow():
    precision = _details("id_context_precision", verdicts=[1, 0])
    assert "relevant, by retrieved rank" in precision.text()
    assert [c.text() for c in precision.find_all("span", class_="chip")] == ["#1 ✓", "#2 ✗"]
    recall = _details("string_context_recall", verdicts=[0], similarities=[0.2])
    assert "found, per reference context" in recall.text()
    assert recall.find("span", class_="bad").attrs["title"] == "similarity 0.2"


def test_context_marks_collect_verdicts_by_rank():
    scores = {
        "context_precision": MetricResult.ok(
            1.0, contexts=[{"rank": 1, "useful": True, "reason": "r"}, {"rank": 2, "useful": 0}]
        ),
        "id_context_precision": MetricResult.ok(0.5, verdicts=[0, 1]),
        "string_context_recall": MetricResult.ok(0.0, verdicts=[0, 0]),
        "context_recall": MetricResult.ok(
            1.0, statements=[{"statement": "s", "found": True, "contexts": [2, 9]}]
        ),
    }
    sample = Sample(id="s", retrieved_contexts=["first", "second"])
    infos = [MetricInfo(name, Direction.HIGHER_IS_BETTER) for name in scores]
    card = parse(str(sample_card(SampleResult(0, 1, "s", sample, scores), infos)))
    marks = [
        [
            (chip.text(), chip.attrs["class"].split()[1], chip.attrs.get("title", ""))
            for chip in item.find_all("span", class_="chip")
        ]
        for item in card.find("ol", class_="contexts").find_all("li")
    ]
    assert len(marks) == 2
    assert marks[0] == [("context_precision ✓", "good", "r"), ("id_context_precision ✗", "bad", "")]
    assert [m[0] for m in marks[1]] == [
        "context_precision ✗",
        "id_context_precision ✓",
        "context_recall: 1 statement",
    ]
