"""How the verdicts print numbers."""

import pytest

from ragmeter.stats._format import (  # private: how the sentences write numbers
    about,
    decimals_for,
    p_text,
    percent,
    signed,
)


@pytest.mark.parametrize(
    ("n", "text"), [(2, "2"), (88, "88"), (100, "100"), (173, "180"), (1234, "1300")]
)
def test_about_rounds_a_plan_up_to_two_digits(n, text):
    assert about(n) == text


@pytest.mark.parametrize(
    ("scale", "decimals"), [(0.08, 2), (0.5, 2), (3.0, 2), (0.004, 3), (0.0, 2), (1e-9, 6)]
)
def test_decimals_follow_the_scale(scale, decimals):
    assert decimals_for(scale) == decimals


def test_signed_p_and_percent():
    assert signed(0.05, 2) == "+0.05"
    assert signed(-0.031, 2) == "-0.03"
    assert signed(-0.0001, 2) == "+0.00"
    assert [p_text(p) for p in (0.19, 0.1003, 0.0996, 0.047, 0.003, 0.0004, 1.0)] == [
        "= 0.19",
        "= 0.10",
        "= 0.10",
        "= 0.047",
        "= 0.003",
        "< 0.001",
        "= 1.00",
    ]
    assert (percent(0.95), percent(0.9), percent(0.999)) == ("95%", "90%", "99.9%")
