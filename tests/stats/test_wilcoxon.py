"""The Wilcoxon option: scipy's p-value, and a clear error without scipy."""

import sys

import numpy as np
import pytest
from scipy import stats

from ragmeter.stats import wilcoxon_test


@pytest.mark.parametrize(
    "d",
    [
        np.random.default_rng(20).normal(0.05, 0.1, size=15),  # small, no ties: exact
        np.random.default_rng(21).normal(0.02, 0.1, size=120),  # large: normal approximation
        np.round(np.random.default_rng(22).normal(0.05, 0.2, size=40), 1),  # ties and zeros
    ],
)
def test_same_p_value_as_scipy(d):
    assert wilcoxon_test(d) == stats.wilcoxon(d).pvalue


def test_all_zero_differences_give_one_and_too_few_raise():
    assert wilcoxon_test([0.0, 0.0, 0.0]) == 1.0
    with pytest.raises(ValueError, match="at least 2"):
        wilcoxon_test([0.3])


def test_without_scipy_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r"ragmeter\[stats\]"):
        wilcoxon_test([0.1, 0.2, -0.1])
