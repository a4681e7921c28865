"""The conversations section of a multi-turn run, in the HTML report and the markdown one."""

from __future__ import annotations

import pytest

from ragmeter import evaluate
from ragmeter.report import render_html, render_markdown
from tests.report.conftest import XSS
from tests.report.dom import parse

EVIL_ID = "<b>conv</b>"


def _turn(conversation: str, turn: int, mrr: float, exact: bool) -> dict:
    """A turn with MRR ``mrr`` (relevant id "a" first: 1.0, second: 0.5, absent: 0.0) and an
    exact match when ``exact``."""
    retrieved = {1.0: ["a"], 0.5: ["b", "a"], 0.0: ["b"]}[mrr]
    return {
        "id": f"{conversation}#{turn}",
        "user_input": f"question {turn} {XSS}",
        "response": "yes",
        "reference": "yes" if exact else "no",
        "retrieved_context_ids": retrieved,
        "reference_context_ids": ["a"],
        "metadata": {"conversation_id": conversation, "turn": turn},
    }


# A: turns (mrr 1.0, exact 1) and (0.5, 0) -> means 0.75 and 0.5; B: (0.0, 0) -> 0 and 0.
# A single-turn sample (mrr 1.0, exact 1) belongs to no conversation.
ROWS = [
    _turn(EVIL_ID, 1, 1.0, True),
    _turn(EVIL_ID, 2, 0.5, False),
    _turn("B", 1, 0.0, False),
    {
        "id": "single",
        "response": "yes",
        "reference": "yes",
        "retrieved_context_ids": ["a"],
        "reference_context_ids": ["a"],
    },
]


@pytest.fixture(scope="module")
def page():
    return parse(render_html(evaluate(ROWS, ["mrr", "exact_match"])))


def test_conversation_level_means_sit_next_to_turn_level_ones(page):
    section = page.find("section", id="conversations")
    nav = [a.attrs["href"] for a in page.find("nav").find_all("a")]
    assert nav.index("#breakdowns") < nav.index("#conversations") < nav.index("#worst")
    row = section.find("tr", data_metric="mrr")
    # Per conversation: (0.75 + 0.0) / 2 = 0.375; per turn, the three turns only (not the
    # single-turn sample): (1.0 + 0.5 + 0.0) / 3 = 0.5.
    assert row.find("td", class_="conversation-mean").text() == "0.3750"
    assert row.find("td", class_="turn-mean").text() == "0.5000"
    assert "2/2" in row.text() and "3/3" in row.text()
    exact = section.find("tr", data_metric="exact_match")
    # Exact match: (0.5 + 0.0) / 2 = 0.25 per conversation, (1 + 0 + 0) / 3 per turn.
    assert exact.find("td", class_="conversation-mean").text() == "0.2500"
    assert exact.find("td", class_="turn-mean").text() == "0.3333"


def test_conversations_are_listed_worst_first_and_expand_into_their_turns(page):
    section = page.find("section", id="conversations")
    table = section.find("table", id="conversations-table")
    # B rates (0 + 0) / 2 = 0, A (0.75 + 0.5) / 2 = 0.625: B first.
    order = [tr.attrs["data-conversation"] for tr in table.find("tbody").find_all("tr")]
    assert order == ["B", EVIL_ID]
    a_row = table.find("tr", data_conversation=EVIL_ID)
    assert "worst: turn 2" in a_row.text()
    blocks = section.find_all("details", class_="conversation")
    assert [d.attrs["data-conversation"] for d in blocks] == ["B", EVIL_ID]
    turns = blocks[1].find_all("tr", data_turn="1") + blocks[1].find_all("tr", data_turn="2")
    assert [t.find("a").text() for t in turns] == [f"{EVIL_ID}#1", f"{EVIL_ID}#2"]
    assert XSS in turns[0].text()
    # Each turn links to its sample card, which the report then contains.
    for turn in turns:
        href = turn.find("a").attrs["href"]
        assert page.find(id=href[1:]).find("h3")


def test_conversation_text_is_escaped():
    html = render_html(evaluate(ROWS, ["mrr"]))
    assert EVIL_ID not in html and XSS not in html
    assert "&lt;b&gt;conv&lt;/b&gt;" in html


def test_turn_is_a_tag_and_conversation_id_is_not(page):
    tags = [t.attrs["data-tag"] for t in page.find("section", id="breakdowns").find_all("table")]
    # Here turn has 3 samples / 2 values = 1.5 per value, under the 2 a tag needs.
    assert tags == []
    rows = [*ROWS[:3], _turn("B", 2, 1.0, True)]
    section = parse(render_html(evaluate(rows, ["mrr"]))).find("section", id="breakdowns")
    assert [t.attrs["data-tag"] for t in section.find_all("table")] == ["turn"]
    # Turn 1: (1.0 + 0.0) / 2 = 0.5; turn 2: (0.5 + 1.0) / 2 = 0.75.
    cells = [tr.find_all("td") for tr in section.find("tbody").find_all("tr")]
    assert [(c[0].text(), c[2].text()) for c in cells] == [
        ("1", "0.5000n=2/2"),
        ("2", "0.7500n=2/2"),
    ]


def test_a_single_turn_run_has_no_conversations_section():
    page = parse(render_html(evaluate(ROWS[3:], ["mrr"])))
    assert not page.find_all("section", id="conversations")
    assert "### Conversations" not in render_markdown(evaluate(ROWS[3:], ["mrr"]))


def test_long_lists_are_cut_with_a_note():
    rows = [_turn(f"c{i:02d}", 1, 1.0, True) for i in range(20 + 3)]  # the report lists 20
    section = parse(render_html(evaluate(rows, ["mrr"]))).find("section", id="conversations")
    assert len(section.find("table", id="conversations-table").find_all("tr")) == 1 + 20
    assert "and 3 more not shown" in section.text()


def test_markdown_has_a_compact_conversations_part():
    text = render_markdown(evaluate(ROWS, ["mrr", "exact_match"]))
    part = text.split("### Conversations", 1)[1]
    assert "2 conversations" in part
    # mrr: 0.3750 per conversation, 0.5000 per turn, 2/2 conversations scored.
    assert "| `mrr` | ↑ | 0.3750 |" in part and "| 2/2 | 0.5000 |" in part
    # Worst first: B, then A with its worst turn; the id escaped for markdown.
    assert part.index("`B`") < part.index("`<b>conv</b>`")
    assert "0.7500 (worst: turn 2)" in part
