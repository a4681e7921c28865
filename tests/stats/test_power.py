"""Minimum detectable effect and samples needed: the formula, the round trip, a simulation."""

import math

import numpy as np
import pytest

from ragmeter.stats import min_detectable_effect, samples_needed, sign_flip_test

Z = 1.959963984540054 + 0.8416212335729143  # z_{0.975} + z_{0.8}


def test_formula():
    assert min_detectable_effect(0.2, 100) == pytest.approx(Z * 0.2 / 10)
    assert min_detectable_effect(0.2, 100, alpha=0.01, power=0.9) == pytest.approx(
        (2.5758293035489 + 1.2815515655446004) * 0.02
    )
    assert samples_needed(0.03, 0.1) == math.ceil((Z * 0.1 / 0.03) ** 2) == 88
    assert samples_needed(-0.03, 0.1) == 88  # a drop needs as many as a rise


@pytest.mark.parametrize("sd", [0.05, 0.13, 0.3])
@pytest.mark.parametrize("n", [2, 17, 50, 400, 5000])
def test_round_trip(sd, n):
    mde = min_detectable_effect(sd, n)
    assert samples_needed(mde, sd) == n
    needed = samples_needed(mde * 1.01, sd)
    assert min_detectable_effect(sd, needed) <= mde * 1.01 < min_detectable_effect(sd, needed - 1)


def test_no_spread_needs_the_minimum():
    assert min_detectable_effect(0.0, 10) == 0.0
    assert samples_needed(0.01, 0.0) == 2


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: min_detectable_effect(-0.1, 10), "sd"),
        (lambda: min_detectable_effect(0.1, 0), "n must be"),
        (lambda: min_detectable_effect(0.1, 10, alpha=0), "alpha"),
        (lambda: min_detectable_effect(0.1, 10, power=1.2), "power"),
        (lambda: samples_needed(0.0, 0.1), "non-zero"),
        (lambda: samples_needed(float("nan"), 0.1), "non-zero"),
    ],
)
def test_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_change_of_the_mde_is_detected_about_80_percent_of_the_time():
    # Paired differences with sd 0.12 on 60 samples and a true change equal to the MDE: the
    # sign-flip test should reject at about the nominal 80% power.
    sd, n = 0.12, 60
    effect = min_detectable_effect(sd, n)
    assert samples_needed(effect, sd) == n
    rng = np.random.default_rng(5)
    replications = 400
    detected = sum(
        sign_flip_test(rng.normal(effect, sd, size=n), n_resamples=1000, seed=s) < 0.05
        for s in range(replications)
    )
    assert 0.72 <= detected / replications <= 0.88
