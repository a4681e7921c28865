"""The HTML report: self-contained, escaped, and showing what the run holds."""

from __future__ import annotations

import re

from ragmeter import Direction, MetricResult, Status, evaluate
from ragmeter.report import render_html, sample_card
from tests.report.conftest import XSS, built, ranking
from tests.report.dom import parse


def test_page_is_self_contained_utf8_with_a_cjk_font_stack(llm_result):
    page = render_html(llm_result)
    assert page.startswith("<!DOCTYPE html>")
    dom = parse(page)
    assert dom.find("html").attrs["lang"] == "en"
    assert dom.find("meta").attrs == {"charset": "utf-8"}
    assert '"Noto Sans CJK SC"' in page and '"Microsoft YaHei"' in page
    # nothing is loaded: no external src/href, no @import, no url(), no link/img/script tags
    for node in dom.iter():
        for name in ("src", "href", "srcset", "action", "data"):
            value = node.attrs.get(name)
            assert value is None or value.startswith("#"), (node.tag, name, value)
    assert not dom.find_all("script") and not dom.find_all("link") and not dom.find_all("img")
    for pattern in ("http://", "https://", "//cdn", "@import", "url("):
        assert pattern not in page, pattern


def test_user_text_is_escaped(llm_result):
    page = render_html(llm_result, title="<i>title</i>")
    assert XSS not in page and "<i>title</i>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    # the escaped response still reads as text in the sample card
    assert XSS in parse(page).find(id="sample-2").text()


def test_chinese_text_is_present_and_marked(llm_result):
    dom = parse(render_html(llm_result))
    card = dom.find(id="sample-0")
    question = [n for n in card.find_all(lang="zh") if n.text() == "岚屿 S3 耳机保修多久？"]
    assert question


def test_header_names_dataset_version_judge_and_prompts(llm_result):
    dom = parse(render_html(llm_result))
    meta = dom.find("dl", class_="meta").text()
    assert llm_result.config["dataset"]["fingerprint"] in meta
    assert "4 evaluated, 0 rows skipped" in meta
    assert "0.1.0" in meta and llm_result.config["created_at"] in meta
    assert "scripted — faithfulness, context_precision, context_recall" in meta
    assert "verify@1/zh" in meta


def test_summary_table_rows(llm_result):
    dom = parse(render_html(llm_result))
    table = dom.find(id="summary-table")
    rows = {
        r.attrs["data-metric"]: [c.text() for c in r.find_all("td")]
        for r in table.find_all("tr")
        if "data-metric" in r.attrs
    }
    assert list(rows) == [m.name for m in llm_result.metrics]
    # the CI column (index 3) is checked against the statistics in test_views.py
    cells = rows["faithfulness"]
    assert cells[:3] + cells[4:] == ["faithfulness", "↑", "0.6250", "0.7500", "4/4", "0", "0"]
    assert rows["mrr"][2:3] + rows["mrr"][4:] == ["0.6250", "0.7500", "4/4", "0", "0"]


def test_a_metric_without_scores_shows_a_dash_not_zero():
    records = [{"id": i, "retrieved_context_ids": ["x"], "reference_context_ids": []} for i in "ab"]
    result = evaluate(records, ["mrr"])
    row = parse(render_html(result)).find("tr", data_metric="mrr")
    assert [c.text() for c in row.find_all("td")] == [
        "mrr", "↑", "—", "n/a: 0 scored, needs 2", "—", "0/2", "2", "0",
    ]  # fmt: skip


def test_histograms_count_scores_in_ten_clamped_bins():
    scores = [0.0, 0.05, 0.1, 0.55, 0.99, 1.0, 1.7, -0.2]
    result = built({"score": [MetricResult.ok(s) for s in scores] + [MetricResult.failed("x")]})
    svg = parse(render_html(result)).find("svg", class_="hist")
    assert svg.attrs["data-counts"] == "3,1,0,0,0,1,0,0,0,3"
    assert svg.find("title").text().startswith("score score distribution over 8 scored samples")
    assert "0.9–1.0: 3" in svg.attrs["aria-label"]


def test_worst_samples_lowest_first_when_higher_is_better():
    # median 0.5: only the two 0.1 scores are below it (0.5 itself is not)
    result = built({"m": [MetricResult.ok(s) for s in (0.9, 0.1, 0.5, 0.1, 0.7)]})
    dom = parse(render_html(result, worst=3))
    rows = dom.find("div", class_="worst").find("tbody").find_all("tr")
    assert [r.find("a").text() for r in rows] == ["s1", "s3"]
    assert [r.find_all("td")[2].text() for r in rows] == ["0.1000", "0.1000"]


