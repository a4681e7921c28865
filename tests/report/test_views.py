"""The report's views of uncertainty, worst samples, retrieval, tags and run-vs-run charts.

Expected values come from the inputs (worked out by hand in the comments) or, for the
bootstrap intervals, from the statistics function the CLI calls, never from the report."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ragmeter import Direction, EvaluationResult, MetricResult, Sample, Status, evaluate
from ragmeter.report import render_html, render_markdown, sample_card
from ragmeter.results import MetricInfo, SampleResult
from ragmeter.stats import estimate_means
from tests.report.conftest import built, ranking
from tests.report.dom import Node, parse

OK = MetricResult.ok


def _rows(table: Node) -> dict[str, list[str]]:
    return {
        r.attrs["data-metric"]: [c.text() for c in r.find_all("td")]
        for r in table.find_all("tr")
        if "data-metric" in r.attrs
    }


# --- 1. the CI of each mean -------------------------------------------------------------


def test_summary_ci_is_the_one_ragmeter_show_computes(llm_result):
    """The CLI's ``ragmeter show`` calls estimate_means(result, n_resamples=2_000)."""
    expected = estimate_means(llm_result, n_resamples=2_000)
    html_rows = _rows(parse(render_html(llm_result)).find(id="summary-table"))
    md_lines = render_markdown(llm_result).splitlines()
    for metric in llm_result.metrics:
        ci = expected[metric.name].ci
        assert ci is not None
        text = f"{ci.low:.4f}–{ci.high:.4f}"
        assert html_rows[metric.name][3] == text
        md_row = next(line for line in md_lines if line.startswith(f"| `{metric.name}` |"))
        assert md_row.split(" | ")[3] == text
    # faithfulness scores 0.5, 1, 0, 1: the interval holds the mean 0.625 and stays in 0..1
    ci = expected["faithfulness"].ci
    assert 0.0 <= ci.low <= 0.625 <= ci.high <= 1.0 and ci.low < ci.high


def test_summary_ci_agrees_with_the_cli_table(llm_result, tmp_path):
    from typer.testing import CliRunner

    from ragmeter.cli import app

    shown = CliRunner().invoke(app, ["show", str(llm_result.save(tmp_path / "run"))],
                               env={"COLUMNS": "200"})  # fmt: skip
    assert shown.exit_code == 0, shown.output
    printed = shown.output
    cells = _rows(parse(render_html(llm_result)).find(id="summary-table"))
    for metric in llm_result.metrics:
        low, high = (float(v) for v in cells[metric.name][3].split("–"))
        assert f"{low:.2f}–{high:.2f}" in printed  # the CLI prints 2 decimals


def test_summary_ci_by_hand_and_where_none_can_be_computed():
    # constant scores: every resample has mean 1, so the interval is 1 to 1
    constant = built({"m": [OK(1.0), OK(1.0), OK(1.0)]})
    assert _rows(parse(render_html(constant)).find(id="summary-table"))["m"][3] == ("1.0000–1.0000")
    # one score of two: no interval, said in words; coverage 1/2 stays visible
    single = built({"m": [OK(0.4), MetricResult.failed("boom")]})
    page = render_html(single)
    row = _rows(parse(page).find(id="summary-table"))["m"]
    assert row == ["m", "↑", "0.4000", "n/a: 1 scored, needs 2", "0.4000", "1/2", "0", "1"]
    assert "nan" not in re.sub(r"<style>.*?</style>", "", page, flags=re.S).lower()
    cell = parse(page).find("td", class_="ci")
    assert cell.attrs["data-ci"] == "none" and "at least 2" in cell.attrs["title"]
    text = render_markdown(single)
    assert "| `m` | ↑ | 0.4000 | n/a: 1 scored, needs 2 | 0.4000 | 1/2 | 0 | 1 |" in text
    assert "nan" not in text.lower()
    assert "95% CI: bootstrap (BCa, 2,000 resamples) interval of the mean" in text


# --- 2. worst samples: only below the median (or a threshold) -----------------------------


