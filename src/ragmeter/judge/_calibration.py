"""Verdict calibrations fitted on a team's own labels: a map per verdict task from the judge's
P(yes) to a calibrated P(yes), applied by :class:`~ragmeter.judge.Judge` after the judge's own
(shipped) probability, so a verdict is "yes" when the calibrated P(yes) is at least 0.5.

Two methods, both fitted with numpy only:

- ``"platt"``: logistic regression on ``logit(P(yes))`` (Newton's method; :func:`fit_logistic`
  is the one logistic fit in ragmeter: bench/meta_eval.py fits the shipped calibrations with it);
- ``"isotonic"``: a non-decreasing map (pool adjacent violators), interpolated linearly
  between its knots and constant beyond them.

:func:`fit_calibration` fits per task and measures, by cross-validation over groups
(questions: a question's verdicts stay in one fold), the verdict accuracy, log-loss and Brier
score before and after. Calibrations are saved, named and versioned, as
``.ragmeter/calibrations/NAME/vN.json`` (:func:`save_calibration`, :func:`load_calibration`).

Applying a calibration changes no answer of the judge: answers stay cached under the same key.
"""

from __future__ import annotations

import bisect
import datetime as dt
import hashlib
import itertools
import json
import math
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from ragmeter._record import attributes

if TYPE_CHECKING:
    import numpy as np

    from ragmeter._bootstrap import Interval

CalibrationMethod = Literal["platt", "isotonic"]
METHODS: tuple[CalibrationMethod, ...] = ("platt", "isotonic")
#: Where calibrations are saved, relative to the working directory.
DEFAULT_CALIBRATION_ROOT = Path(".ragmeter") / "calibrations"
#: P(yes) is kept in [EPS, 1 - EPS] before its logit is taken and in log-loss.
EPS = 1e-6
#: Ridge penalty on a Platt fit's slope (none on its intercept), as the shipped fits use.
L2 = 1e-2
#: The fields of a judge's ``describe()`` that say who answers (an endpoint by its host).
_IDENTITY_FIELDS = (
    "kind",
    "provider",
    "model",
    "azure_deployment",
    "deployment",
    "name",
    "sha256",
    "runtime",
)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_VERSION_FILE = re.compile(r"^v([1-9][0-9]*)\.json$")


class CalibrationError(ValueError):
    """A calibration that cannot be fitted, found, read or used with this judge."""


# -- fitting ---------------------------------------------------------------------------------
def _logit(p: float) -> float:
    p = min(max(p, EPS), 1 - EPS)
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[float, float]:
    """(slope, intercept) of P(y=1) = sigmoid(slope * x + intercept) by Newton's method
    (iteratively reweighted least squares), with a ridge penalty ``l2`` on the slope. With
    one class only, the slope is 0 and the intercept the logit of its (clipped) share."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) == 0:
        raise CalibrationError("a logistic fit needs at least one labelled verdict")
    if y.min() == y.max():
        return 0.0, _logit(float(y.mean()))
    w = np.zeros(2)
    design = np.column_stack([x, np.ones_like(x)])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(design @ w)))
        gradient = design.T @ (p - y) + l2 * np.array([w[0], 0.0])
        hessian = (design * (p * (1 - p))[:, None]).T @ design + l2 * np.diag([1.0, 0.0])
        step = np.linalg.solve(hessian + 1e-9 * np.eye(2), gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return float(w[0]), float(w[1])


def fit_isotonic(x: np.ndarray, y: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The knots (x, value) of the non-decreasing least-squares fit of ``y`` on ``x`` (pool
    adjacent violators; tied x pooled first), each pooled block as its two ends."""
    import numpy as np

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) == 0:
        raise CalibrationError("an isotonic fit needs at least one labelled verdict")
    xs, inverse = np.unique(x, return_inverse=True)
    sums = np.bincount(inverse, weights=y)
    counts = np.bincount(inverse).astype(float)
    # Blocks: [value, weight, first x index, last x index]
    blocks: list[list[float]] = []
    for i in range(len(xs)):
        blocks.append([sums[i] / counts[i], counts[i], i, i])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            b = blocks.pop()
            a = blocks[-1]
            weight = a[1] + b[1]
            a[0] = (a[0] * a[1] + b[0] * b[1]) / weight
            a[1], a[3] = weight, b[3]
    knots_x: list[float] = []
    knots_y: list[float] = []
    for value, _, first, last in blocks:
        for end in dict.fromkeys((int(first), int(last))):
            knots_x.append(float(xs[end]))
            knots_y.append(float(value))
    return tuple(knots_x), tuple(knots_y)