def test_worst_samples_highest_first_when_lower_is_better():
    result = built(
        {"noise": [MetricResult.ok(s) for s in (0.2, 0.8, 0.0, 0.5)]},
        direction=Direction.LOWER_IS_BETTER,
    )
    dom = parse(render_html(result, worst=2))
    block = dom.find("div", class_="worst")
    # median (0.2 + 0.5) / 2 = 0.35: 0.8 and 0.5 lie above it, the worse side for a ↓ metric
    assert "2 samples above the median (0.3500), of 4 scored" in block.find("h3").text()
    assert [a.text() for a in block.find("tbody").find_all("a")] == ["s1", "s3"]
    one = parse(render_html(result, worst=1)).find("div", class_="worst")
    assert "the 1 highest of 2 samples above the median" in one.find("h3").text()


def test_worst_samples_show_claims_and_highlight_unsupported_ones(llm_result):
    dom = parse(render_html(llm_result))
    faithfulness = next(
        b for b in dom.find_all("div", class_="worst") if b.find("h3").text().startswith("faith")
    )
    first = faithfulness.find("tbody").find("tr")
    assert first.find("a").text() == "en-capital"
    unsupported = first.find("li", class_="bad")
    assert "Sydney is the capital" in unsupported.text()
    assert unsupported.find("span", class_="verdict").text() == "unsupported"
    assert "because 1" in unsupported.text()
    assert "0 of 1 claims are supported by the contexts" in first.text()


def test_sample_cards_show_per_context_and_per_statement_verdicts(llm_result):
    card = parse(render_html(llm_result)).find(id="sample-0")
    contexts = card.find("ol", class_="contexts").find_all("li")
    assert "context_precision ✓" in contexts[0].text()
    assert "context_recall: 2 statements" in contexts[0].text()
    assert "context_precision ✗" in contexts[1].text()
    assert "kb-1 ★" in contexts[0].text()
    statements = [li.text() for li in card.find_all("li") if "标准保修期为 1 年" in li.text()]
    assert statements and "in context #1" in statements[0]
    # rouge_l's precision and recall are shown as name/value details
    assert "precision 0." in card.text() and "recall 0." in card.text()


def test_every_sample_link_has_an_anchor(llm_result, improved_result, findings):
    dom = parse(render_html(improved_result, compare=llm_result, findings=findings))
    anchors = {n.attrs["id"] for n in dom.find_all() if "id" in n.attrs}
    links = [n.attrs["href"][1:] for n in dom.find_all("a") if "href" in n.attrs]
    assert links and all(target in anchors for target in links)


def test_findings_show_share_figures_advice_and_linked_samples(llm_result, findings):
    dom = parse(render_html(llm_result, findings=findings))
    cards = dom.find_all("div", class_="finding")
    assert [c.find("h3").text() for c in cards] == [
        "highretrieval检索漏掉相关上下文 <b>retrieval misses</b>",
        "mediumgenerationAnswers add unsupported claims",
    ]
    first = cards[0]
    assert "1/4 samples (25%)" in first.text()
    # each figure names the samples it covers: those flagged, and the run's own mean
    assert [li.text() for li in first.find("ul", class_="figures").find_all("li")] == [
        "context_recall 0.00 over the 1 sample flagged (run mean 0.67 over 4)"
    ]
    assert "(run)" not in first.text()
    assert [li.text() for li in first.find("ul", class_="advice").find_all("li")] == [
        "Increase top-k",
        "Try a hybrid retriever",
    ]
    links = first.find_all("a")
    assert [a.text() for a in links] == ["en-capital"]
    assert links[0].attrs["href"] == "#sample-2"
    assert "not-in-run" in first.text()  # named, but not linked: the run lacks it


def test_findings_against_the_baseline(llm_result, findings):
    dom = parse(render_html(llm_result, findings=findings[1:], compare_findings=findings[:1]))
    assert "new since baseline" in dom.find("div", class_="finding").text()
    assert "Resolved since the baseline" in dom.find(id="diagnosis").text()


def test_tag_breakdowns(llm_result):
    dom = parse(render_html(llm_result))
    table = dom.find("table", data_tag="language")
    rows = [[c.text() for c in r.find_all("td")] for r in table.find("tbody").find_all("tr")]
    # faithfulness of en: (0 + 1) / 2, over both of its samples
    assert rows[0][:3] == ["en", "2", "0.5000n=2/2"]
    assert rows[1][:3] == ["zh", "2", "0.7500n=2/2"]


def test_failed_results_are_listed_with_their_error(improved_result):
    failures = parse(render_html(improved_result)).find(id="failures")
    rows = failures.find("tbody").find_all("tr")
    assert len(rows) == 3
    assert all("JudgeOutputError: the judge answered with malformed JSON" in r.text() for r in rows)
    assert rows[0].find("a").attrs["href"] == "#sample-3"


