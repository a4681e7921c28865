"""Means with confidence intervals, per run and per tag group."""

import numpy as np
import pytest

from ragmeter.stats import MeanEstimate, bootstrap_ci, estimate_group_means, estimate_means
from tests.stats._build import evaluated, run

SCORES = [0.2, 0.9, None, 0.6, 0.7, 0.4, None, 1.0]


def test_mean_and_ci_over_the_samples_that_scored():
    result = run({"faithfulness": SCORES, "single": [None] * 7 + [0.5], "none": [None] * 8})
    est = estimate_means(result, n_resamples=2000, seed=4)
    ok = [s for s in SCORES if s is not None]
    f = est["faithfulness"]
    assert (f.metric, f.n, f.n_total, f.mean) == ("faithfulness", 6, 8, pytest.approx(np.mean(ok)))
    assert f.ci == bootstrap_ci(ok, n_resamples=2000, seed=4)
    assert est["single"] == MeanEstimate("single", 1, 8, 0.5, None)
    assert est["none"] == MeanEstimate("none", 0, 8, None, None)
    assert f.to_dict()["ci"]["method"] == "bca"


def test_options_and_metric_selection():
    result = run({"a": SCORES, "b": SCORES})
    est = estimate_means(result, level=0.9, method="percentile", n_resamples=500, metrics=["b"])
    assert list(est) == ["b"]
    assert (est["b"].ci.level, est["b"].ci.method) == (0.9, "percentile")
    with pytest.raises(ValueError, match="no metric"):
        estimate_means(result, metrics=["c"])
    with pytest.raises(ValueError, match="method"):
        estimate_means(result, method="normal")


def test_store_backed_run_gives_the_same_estimates():
    columns = {"faithfulness": SCORES}
    assert estimate_means(evaluated(columns), n_resamples=500) == estimate_means(
        run(columns), n_resamples=500
    )


def test_group_means_per_tag_value_with_list_valued_tags():
    tags = [
        {"hops": "one", "lang": ["en"]},
        {"hops": "two", "lang": ["en", "zh"]},
        {"hops": "one", "lang": ["zh"]},
        {"hops": "two"},
        {"hops": "one"},
        {"hops": "two"},
        {"hops": "one"},
        {"hops": "two", "lang": ["zh"]},
    ]
    result = run({"faithfulness": SCORES}, tags=tags)
    by_hops = estimate_group_means(result, "hops", n_resamples=500)
    assert list(by_hops) == ["one", "two"]
    one = by_hops["one"]["faithfulness"]
    assert (one.n, one.n_total, one.mean) == (2, 4, pytest.approx(0.45))
    assert one.ci == bootstrap_ci([0.2, 0.7], n_resamples=500)
    by_lang = estimate_group_means(result, "lang", n_resamples=500)
    assert {v: g["faithfulness"].n_total for v, g in by_lang.items()} == {"en": 2, "zh": 3}
    assert by_lang["en"]["faithfulness"].n == 2
    with pytest.raises(ValueError, match="no sample carries tag 'persona'"):
        estimate_group_means(result, "persona")