@dataclass(frozen=True)
class TaskCalibration:
    """The map of one verdict task: P(yes) as the judge gives it -> calibrated P(yes).
    Platt: ``slope`` and ``intercept`` on logit(P); isotonic: the knots ``xs`` -> ``ys``."""

    method: CalibrationMethod
    slope: float = 1.0
    intercept: float = 0.0
    xs: tuple[float, ...] = ()
    ys: tuple[float, ...] = ()
    #: Labelled verdicts it was fitted on.
    n: int = 0

    def apply(self, p_yes: float) -> float:
        if self.method == "platt":
            return _sigmoid(self.slope * _logit(p_yes) + self.intercept)
        if not self.xs:
            return p_yes
        if p_yes <= self.xs[0]:
            return self.ys[0]
        if p_yes >= self.xs[-1]:
            return self.ys[-1]
        i = bisect.bisect_right(self.xs, p_yes)
        x0, x1, y0, y1 = self.xs[i - 1], self.xs[i], self.ys[i - 1], self.ys[i]
        return y0 if x1 == x0 else y0 + (y1 - y0) * (p_yes - x0) / (x1 - x0)

    def to_dict(self) -> dict[str, Any]:
        if self.method == "platt":
            return {"slope": self.slope, "intercept": self.intercept, "n": self.n}
        return {"xs": list(self.xs), "ys": list(self.ys), "n": self.n}

    @classmethod
    def from_dict(cls, method: CalibrationMethod, data: Mapping[str, Any]) -> TaskCalibration:
        if method == "platt":
            return cls(method, float(data["slope"]), float(data["intercept"]), n=int(data["n"]))
        xs = tuple(float(v) for v in data["xs"])
        ys = tuple(float(v) for v in data["ys"])
        if len(xs) != len(ys) or any(b < a for a, b in itertools.pairwise(xs)):
            raise CalibrationError("an isotonic map needs as many xs as ys, xs non-decreasing")
        return cls(method, xs=xs, ys=ys, n=int(data["n"]))


def fit_task(p_yes: Sequence[float], labels: Sequence[bool], method: str) -> TaskCalibration:
    """One task's map fitted on the judge's P(yes) and the human labels."""
    import numpy as np

    y = np.asarray([1.0 if v else 0.0 for v in labels])
    if method == "platt":
        x = np.asarray([_logit(p) for p in p_yes])
        slope, intercept = fit_logistic(x, y)
        return TaskCalibration("platt", slope, intercept, n=len(y))
    if method == "isotonic":
        xs, ys = fit_isotonic(np.asarray(p_yes, dtype=float), y)
        return TaskCalibration("isotonic", xs=xs, ys=ys, n=len(y))
    raise CalibrationError(f"unknown calibration method {method!r}: use one of {METHODS}")