def test_usage_table(llm_result):
    usage = parse(render_html(llm_result)).find(id="usage-table")
    cells = [c.text() for c in usage.find("tbody").find("tr").find_all("td")]
    calls = llm_result.config["usage"]["calls"]
    assert cells[:3] == ["this run", "judge", str(calls)]
    assert cells[-1] == "not counted (no price set)"


def test_usage_with_a_price():
    result = evaluate(ranking([1]), ["mrr"])
    result.config["usage"] = {
        "calls": 1200,
        "cached_calls": 3,
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "cost": 0.0123,
        "currency": "USD",
    }
    cells = parse(render_html(result)).find(id="usage-table").find_all("td")
    assert [c.text() for c in cells] == ["this run", "judge", "1,200", "3", "10", "2", "0.0123 USD"]


def test_compare_deltas_on_hand_checked_data():
    before = evaluate(ranking([1, None]), ["mrr"])  # 1.0 and 0.0: mean 0.5
    after = evaluate(ranking([1, 2]), ["mrr"])  # 1.0 and 0.5: mean 0.75
    dom = parse(render_html(after, compare=before))
    row = dom.find(id="compare-table").find("tr", data_metric="mrr")
    cells = [c.text() for c in row.find_all("td")]
    # One sample of two moved: p = 1.00, so no word of "better" and no colour.
    assert cells[2:5] == ["0.5000", "0.7500", "+0.2500 no significant change"]
    assert row.find("td", data_change="same") and not row.find_all("td", data_change="better")
    assert cells[6:9] == ["2", "1", "0"]  # paired, improved, worsened
    section = dom.find(id="compare").text()
    assert "Both runs have the same 2 samples" in section
    assert "q1" in section and "+0.5000" in section
    assert "mrr +0.25 (95% CI" in dom.find("ul", class_="verdicts").text()


def _delta_cell(result, baseline):
    row = parse(render_html(result, compare=baseline)).find(id="compare-table")
    return row.find("tr", data_metric="m").find_all("td")[4]


def test_compare_colours_a_significant_rise_of_a_lower_metric_as_worse_and_a_drop_better():
    base = [0.2 + 0.01 * (i % 5) for i in range(20)]
    low = built({"m": [MetricResult.ok(v) for v in base]}, direction=Direction.LOWER_IS_BETTER)
    high = built(
        {"m": [MetricResult.ok(v + 0.4 + 0.01 * (i % 3)) for i, v in enumerate(base)]},
        direction=Direction.LOWER_IS_BETTER,
    )
    cell = _delta_cell(high, low)  # every one of 20 samples rose: p < 0.001
    assert (cell.text(), cell.attrs["data-change"]) == ("+0.4095 worse", "worse")
    cell = _delta_cell(low, high)
    assert (cell.text(), cell.attrs["data-change"]) == ("-0.4095 better", "better")


def test_a_change_that_is_not_significant_is_neither_better_nor_coloured():
    """The shape of issue 35: +0.07 with p = 1.00 read "better" in green."""
    low = built({"m": [MetricResult.ok(0.2)]}, direction=Direction.LOWER_IS_BETTER)
    high = built({"m": [MetricResult.ok(0.6)]}, direction=Direction.LOWER_IS_BETTER)
    cell = _delta_cell(high, low)  # one sample: not even testable
    assert cell.text() == "+0.4000 no significant change"
    assert cell.attrs["data-change"] == "same" and "worse" not in cell.attrs["class"]


def test_compare_states_when_the_sample_sets_differ(llm_result, improved_result):
    section = parse(render_html(improved_result, compare=llm_result)).find(id="compare")
    text = section.text()
    assert "compared on 3 shared samples (1 only in this run, 1 only in the baseline)" in text
    rows = {
        r.attrs["data-metric"]: [c.text() for c in r.find_all("td")]
        for r in section.find(id="compare-table").find_all("tr")
        if "data-metric" in r.attrs
    }
    assert rows["mrr"][2:5] == ["0.6250", "1.0000", "+0.3750 no significant change"]
    assert rows["faithfulness"][5] == "4/4 → 3/4"
    assert rows["rouge_l"][4].startswith("-") and rows["rouge_l"][4].endswith(
        " no significant change"
    )  # 3 shared samples: too few for any change to be significant
    changes = [
        [c.text() for c in r.find_all("td")]
        for r in section.find(id="changes-table").find_all("tr", data_metric="mrr")
    ]
    assert changes == [
        ["mrr ↑", "en-capital", "0.0000", "1.0000", "+1.0000", "What is the capital of Australia?"],
        ["zh-refund", "0.5000", "1.0000", "+0.5000", "退款多久到账？"],
    ]


def test_no_dash_zero_and_no_nan_anywhere(llm_result, improved_result):
    page = render_html(improved_result, compare=llm_result)
    assert "nan" not in re.sub(r"<style>.*?</style>", "", page, flags=re.S).lower().split()
    assert "-0.0000" not in page


