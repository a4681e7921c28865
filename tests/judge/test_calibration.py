import json
import math

import numpy as np
import pytest
from scipy import optimize

from ragmeter.judge import (
    CalibrationError,
    TaskCalibration,
    VerdictCalibration,
    fit_calibration,
    fit_isotonic,
    fit_logistic,
    judge_identity,
    list_calibrations,
    load_calibration,
    save_calibration,
)


def _data(n=200, seed=3):
    """Verdicts whose P(yes) is over-confident: the truth is sigmoid(0.5 * logit(p) - 0.4)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0, 2.5, n)
    p = 1 / (1 + np.exp(-z))
    y = rng.random(n) < 1 / (1 + np.exp(-(0.5 * z - 0.4)))
    return p, y


def test_logistic_fit_matches_scipy_minimising_the_penalised_log_loss():
    p, y = _data()
    x = np.log(p / (1 - p))

    def loss(w):
        z = w[0] * x + w[1]
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * 1e-2 * w[0] ** 2

    expected = optimize.minimize(loss, np.zeros(2), method="BFGS", options={"gtol": 1e-10}).x
    assert fit_logistic(x, y.astype(float)) == pytest.approx(tuple(expected), abs=1e-4)


def test_logistic_fit_of_one_class_is_the_constant_share():
    slope, intercept = fit_logistic(np.array([0.1, 2.0]), np.array([1.0, 1.0]))
    assert slope == 0.0 and 1 / (1 + math.exp(-intercept)) == pytest.approx(1 - 1e-6)


def test_isotonic_pools_adjacent_violators_worked_by_hand():
    # x sorted: 0.1 0.2 0.3 0.4 0.5 with y 0 1 0 1 1: (1, 0) pool to 0.5 at 0.2-0.3.
    xs, ys = fit_isotonic(np.array([0.3, 0.1, 0.5, 0.2, 0.4]), np.array([0, 0, 1, 1, 1.0]))
    assert xs == (0.1, 0.2, 0.3, 0.4, 0.5)
    assert ys == (0.0, 0.5, 0.5, 1.0, 1.0)
    mapped = TaskCalibration("isotonic", xs=xs, ys=ys)
    # Linear between knots, constant beyond them.
    assert mapped.apply(0.05) == 0.0
    assert mapped.apply(0.15) == pytest.approx(0.25)
    assert mapped.apply(0.35) == pytest.approx(0.75)
    assert mapped.apply(0.9) == 1.0


def test_isotonic_ties_are_pooled_first():
    xs, ys = fit_isotonic(np.array([0.5, 0.5, 0.5, 0.9]), np.array([1, 0, 0, 1.0]))
    assert xs == (0.5, 0.9) and ys == pytest.approx((1 / 3, 1.0))


def test_platt_map_applies_to_the_logit():
    mapped = TaskCalibration("platt", slope=2.0, intercept=-1.0)
    p = 0.7
    assert mapped.apply(p) == pytest.approx(1 / (1 + math.exp(-(2 * math.log(0.7 / 0.3) - 1))))


def test_verdict_calibration_applies_per_task_then_language():
    cal = VerdictCalibration(
        "platt",
        {
            "supported": TaskCalibration("platt", 0.0, 2.0),
            "supported/zh": TaskCalibration("platt", 0.0, -2.0),
        },
    )
    assert cal.apply("supported", "en", 0.1) == pytest.approx(1 / (1 + math.exp(-2)))
    assert cal.apply("supported", "zh", 0.9) == pytest.approx(1 / (1 + math.exp(2)))
    assert cal.apply("useful", "en", 0.3) == 0.3  # no map: unchanged


def test_fit_calibration_cross_validates_by_group_and_improves_overconfident_verdicts():
    p, y = _data(400)
    groups = [i // 4 for i in range(len(p))]  # a "question" of four verdicts
    cal, cv = fit_calibration(
        {"supported": list(zip(p, y))}, method="platt", folds=5, groups={"supported": groups}
    )
    task = cv.tasks["supported"]
    assert task.n == 400 and task.groups == 100 and task.folds == 5
    # Before: the raw P(yes) against the labels, computed here independently.
    raw_acc = float(np.mean((p >= 0.5) == y))
    assert task.before.accuracy == pytest.approx(raw_acc)
    pc = np.clip(p, 1e-6, 1 - 1e-6)
    assert task.before.log_loss == pytest.approx(
        float(np.mean(-(y * np.log(pc) + (1 - y) * np.log(1 - pc))))
    )
    assert task.before.brier == pytest.approx(float(np.mean((p - y) ** 2)))
    # After: each fold scored by a fit on the others (folds: question k in fold k % 5).
    x = np.log(pc / (1 - pc))
    fold = np.array([g % 5 for g in groups])
    calibrated = np.empty(len(p))
    for k in range(5):
        s, c = fit_logistic(x[fold != k], y[fold != k].astype(float))
        calibrated[fold == k] = 1 / (1 + np.exp(-(s * x[fold == k] + c)))
    assert task.after.brier == pytest.approx(float(np.mean((calibrated - y) ** 2)))
    assert task.after.log_loss < task.before.log_loss  # over-confidence corrected
    assert task.accuracy_gain == pytest.approx(task.after.accuracy - task.before.accuracy)
    assert task.before.accuracy_ci is not None and task.before.accuracy_ci.low <= raw_acc
    assert cal.n_labels == 400 and cal.tasks["supported"].n == 400
    assert cal.cv["tasks"]["supported"]["n"] == 400


def test_fit_calibration_refuses_one_kind_of_label_naming_the_task():
    with pytest.raises(CalibrationError, match=r"task 'useful'.*yes and no labels"):
        fit_calibration({"useful": [(0.2, True), (0.9, True), (0.4, True)]})
    with pytest.raises(CalibrationError, match="unknown calibration method"):
        fit_calibration({"useful": [(0.2, True), (0.9, False)]}, method="spline")


def test_judge_identity_names_who_answers_never_the_url_path_or_key():
    described = {
        "kind": "openai-compatible",
        "model": "gpt-4o-mini",
        "base_url": "https://user:secret@api.example.com/v1",
        "temperature": 0.0,
    }
    assert (
        judge_identity(described) == "kind=openai-compatible model=gpt-4o-mini host=api.example.com"
    )


def test_saved_versions_count_up_and_load_by_name_version_or_path(tmp_path):
    cal, _ = fit_calibration({"useful": [(0.2, False), (0.9, True), (0.6, False), (0.7, True)]})
    refit, _ = fit_calibration({"useful": [(0.2, False), (0.9, True), (0.4, False), (0.7, True)]})
    assert refit.content_hash != cal.content_hash
    first, path1 = save_calibration(cal, "team", root=tmp_path)
    again, path_again = save_calibration(cal, "team", root=tmp_path)  # the same fit: v1
    assert (again, path_again) == (first, path1)
    second, path2 = save_calibration(refit, "team", root=tmp_path)
    assert (path1.name, path2.name) == ("v1.json", "v2.json")
    assert (first.version, second.version) == (1, 2)
    assert list_calibrations(tmp_path) == {"team": [1, 2]}
    assert load_calibration("team", root=tmp_path).version == 2
    assert load_calibration("team@v1", root=tmp_path).version == 1
    loaded = load_calibration(str(path1))
    assert loaded == first and loaded.content_hash == cal.content_hash
    data = json.loads(path1.read_text())
    for key in ("method", "tasks", "judge", "fitted_on", "n_labels", "cv", "created_at"):
        assert key in data
    assert data["content_hash"] == cal.content_hash


def test_missing_names_list_the_available_ones(tmp_path):
    cal, _ = fit_calibration({"useful": [(0.2, False), (0.9, True)]})
    save_calibration(cal, "team", root=tmp_path)
    with pytest.raises(CalibrationError, match=r"no calibration named 'other'.*team \(v1\)"):
        load_calibration("other", root=tmp_path)
    with pytest.raises(CalibrationError, match=r"has no version 'v7'.*v1"):
        load_calibration("team@v7", root=tmp_path)


def test_a_hand_edited_file_is_refused(tmp_path):
    cal, _ = fit_calibration({"useful": [(0.2, False), (0.9, True)]})
    _, path = save_calibration(cal, "team", root=tmp_path)
    data = json.loads(path.read_text())
    data["tasks"]["useful"]["slope"] = 9.0
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match="content hash"):
        load_calibration(str(path))


def test_another_judge_is_refused_unless_forced():
    cal = VerdictCalibration("platt", {}, judge="kind=local model=a")
    with pytest.raises(
        CalibrationError, match=r"fitted for judge 'kind=local model=a'.*'kind=local model=b'"
    ):
        cal.check_judge({"kind": "local", "model": "b"})
    cal.check_judge({"kind": "local", "model": "b"}, force=True)
    cal.check_judge({"kind": "local", "model": "a"})