def _worst_ids(page: str, metric: str) -> list[str]:
    block = parse(page).find("div", class_="worst", data_metric=metric)
    return [a.text() for a in block.find_all("a")]


def test_perfect_scores_are_never_worst_and_an_empty_list_is_explained():
    perfect = built({"m": [OK(1.0)] * 4})
    section = parse(render_html(perfect)).find(id="worst")
    block = section.find("div", class_="worst", data_metric="m")
    assert block.find_all("table") == [] and block.find_all("a") == []
    note = block.find("p", class_="none-below").text()
    assert note == "No sample below the median (1.0000): all 4 scored samples are at or above it."
    assert "never listed" in section.find("p", class_="caption").text()


def test_only_samples_below_the_median_are_listed():
    # scores 1, 0.2, 1, 0.6, 1: median 1, so s1 (0.2) and s3 (0.6), lowest first
    result = built({"m": [OK(1.0), OK(0.2), OK(1.0), OK(0.6), OK(1.0)]})
    page = render_html(result)
    assert _worst_ids(page, "m") == ["s1", "s3"]
    heading = parse(page).find("div", class_="worst", data_metric="m").find("h3").text()
    assert "2 samples below the median (1.0000), of 5 scored" in heading


def test_a_threshold_replaces_the_median():
    # scores 0.9, 0.1, 0.5, 0.1, 0.7; below 0.6: s1, s3 (0.1), then s2 (0.5); median 0.5
    # alone would leave s2 out
    result = built({"m": [OK(s) for s in (0.9, 0.1, 0.5, 0.1, 0.7)]})
    page = render_html(result, thresholds={"m": 0.6})
    assert _worst_ids(page, "m") == ["s1", "s3", "s2"]
    heading = parse(page).find("div", class_="worst", data_metric="m").find("h3").text()
    assert "below the threshold (0.6000)" in heading
    assert _worst_ids(render_html(result), "m") == ["s1", "s3"]


def test_worst_below_counts_all_and_lists_at_most_n():
    result = built(
        {"noise": [OK(s) for s in (0.0, 0.9, 0.8, 0.1, 0.7)]},
        direction=Direction.LOWER_IS_BETTER,
    )
    # median 0.7; above it (worse for a ↓ metric): 0.9 (s1) and 0.8 (s2)
    page = render_html(result, worst=1)
    heading = parse(page).find("div", class_="worst", data_metric="noise").find("h3").text()
    assert "the 1 highest of 2 samples above the median (0.7000), of 5 scored" in heading
    assert _worst_ids(page, "noise") == ["s1"]


# --- 3. retrieved ids against relevant ids ----------------------------------------------


def _retrieval_run() -> EvaluationResult:
    records = [
        # relevant b (rank 2) and z (not retrieved): MRR 1/2, recall@3 1/2
        {"id": "q0", "retrieved_context_ids": ["a", "b", "c"], "reference_context_ids": ["b", "z"]},
        # relevant x at rank 1: MRR 1, recall@3 1; the median MRR is (0.5 + 1) / 2 = 0.75
        {"id": "q1", "retrieved_context_ids": ["x", "y"], "reference_context_ids": ["x"]},
    ]
    return evaluate(records, ["mrr", "recall@3"])


def _chips(view: Node) -> dict[str, Node]:
    return {n.attrs["data-id"]: n for n in view.find_all("span", class_="rid")}


def test_sample_card_marks_relevant_retrieved_ids_and_lists_the_missing_ones():
    run = _retrieval_run()
    card = parse(render_html(run)).find(id="sample-0")  # q0, linked as a worst sample
    view = card.find("div", class_="retrieval")
    chips = _chips(view)
    assert list(chips) == ["a", "b", "c"]
    assert "relevant" in chips["b"].attrs["class"].split() and "✓" in chips["b"].text()
    for other in ("a", "c"):
        assert "relevant" not in chips[other].attrs["class"].split()
        assert "✓" not in chips[other].text()
    missing = view.find_all("span", class_="missing")
    assert [m.attrs["data-id"] for m in missing] == ["z"]
    assert "1 of 2 relevant retrieved" in view.text()