def test_multihop_claims_stored_in_the_old_shape_render_with_their_text():
    """Runs stored before details were typed wrote {"claim": 1, "text": ...}: the report
    showed "1" as the claim."""
    stored = {
        "score": 0.5,
        "status": "ok",
        "reason": "the response uses 1 of 2 hops",
        "details": {
            "hops": [
                {"hop": 1, "used": True, "claims": [1, 2]},
                {"hop": 2, "used": False, "claims": []},
            ],
            "claims": [
                {"claim": 1, "text": "The X200 comes with Buds S earbuds."},
                {"claim": 2, "text": "保修两年。"},
            ],
        },
    }
    run = built({"multihop_completeness": [MetricResult.from_dict(stored)]})
    # a single sample is at its own median, so no section links it: render its card directly
    card = parse(sample_card(run.samples[0], run.metrics)).find(id="sample-0")
    items = card.find("ul", class_="claims").find_all("li")
    shown = [li.find_all("span")[-1].text() for li in items]
    assert shown == ["The X200 comes with Buds S earbuds.", "保修两年。"]
    assert all(li.text() not in ("1", "2") for li in items)
    assert "hop 1 ✓ claims 1, 2" in card.text() and "hop 2 ✗" in card.text()


def test_compare_banner_lists_how_the_runs_were_measured_differently():
    from tests.stats._build import DEEPSEEK, DEEPSEEK_LABEL, GPT, GPT_LABEL, judged_config, run

    faith, mrr = [0.5, 0.6, 0.7, 0.8, 0.6], [0.2, 0.4, 0.6, 0.8, 1.0]
    scores = {"faithfulness": faith, "mrr": mrr}
    better = {"faithfulness": [v + 0.1 for v in faith], "mrr": [v - 0.1 for v in mrr]}
    before = run(scores, config=judged_config(GPT))
    dom = parse(render_html(run(better, config=judged_config(DEEPSEEK)), compare=before))
    banner = dom.find(id="comparability")
    assert banner.attrs["class"] == "banner bad"
    assert "Not comparable: the judge changed." in banner.text()
    assert f"faithfulness: judge differs: {GPT_LABEL} vs {DEEPSEEK_LABEL}" in banner.text()
    verdicts = dom.find("ul", class_="verdicts").text()
    assert f"faithfulness: not comparable: judge changed ({GPT_LABEL} vs" in verdicts
    assert "mrr -0.1" in verdicts
    allowed = parse(
        render_html(
            run(better, config=judged_config(DEEPSEEK)), compare=before, allow_judge_change=True
        )
    )
    assert "Compared across a changed judge" in allowed.find(id="comparability").text()
    assert "faithfulness +0.1" in allowed.find("ul", class_="verdicts").text()
    # Prompt versions alone: a warning, the verdicts stand.
    config = {**judged_config(GPT), "prompt_versions": ["response_analysis@1/en", "verify@2/en"]}
    prompts = parse(render_html(run(better, config=config), compare=before))
    banner = prompts.find(id="comparability")
    assert banner.attrs["class"] == "banner warn"
    assert "prompt versions differ (recorded per run, not per metric): verify@1/en vs " in (
        banner.text()
    )
    assert "faithfulness +0.1" in prompts.find("ul", class_="verdicts").text()
    same = parse(render_html(run(better, config=judged_config(GPT)), compare=before))
    assert same.find_all(id="comparability") == []


def _stopped_run():
    """Three samples, the last one never started (a budget stopped the run)."""
    not_started = MetricResult(None, Status.NOT_STARTED, reason="not started: max_cost")
    return built(
        {"faithfulness": [MetricResult.ok(1.0), MetricResult.failed("judge down"), not_started]}
    )


def test_results_never_started_have_a_column_of_their_own_not_failed():
    run = _stopped_run()
    dom = parse(render_html(run))
    head = [th.text() for th in dom.find(id="summary-table").find("thead").find_all("th")]
    assert head[-2:] == ["failed", "not started"]
    row = dom.find("tr", data_metric="faithfulness")
    cells = [td.text() for td in row.find_all("td")]
    assert cells[5:] == ["1/3", "0", "1", "1"]  # scored/total, n/a, failed, not started
    assert "Not started: the run stopped before computing it" in dom.find(id="summary").text()
    # not listed among the failures, and its card says what it is
    assert "not started" not in dom.find(id="failures").text()
    card = parse(sample_card(run.samples[2], run.metrics)).find(id="sample-2")
    assert "not started" in card.find("td", class_="status-not_started").text()


def test_a_complete_run_has_no_not_started_column(llm_result):
    head = parse(render_html(llm_result)).find(id="summary-table").find("thead").text()
    assert "not started" not in head