# -- the record ------------------------------------------------------------------------------
@dataclass(frozen=True)
class VerdictCalibration:
    """A named, versioned calibration: per verdict task (``"supported"``, ``"useful"``,
    ``"relevant"``, ..., or ``"TASK/LANGUAGE"`` for one language) a map from the judge's P(yes)
    to a calibrated one. ``judge`` names the judge it was fitted for (:func:`judge_identity`)."""

    method: CalibrationMethod
    tasks: Mapping[str, TaskCalibration]
    judge: str = ""
    name: str = ""
    version: int = 0
    fitted_on: str = ""
    n_labels: int = 0
    cv: Mapping[str, Any] = field(default_factory=dict)
    created_at: str = ""

    def for_task(self, task: str, language: str) -> TaskCalibration | None:
        return self.tasks.get(f"{task}/{language}") or self.tasks.get(task)

    def apply(self, task: str, language: str, p_yes: float) -> float:
        """The calibrated P(yes) of a verdict on ``task``; unchanged for a task it has no
        map for."""
        found = self.for_task(task, language)
        return p_yes if found is None else found.apply(p_yes)

    def _content(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "tasks": {k: self.tasks[k].to_dict() for k in sorted(self.tasks)},
            "judge": self.judge,
        }

    @property
    def content_hash(self) -> str:
        """sha256 (first 16 hex) of what changes verdicts: method, maps and judge."""
        text = json.dumps(self._content(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    @property
    def label(self) -> str:
        """How run records name it, e.g. ``"mine@v2 (sha256 1a2b3c4d5e6f7a8b)"``."""
        who = f"{self.name}@v{self.version}" if self.name else "unnamed"
        return f"{who} (sha256 {self.content_hash})"

    def to_dict(self) -> dict[str, Any]:
        return {
            **attributes(self, "name", "version"),
            **self._content(),
            **attributes(self, "fitted_on", "n_labels", "created_at", "content_hash"),
            "cv": dict(self.cv),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "calibration") -> VerdictCalibration:
        try:
            method = data["method"]
            if method not in METHODS:
                raise CalibrationError(f"{where}: method {method!r} is not one of {METHODS}")
            tasks = {
                str(task): TaskCalibration.from_dict(method, params)
                for task, params in dict(data["tasks"]).items()
            }
            made = cls(
                method,
                tasks,
                judge=str(data.get("judge") or ""),
                name=str(data.get("name") or ""),
                version=int(data.get("version") or 0),
                fitted_on=str(data.get("fitted_on") or ""),
                n_labels=int(data.get("n_labels") or 0),
                cv=dict(data.get("cv") or {}),
                created_at=str(data.get("created_at") or ""),
            )
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, CalibrationError):
                raise
            raise CalibrationError(
                f"{where} is not a calibration ({type(error).__name__}: {error}): "
                "write it with `ragmeter calibrate fit`"
            ) from error
        recorded = data.get("content_hash")
        if recorded and recorded != made.content_hash:
            raise CalibrationError(
                f"{where}: its content hash {recorded} does not match its maps "
                f"({made.content_hash}): it was edited by hand; fit it again"
            )
        return made

    def check_judge(self, described: Mapping[str, Any], *, force: bool = False) -> None:
        """Refuse a judge other than the one it was fitted for (unless ``force``)."""
        if force or not self.judge:
            return
        actual = judge_identity(described)
        if actual != self.judge:
            raise CalibrationError(
                f"calibration {self.label} was fitted for judge {self.judge!r}, not this "
                f"run's judge {actual!r}: fit one for this judge, or use it anyway with "
                "--force-calibration (force_calibration=True)"
            )


def judge_identity(described: Mapping[str, Any]) -> str:
    """Who answers, from a judge's ``describe()`` record: kind, provider, model (or
    deployment), embedded model hash and runtime, endpoint host; never a key or a path."""
    parts = [f"{k}={described[k]}" for k in _IDENTITY_FIELDS if described.get(k)]
    url = described.get("base_url") or described.get("endpoint")
    if isinstance(url, str) and url:
        try:
            host = urlsplit(url if "://" in url else f"//{url}").hostname
        except ValueError:
            host = None
        if host:
            parts.append(f"host={host}")
    return " ".join(parts)


# -- cross-validation ------------------------------------------------------------------------
@dataclass(frozen=True)
class Scores:
    """Verdict accuracy (P >= 0.5 against the label), log-loss and Brier score, with
    bootstrap CIs over verdicts (``None`` under two verdicts)."""

    accuracy: float
    log_loss: float
    brier: float
    accuracy_ci: Interval | None
    log_loss_ci: Interval | None
    brier_ci: Interval | None

    def to_dict(self) -> dict[str, Any]:
        def ci(interval: Interval | None) -> list[float] | None:
            return None if interval is None else [interval.low, interval.high]

        return {
            "accuracy": self.accuracy,
            "accuracy_ci": ci(self.accuracy_ci),
            "log_loss": self.log_loss,
            "log_loss_ci": ci(self.log_loss_ci),
            "brier": self.brier,
            "brier_ci": ci(self.brier_ci),
        }


@dataclass(frozen=True)
class TaskValidation:
    """One task's cross-validated figures: ``before`` (the judge's P(yes) as given) and
    ``after`` (each fold calibrated by a map fitted on the other folds)."""

    task: str
    n: int
    groups: int
    folds: int
    before: Scores
    after: Scores
    #: after - before accuracy, paired over verdicts, and its CI.
    accuracy_gain: float
    accuracy_gain_ci: Interval | None

    def to_dict(self) -> dict[str, Any]:
        ci = self.accuracy_gain_ci
        return {
            **attributes(self, "n", "groups", "folds"),
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "accuracy_gain": self.accuracy_gain,
            "accuracy_gain_ci": None if ci is None else [ci.low, ci.high],
        }


@dataclass(frozen=True)
class CrossValidation:
    method: CalibrationMethod
    tasks: Mapping[str, TaskValidation]

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "tasks": {k: v.to_dict() for k, v in sorted(self.tasks.items())},
        }