def test_worst_retrieval_rows_show_retrieved_against_relevant_ids():
    dom = parse(render_html(_retrieval_run()))
    row = dom.find("div", class_="worst", data_metric="mrr").find("tbody").find("tr")
    assert row.find("a").text() == "q0"
    chips = _chips(row.find("div", class_="retrieval"))
    assert [d for d, n in chips.items() if "relevant" in n.attrs["class"].split()] == ["b"]


def test_graded_relevance_counts_grades_from_one_and_no_view_without_judgments():
    sample = Sample(id="g", retrieved_context_ids=["d1", "d2", "d3"], relevance={"d1": 0, "d3": 2})
    scored = SampleResult(0, 1, "g", sample, {"mrr": OK(1 / 3)})
    view = parse(sample_card(scored, [MetricInfo("mrr", Direction.HIGHER_IS_BETTER)]))
    chips = _chips(view.find("div", class_="retrieval"))
    assert [d for d, n in chips.items() if "✓" in n.text()] == ["d3"]  # grade 0 is not relevant
    assert view.find_all("span", class_="missing") == []
    stars = [n.text() for n in view.find_all("span", class_="ctx-id")]
    assert stars == ["d1", "d2", "d3 ★"]  # the contexts list marks the same ids
    # no retrieval metric in the run, or no relevance judgment: no view
    plain = SampleResult(0, 1, "p", Sample(id="p", retrieved_context_ids=["d1"]), {"mrr": OK(0)})
    assert (
        parse(sample_card(plain, [MetricInfo("mrr", Direction.HIGHER_IS_BETTER)])).find_all(
            "div", class_="retrieval"
        )
        == []
    )


# --- 4. tag breakdowns on a colour scale ------------------------------------------------


def _tagged(scores: dict[str, list[float]], groups: list[str], direction: Direction) -> Any:
    samples = [
        SampleResult(
            i,
            i + 1,
            f"s{i}",
            Sample(id=f"s{i}", user_input="q", metadata={"grp": g}),
            {name: OK(values[i]) for name, values in scores.items()},
        )
        for i, g in enumerate(groups)
    ]
    return EvaluationResult(
        samples, [MetricInfo(name, direction) for name in scores], {"tags": ["grp"]}
    )


def _shades(page: str, tag: str) -> dict[str, str]:
    table = parse(page).find("table", data_tag=tag)
    return {
        r.find("td").text(): r.find("td", class_="shaded").attrs["style"]
        for r in table.find("tbody").find_all("tr")
    }


def test_tag_means_are_shaded_from_red_to_green(llm_result):
    # faithfulness by language: en (0 + 1) / 2 = 0.5, zh (0.5 + 1) / 2 = 0.75; hue = 120 × mean
    shades = _shades(render_html(llm_result), "language")
    assert shades == {
        "en": "background:hsl(60, 70%, 86%)",
        "zh": "background:hsl(90, 70%, 86%)",
    }
    dom = parse(render_html(llm_result))
    legend = dom.find(id="breakdowns").find("span", class_="legend")
    swatches = legend.find_all("span", class_="swatch")
    assert [s.text() for s in swatches] == ["0.00", "0.25", "0.50", "0.75", "1.00"]
    assert swatches[0].attrs["style"] == "background:hsl(0, 70%, 86%)"
    assert swatches[-1].attrs["style"] == "background:hsl(120, 70%, 86%)"


