"""Every call the steps make, for every scenario of ``calls.py``, is the call the code before
the table of judgments made (commit ae19e48): same messages, schema, prompt version, scope
and salt, hence the same cache key; and the facts read from the answers are the same."""

import json
from pathlib import Path

import pytest

from tests.steps.calls import SCENARIOS, record

EXPECTED = json.loads((Path(__file__).parent / "calls_ae19e48.json").read_text("utf-8"))


def test_the_fixture_covers_every_scenario():
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_calls_and_facts_are_unchanged(name):
    got = json.loads(json.dumps(record(name), ensure_ascii=False))
    expected = EXPECTED[name]
    assert len(got["calls"]) == len(expected["calls"])
    for new, old in zip(got["calls"], expected["calls"]):
        assert new == old
    assert got["facts"] == expected["facts"]
