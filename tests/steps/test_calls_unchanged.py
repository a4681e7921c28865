"""Every call the steps make, for every scenario of ``calls.py``, is the recorded call
(``calls_current.json``): same messages, schema, prompt version, scope and salt, hence the
same cache key; and the facts read from the answers are the same. Recorded again when issue
35 moved answer relevancy's questions to a call that sees the answer alone
(``reverse_questions@1``, ``response_analysis@3``) and left claims not from the response out,
and again when a claim stating a number that no passage of a source holds became unsupported
without a verdict (3 fewer verdicts in the scenarios whose claim "可延保至 3 年" meets passages
that state only "1 年"); before that the fixture held the calls of commit ae19e48."""

import json
from pathlib import Path

import pytest

from tests.steps.calls import SCENARIOS, record

EXPECTED = json.loads((Path(__file__).parent / "calls_current.json").read_text("utf-8"))
#: Templates bumped since the fixture was recorded (none yet): old version -> new version.
BUMPED: dict[str, str] = {}


def _version(version: str) -> str:
    for old, new in BUMPED.items():
        if version.startswith(old):
            return new + version[len(old) :]
    return version


def _bumped(call: dict) -> dict:
    if "prompt_version" not in call:
        return call
    return {**call, "prompt_version": _version(call["prompt_version"])}


def _facts(facts: dict) -> dict:
    if "prompt_versions" not in facts:
        return facts
    return {**facts, "prompt_versions": sorted(map(_version, facts["prompt_versions"]))}


def test_the_fixture_covers_every_scenario():
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_calls_and_facts_are_unchanged(name):
    got = json.loads(json.dumps(record(name), ensure_ascii=False))
    expected = EXPECTED[name]
    assert len(got["calls"]) == len(expected["calls"])
    for new, old in zip(got["calls"], expected["calls"]):
        assert new == _bumped(old)
    assert got["facts"] == _facts(expected["facts"])