def test_lower_is_better_inverts_the_scale_and_unbounded_metrics_use_their_range():
    low = _tagged({"noise": [0.2, 0.2, 0.9, 0.9]}, ["a", "a", "b", "b"], Direction.LOWER_IS_BETTER)
    # a: 0.2 is 80% of the way to the best (0): hue 96; b: 0.9 -> 10%: hue 12
    assert _shades(render_html(low), "grp") == {
        "a": "background:hsl(96, 70%, 86%)",
        "b": "background:hsl(12, 70%, 86%)",
    }
    counts = _tagged(
        {"n": [10, 10, 30, 30, 20]}, ["a", "a", "b", "b", "c"], Direction.HIGHER_IS_BETTER
    )
    # means 10, 30, 20 leave 0..1: shaded over 10..30, so hues 0, 120 and 60
    assert _shades(render_html(counts), "grp") == {
        "a": "background:hsl(0, 70%, 86%)",
        "b": "background:hsl(120, 70%, 86%)",
        "c": "background:hsl(60, 70%, 86%)",
    }


def test_a_group_mean_says_how_many_of_its_samples_it_covers():
    # hard: s0 scored 0.5, s1 failed, so its mean is over 1 of its 2 samples; easy: 2 of 2.
    samples = [
        SampleResult(
            i,
            i + 1,
            f"s{i}",
            Sample(id=f"s{i}", user_input="q", metadata={"level": level}),
            {"faithfulness": result},
        )
        for i, (level, result) in enumerate(
            [
                ("hard", OK(0.5)),
                ("hard", MetricResult.failed("judge down")),
                ("easy", OK(1.0)),
                ("easy", OK(0.0)),
            ]
        )
    ]
    run = EvaluationResult(
        samples, [MetricInfo("faithfulness", Direction.HIGHER_IS_BETTER)], {"tags": ["level"]}
    )
    table = parse(render_html(run)).find("table", data_tag="level")
    cells = {r.find("td").text(): r.find_all("td")[2] for r in table.find("tbody").find_all("tr")}
    assert cells["hard"].find("span", class_="n").text() == "n=1/2"
    assert cells["hard"].text() == "0.5000n=1/2"
    assert cells["easy"].text() == "0.5000n=2/2"
    assert "over 1 scored of the group's 2 samples" in cells["hard"].attrs["title"]


# --- 5. run vs run: paired scatter and delta bars ---------------------------------------


def test_scatter_places_one_dot_per_paired_sample_by_hand():
    before = evaluate(ranking([1, None]), ["mrr"])  # q0 1.0, q1 0.0
    after = evaluate(ranking([1, 2]), ["mrr"])  # q0 1.0, q1 0.5
    svg = parse(render_html(after, compare=before)).find("svg", class_="scatter", data_metric="mrr")
    dots = {c.attrs["data-sample"]: c for c in svg.find_all("circle")}
    assert svg.attrs["data-n"] == "2" and list(dots) == ["q0", "q1"]
    # plot 180 px square from (30, 8): x = 30 + 180 × baseline, y = 188 − 180 × this run
    assert (dots["q0"].attrs["cx"], dots["q0"].attrs["cy"]) == ("210.0", "8.0")
    assert (dots["q1"].attrs["cx"], dots["q1"].attrs["cy"]) == ("30.0", "98.0")
    assert "better" in dots["q1"].attrs["class"].split()
    assert "same" in dots["q0"].attrs["class"].split()
    diagonal = svg.find("line", class_="diag")
    assert [diagonal.attrs[k] for k in ("x1", "y1", "x2", "y2")] == [
        "30.0",
        "188.0",
        "210.0",
        "8.0",
    ]


def test_scatter_pairs_by_id_only_samples_scored_in_both_runs(llm_result, improved_result):
    before = {s.sample_id: s for s in llm_result.samples}
    dom = parse(render_html(improved_result, compare=llm_result))
    for metric in improved_result.metrics:
        paired = [
            s.sample_id
            for s in improved_result.samples
            if s.sample_id in before
            and s.scores[metric.name].status is Status.OK
            and before[s.sample_id].scores[metric.name].status is Status.OK
        ]
        svg = dom.find("svg", class_="scatter", data_metric=metric.name)
        assert [c.attrs["data-sample"] for c in svg.find_all("circle")] == paired
        assert svg.attrs["data-n"] == str(len(paired))
    # en-broken is only in the new run and en-everest only in the old one: neither is a dot
    assert len(paired) == 3