def _ci(values: np.ndarray) -> Interval | None:
    from ragmeter._bootstrap import bootstrap_ci

    if len(values) < 2:
        return None
    return bootstrap_ci(values, method="percentile", n_resamples=2000)


def verdict_scores(p_yes: np.ndarray, labels: np.ndarray) -> Scores:
    """Accuracy, log-loss (P kept in [EPS, 1 - EPS]) and Brier score of P(yes) against
    the 0/1 ``labels``."""
    import numpy as np

    p = np.clip(np.asarray(p_yes, dtype=float), EPS, 1 - EPS)
    y = np.asarray(labels, dtype=float)
    correct = ((p >= 0.5) == (y == 1)).astype(float)
    loss = -(y * np.log(p) + (1 - y) * np.log(1 - p))
    brier = (np.asarray(p_yes, dtype=float) - y) ** 2
    return Scores(
        float(correct.mean()),
        float(loss.mean()),
        float(brier.mean()),
        _ci(correct),
        _ci(loss),
        _ci(brier),
    )


def fold_of(groups: Sequence[Hashable], folds: int) -> list[int]:
    """Each item's fold: groups in order of first appearance, the k-th in fold k % folds."""
    rank: dict[Hashable, int] = {}
    for g in groups:
        rank.setdefault(g, len(rank))
    return [rank[g] % folds for g in groups]


def cross_validated(
    p_yes: Sequence[float],
    labels: Sequence[bool],
    groups: Sequence[Hashable],
    method: str,
    folds: int,
) -> list[float]:
    """Each verdict's P(yes) calibrated by a map fitted on the other folds."""
    assigned = fold_of(groups, folds)
    out = [0.0] * len(p_yes)
    for k in range(folds):
        train = [i for i, f in enumerate(assigned) if f != k]
        test = [i for i, f in enumerate(assigned) if f == k]
        if not test:
            continue
        fitted = fit_task([p_yes[i] for i in train], [labels[i] for i in train], method)
        for i in test:
            out[i] = fitted.apply(p_yes[i])
    return out


def _validate_task(
    task: str,
    pairs: Sequence[tuple[float, bool]],
    groups: Sequence[Hashable],
    method: str,
    folds: int,
) -> TaskValidation:
    import numpy as np

    p = [float(x) for x, _ in pairs]
    y = [bool(v) for _, v in pairs]
    n_groups = len(set(groups))
    k = min(folds, n_groups)
    y01 = np.asarray(y, dtype=float)
    before = verdict_scores(np.asarray(p), y01)
    calibrated = np.asarray(cross_validated(p, y, groups, method, k))
    after = verdict_scores(calibrated, y01)
    gain = ((calibrated >= 0.5) == (y01 == 1)).astype(float) - (
        (np.asarray(p) >= 0.5) == (y01 == 1)
    ).astype(float)
    return TaskValidation(task, len(p), n_groups, k, before, after, float(gain.mean()), _ci(gain))


def fit_calibration(
    pairs_by_task: Mapping[str, Sequence[tuple[float, bool]]],
    method: str = "platt",
    folds: int = 5,
    groups: Mapping[str, Sequence[Hashable]] | None = None,
    *,
    judge: str = "",
    fitted_on: str = "",
) -> tuple[VerdictCalibration, CrossValidation]:
    """A calibration per task fitted on (judge's P(yes), human label) pairs, and its
    cross-validated figures: ``folds`` folds over ``groups`` (per task, one group per pair,
    e.g. the question; by default each pair its own group), so a group's verdicts are never
    both fitted on and scored. Every task needs labels of both kinds and two groups."""
    if method not in METHODS:
        raise CalibrationError(f"unknown calibration method {method!r}: use one of {METHODS}")
    if folds < 2:
        raise CalibrationError(f"cross-validation needs at least 2 folds, not {folds}")
    if not pairs_by_task:
        raise CalibrationError("no labelled verdicts to fit a calibration on")
    maps: dict[str, TaskCalibration] = {}
    checked: dict[str, TaskValidation] = {}
    for task, pairs in pairs_by_task.items():
        task_groups = list(groups[task]) if groups is not None else list(range(len(pairs)))
        if len(task_groups) != len(pairs):
            raise CalibrationError(
                f"task {task!r}: {len(pairs)} pairs but {len(task_groups)} groups"
            )
        if not all(0.0 <= float(p) <= 1.0 for p, _ in pairs):
            raise CalibrationError(f"task {task!r}: a P(yes) outside [0, 1]")
        kinds = {bool(v) for _, v in pairs}
        if kinds != {True, False} or len(set(task_groups)) < 2:
            raise CalibrationError(
                f"task {task!r}: {len(pairs)} labelled verdicts "
                f"({sum(bool(v) for _, v in pairs)} yes) in {len(set(task_groups))} "
                "group(s): a calibration needs yes and no labels from at least 2 groups; "
                "label more verdicts of this task"
            )
        maps[task] = fit_task([p for p, _ in pairs], [v for _, v in pairs], method)
        checked[task] = _validate_task(task, pairs, task_groups, method, folds)
    validation = CrossValidation(method, checked)
    calibration = VerdictCalibration(
        method,
        maps,
        judge=judge,
        fitted_on=fitted_on,
        n_labels=sum(len(p) for p in pairs_by_task.values()),
        cv=validation.to_dict(),
    )
    return calibration, validation


