"""Which language a request gets, and the two string tables."""

from __future__ import annotations

from typing import get_args

import pytest

from ragmeter.dashboard._i18n import (  # private: the string tables themselves
    EN,
    ZH,
    Translator,
    from_accept_language,
    pick_language,
)  # private: the string tables themselves
from ragmeter.stats import Change


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh"),
        ("zh-TW", "zh"),
        ("en-US,en;q=0.9", "en"),
        ("en;q=0.5, zh;q=0.9", "zh"),  # by quality, not by position
        ("fr-FR, de;q=0.8, zh-Hans;q=0.3", "zh"),  # the first one it speaks
        ("zh;q=0, en;q=0.1", "en"),  # q=0: not acceptable
        ("fr, de", None),
        ("", None),
        ("zh;q=abc", None),
    ],
)
def test_accept_language_picks_the_best_language_the_dashboard_speaks(header, language):
    assert from_accept_language(header) == language


def test_the_query_wins_over_the_cookie_which_wins_over_the_browser():
    assert pick_language("en", "zh", "zh-CN") == "en"
    assert pick_language(None, "en", "zh-CN") == "en"
    assert pick_language(None, "zh", "en") == "zh"
    assert pick_language("xx", "yy", "zh-CN") == "zh"  # unknown values are ignored
    assert pick_language(None, None, None) == "en"


def test_both_tables_have_every_string_with_the_same_placeholders():
    assert set(EN) == set(ZH)
    for key, english in EN.items():
        assert ZH[key], key
        assert sorted(_fields(english)) == sorted(_fields(ZH[key])), key
    assert Translator("zh")("samples_of", name="r", n=1, total=2) == "r：2 个样本中的 1 个"
    assert Translator("en")("tick_two", n=3) == "Tick exactly two runs to compare (3 ticked)."


def _fields(text: str) -> list[str]:
    import string

    return [name for _, name, _, _ in string.Formatter().parse(text) if name]


def test_every_word_for_a_change_has_a_string_in_both_languages():
    """The compare page shows ``change_<Comparison.change>``: one key per word it can say."""
    words = get_args(Change)
    assert "no significant change" in words
    assert {f"change_{w}" for w in words} == {k for k in EN if k.startswith("change_")}
    assert EN["change_no significant change"] == "no significant change"
    assert ZH["change_no significant change"] == "无显著变化"


def test_every_ui_string_exists_in_both_languages():
    assert set(EN) == set(ZH)
    assert all(ZH[key] for key in ZH)


def test_a_partial_run_is_not_called_failed_in_chinese():
    assert ZH["partial"] != "部分失败"  # a partial run need not have failed