def test_delta_bars_show_each_means_change_with_its_interval():
    from ragmeter.stats import compare

    before = evaluate(ranking([1, None]), ["mrr"])
    after = evaluate(ranking([1, 2]), ["mrr"])
    svg = parse(render_html(after, compare=before)).find("svg", class_="deltas")
    bar = svg.find("rect", data_metric="mrr")
    # (1 + 0.5) / 2 − (1 + 0) / 2 = +0.25, on 2 samples: not significant, so grey
    assert bar.attrs["class"].split() == ["dbar", "same"]
    assert float(bar.attrs["x"]) == 320.0  # a rise starts at zero (170 + 300 / 2)
    (found,) = compare(before, after, metrics=["mrr"])
    assert found.ci is not None
    title = bar.find("title").text()
    assert title == f"mrr: +0.2500, CI {found.ci.low:+.4f} to {found.ci.high:+.4f}"
    assert svg.find_all("line", class_="whisker", data_metric="mrr")
    # a significant drop of a lower-is-better metric is an improvement: green
    base = [0.6 + 0.01 * (i % 4) for i in range(16)]
    low = built({"m": [OK(v) for v in base]}, direction=Direction.LOWER_IS_BETTER)
    lower = built(
        {"m": [OK(v - 0.3 - 0.01 * (i % 3)) for i, v in enumerate(base)]},
        direction=Direction.LOWER_IS_BETTER,
    )
    svg = parse(render_html(lower, compare=low)).find("svg", class_="deltas")
    bar = svg.find("rect", data_metric="m")
    assert bar.attrs["class"].split() == ["dbar", "better", "sig"]
    assert float(bar.attrs["x"]) < 320.0


@pytest.mark.parametrize("n", [0, 1])
def test_no_chart_without_pairs(n):
    before = built({"m": [OK(0.5)] * n or [MetricResult.failed("x")]}, ids=["a"])
    after = built({"m": [OK(0.7)]}, ids=["a"])
    dom = parse(render_html(after, compare=before))
    scatter = dom.find(id="compare").find_all("svg", class_="scatter")
    assert len(scatter) == n
    assert "nan" not in dom.find(id="compare").text().lower().split()


def test_delta_bars_give_no_bar_across_a_changed_judge():
    from tests.stats._build import DEEPSEEK, GPT, judged_config, run

    faith, mrr = [0.5, 0.6, 0.7, 0.8, 0.6], [0.2, 0.4, 0.6, 0.8, 1.0]
    before = run({"faithfulness": faith, "mrr": mrr}, config=judged_config(GPT))
    after = run(
        {"faithfulness": [v + 0.1 for v in faith], "mrr": [v - 0.1 for v in mrr]},
        config=judged_config(DEEPSEEK),
    )
    svg = parse(render_html(after, compare=before)).find("svg", class_="deltas")
    assert svg.find_all("rect", data_metric="faithfulness") == []
    assert "faithfulness not comparable: judge changed" in svg.attrs["aria-label"]
    # mrr needs no judge: every sample 0.1 lower, a drop of 0.1; on 5 samples a sign-flip
    # test cannot go below p = 1/16, so it is not significant and the bar is grey
    bar = svg.find("rect", data_metric="mrr")
    assert bar.attrs["class"].split() == ["dbar", "same"]
    assert bar.find("title").text().startswith("mrr: -0.1000")


def test_a_scatter_draws_at_most_max_points_and_says_so():
    max_points = 2_000  # a compare page's scatter draws at most this many samples
    this, baseline = (built({"m": [OK(0.5)] * (max_points + 3)}) for _ in range(2))
    page = render_html(this, compare=baseline)
    (svg,) = parse(page).find("div", id="compare-scatters").find_all("svg")
    assert svg.attrs["data-n"] == str(max_points) and len(svg.find_all("circle")) == max_points
    assert f"(the first {max_points} of {max_points + 3} drawn)" in svg.attrs["aria-label"]
