"""A multi-turn run in the dashboard: its conversations worst first, a page per
conversation with its turns in order, and their JSON twins; every text escaped."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from ragmeter import evaluate
from ragmeter.dashboard import create_app
from ragmeter.store import Store

LOCAL = "http://127.0.0.1:8321"
EVIL = "<script>alert('x')</script>"
#: A conversation id with characters a URL path must quote.
ODD_ID = "chat #1/<b>"


def _turn(conversation: str, turn: int, mrr: float, exact: bool) -> dict:
    """MRR ``mrr`` (relevant id "a" first: 1.0, second: 0.5, absent: 0.0); exact match when
    ``exact``."""
    retrieved = {1.0: ["a"], 0.5: ["b", "a"], 0.0: ["b"]}[mrr]
    return {
        "id": f"{conversation}#{turn}",
        "user_input": f"question {turn} {EVIL}",
        "response": "yes",
        "reference": "yes" if exact else "no",
        "retrieved_context_ids": retrieved,
        "reference_context_ids": ["a"],
        "metadata": {"conversation_id": conversation, "turn": turn},
    }


# ODD_ID: turns (mrr 1.0, exact 1) then (0.5, 0): means 0.75 and 0.5, worst turn 2.
# B: one turn (0.0, 0). A single-turn sample outside any conversation.
ROWS = [
    _turn(ODD_ID, 2, 0.5, False),
    _turn("B", 1, 0.0, False),
    _turn(ODD_ID, 1, 1.0, True),
    {
        "id": "single",
        "response": "yes",
        "reference": "yes",
        "retrieved_context_ids": ["a"],
        "reference_context_ids": ["a"],
    },
]


@pytest.fixture
def multi_turn(tmp_path: Path) -> tuple[TestClient, str, str]:
    store = Store(f"sqlite:///{tmp_path / 'runs.db'}")
    chat = store.record(evaluate(ROWS, ["mrr", "exact_match"], progress=False), name="chat")
    single = store.record(evaluate(ROWS[3:], ["mrr"], progress=False), name="single")
    return TestClient(create_app(store, port=8321), base_url=LOCAL), chat.id, single.id


def test_the_api_lists_conversations_worst_first_with_both_levels(multi_turn):
    client, run, _ = multi_turn
    body = client.get(f"/api/runs/{run}/conversations").json()
    assert body["total"] == 2
    # B rates (0 + 0) / 2 = 0, ODD_ID (0.75 + 0.5) / 2 = 0.625: B first.
    assert [c["id"] for c in body["conversations"]] == ["B", ODD_ID]
    odd = body["conversations"][1]
    assert odd["n_turns"] == 2
    assert odd["metrics"]["mrr"] == {
        "mean": 0.75,
        "worst_turn": 2,
        "worst_score": 0.5,
        "n_ok": 2,
        "n_failed": 0,
        "n_not_applicable": 0,
        "n_not_started": 0,
    }
    mrr = body["levels"]["mrr"]
    # Per conversation (0.75 + 0.0) / 2 = 0.375; per turn (1.0 + 0.5 + 0.0) / 3 = 0.5.
    assert mrr["mean"] == pytest.approx(0.375) and mrr["turn_mean"] == pytest.approx(0.5)
    assert (mrr["n_scored"], mrr["n_conversations"], mrr["n_turns_ok"]) == (2, 2, 3)
    assert mrr["ci_low"] <= 0.375 <= mrr["ci_high"]


def test_the_api_gives_one_conversation_turn_by_turn(multi_turn):
    client, run, _ = multi_turn
    body = client.get(f"/api/runs/{run}/conversations/{quote(ODD_ID, safe='')}").json()
    assert body["id"] == ODD_ID
    assert [(t["turn"], t["id"]) for t in body["turns"]] == [(1, f"{ODD_ID}#1"), (2, f"{ODD_ID}#2")]
    assert [t["scores"]["mrr"]["score"] for t in body["turns"]] == [1.0, 0.5]
    assert body["turns"][0]["question"] == f"question 1 {EVIL}"
    missing = client.get(f"/api/runs/{run}/conversations/nope")
    assert (
        missing.status_code == 404
        and "run chat has no conversation nope" in missing.json()["error"]
    )


def test_the_conversations_page_links_each_conversation_to_its_turns(multi_turn):
    client, run, _ = multi_turn
    # The run page (the report) has the section and a link to the conversations page.
    run_page = client.get(f"/runs/{run}").text
    assert 'id="conversations"' in run_page
    assert f'href="/runs/{run}/conversations"' in run_page
    listing = client.get(f"/runs/{run}/conversations")
    assert listing.status_code == 200
    text = listing.text
    href = f"/runs/{run}/conversations/{quote(ODD_ID, safe='')}"
    assert f'href="{href}"' in text
    assert text.index(">B</a>") < text.index("chat #1/&lt;b&gt;</a>")
    assert "worst: turn 2" in text
    page = client.get(href)
    assert page.status_code == 200
    turns = page.text.split('id="turns"', 1)[1]
    assert turns.index('data-turn="1"') < turns.index('data-turn="2"')
    assert EVIL not in page.text and "question 1 &lt;script&gt;" in page.text
    assert "chat #1/<b>" not in page.text


def test_the_pages_speak_chinese(multi_turn):
    client, run, _ = multi_turn
    text = client.get(f"/runs/{run}/conversations", params={"lang": "zh"}).text
    assert "对话级与轮次级均值" in text and "对话（最差的在前）" in text
    missing = client.get(f"/runs/{run}/conversations/nope", params={"lang": "zh"})
    assert missing.status_code == 404
    assert "运行 chat 中没有对话 nope" in missing.text


def test_a_single_turn_run_has_no_conversations(multi_turn):
    client, _, single = multi_turn
    assert client.get(f"/api/runs/{single}/conversations").json()["conversations"] == []
    assert f'href="/runs/{single}/conversations"' not in client.get(f"/runs/{single}").text
    page = client.get(f"/runs/{single}/conversations")
    assert page.status_code == 200 and "no conversation" in page.text
