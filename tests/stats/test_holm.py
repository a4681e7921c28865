"""Holm's correction against a hand-computed example."""

import pytest

from ragmeter.stats import holm


def test_hand_computed_example():
    # Sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04, raised to
    # the 0.06 before it (adjusted p-values never decrease along the sorted order).
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_capped_at_one_and_single_p_unchanged():
    assert holm([0.5, 0.6, 0.01]) == pytest.approx([1.0, 1.0, 0.03])
    assert holm([0.2]) == [0.2]
    assert holm([]) == []


def test_ties_get_the_same_adjusted_value():
    assert holm([0.02, 0.02, 0.5]) == pytest.approx([0.06, 0.06, 0.5])


def test_rejects_what_is_not_a_p_value():
    for bad in ([1.5], [-0.1], [float("nan")], [None], [True]):
        with pytest.raises(ValueError, match="between 0 and 1"):
            holm(bad)
