"""The reports' optional line "with judge error" (issue 39): given labelled pairs per
metric, each such metric's mean with both intervals, as ragmeter.stats computes them."""

from __future__ import annotations

import pytest

from ragmeter.report import render_html, render_markdown, write_report
from ragmeter.stats import with_judge_error
from tests.report.dom import parse
from tests.stats._build import run

RESULT = run({"faithfulness": [1.0, 0.0, 1.0, 1.0, None, 1.0], "relevance": [0.5] * 6})
PAIRS = [(1, 1)] * 8 + [(1, 0)] * 4 + [(0, 0)] * 4  # the judge says yes to a quarter of no's


def test_the_markdown_report_gives_both_intervals_for_a_labelled_metric():
    text = render_markdown(RESULT, labelled={"faithfulness": PAIRS})
    expected = with_judge_error(RESULT, "faithfulness", PAIRS, n_resamples=2_000).sentence()
    assert expected.startswith("0.80, 95% CI ")  # 4 of 5 scored samples: the judge's mean
    assert "With judge error (measured on labelled items):" in text
    assert f"- `faithfulness`: {expected} (ppi, 16 labelled pairs)" in text
    assert "`relevance`:" not in text.split("With judge error")[1]  # no labels, no line
    assert "With judge error" not in render_markdown(RESULT)


def test_the_html_summary_gives_the_line_and_too_few_labels_say_why(tmp_path):
    page = parse(render_html(RESULT, labelled={"faithfulness": PAIRS[:6]}))
    line = page.find(id="judge-error")
    assert "with judge error: not computed (6 labelled pairs, at least 10" in line.text()
    assert not parse(render_html(RESULT)).find_all(id="judge-error")
    path = write_report(RESULT, tmp_path / "r.md", format="markdown", labelled={"relevance": PAIRS})
    assert "- `relevance`: 0.50, 95% CI 0.50-0.50 (sampling)" in path.read_text(encoding="utf-8")


def test_bad_pairs_are_an_error_naming_the_row():
    with pytest.raises(ValueError, match="labelled human label row 2: 2"):
        render_markdown(RESULT, labelled={"faithfulness": [(1, 1), (1, 0), (1, 2)] * 4})