# -- named and versioned files ---------------------------------------------------------------
def _versions(folder: Path) -> list[int]:
    if not folder.is_dir():
        return []
    found = (_VERSION_FILE.match(p.name) for p in folder.iterdir())
    return sorted(int(m.group(1)) for m in found if m)


def list_calibrations(root: str | Path = DEFAULT_CALIBRATION_ROOT) -> dict[str, list[int]]:
    """Saved calibrations: name -> its versions, oldest first."""
    base = Path(root)
    if not base.is_dir():
        return {}
    out = {p.name: _versions(p) for p in sorted(base.iterdir()) if p.is_dir()}
    return {name: versions for name, versions in out.items() if versions}


def save_calibration(
    calibration: VerdictCalibration, name: str, root: str | Path = DEFAULT_CALIBRATION_ROOT
) -> tuple[VerdictCalibration, Path]:
    """Save as the next version of ``name`` (``ROOT/NAME/vN.json``, N counting up); the
    calibration as saved (named, numbered, dated) and its path. The same fit as the latest
    version (method, maps and judge: :attr:`VerdictCalibration.content_hash`) is that
    version, not a new one."""
    if not _NAME.match(name):
        raise CalibrationError(
            f"calibration name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)"
        )
    folder = Path(root) / name
    folder.mkdir(parents=True, exist_ok=True)
    versions = _versions(folder)
    if versions:
        latest_path = folder / f"v{versions[-1]}.json"
        latest = _read(latest_path)
        if latest.content_hash == calibration.content_hash:
            return latest, latest_path
    version = (versions or [0])[-1] + 1
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    saved = replace(calibration, name=name, version=version, created_at=now)
    path = folder / f"v{version}.json"
    text = json.dumps(saved.to_dict(), indent=2, ensure_ascii=False, sort_keys=True)
    with path.open("x", encoding="utf-8") as out:  # never overwrites a version
        out.write(text + "\n")
    return saved, path


def load_calibration(
    spec: str | Path, root: str | Path = DEFAULT_CALIBRATION_ROOT
) -> VerdictCalibration:
    """``NAME`` (its latest version), ``NAME@vN``, or the path of a .json file."""
    text = str(spec)
    if text.endswith(".json") or Path(text).is_file():
        return _read(Path(text))
    name, _, version = text.partition("@")
    available = list_calibrations(root)
    if name not in available:
        names = ", ".join(f"{n} (v{v[-1]})" for n, v in available.items()) or "none yet"
        raise CalibrationError(
            f"no calibration named {name!r} in {Path(root)}: available: {names} "
            "(fit one with `ragmeter calibrate fit`)"
        )
    if version:
        match = re.fullmatch(r"v?([1-9][0-9]*)", version)
        if match is None or int(match.group(1)) not in available[name]:
            have = ", ".join(f"v{v}" for v in available[name])
            raise CalibrationError(
                f"calibration {name!r} has no version {version!r}: it has {have}"
            )
        number = int(match.group(1))
    else:
        number = available[name][-1]
    return _read(Path(root) / name / f"v{number}.json")


def _read(path: Path) -> VerdictCalibration:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise CalibrationError(f"no calibration file {str(path)!r}") from error
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CalibrationError(f"cannot read calibration {str(path)!r}: {error}") from error
    if not isinstance(data, dict):
        raise CalibrationError(f"{str(path)!r} is not a calibration (not a JSON object)")
    return VerdictCalibration.from_dict(data, where=str(path))
