"""Live quality on production traffic: new samples scored in windows, each window stored as a
run, compared with a baseline, and an alert when a metric drops.

What makes a restart lose nothing and pay nothing twice: the state file (``state.json`` in
the state folder) is replaced atomically after every step. Lines are read, then the file
offsets and the open windows' samples are saved together, so a line is never read twice nor
dropped. A window is scored into its own run directory (``windows/NNNNNN``): killed while
it is judged, the next start resumes that run, and the results already computed are kept,
not asked of the judge again. A window is marked closed (with its run id) before its
alerts are sent, and marked sent after: an alert may be sent twice after a crash, never lost.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter._services import replaced_atomically
from ragmeter.dataset import Dataset, Problem
from ragmeter.metrics import Direction, Metric, Status, resolve_metrics
from ragmeter.monitor._alerts import append_log, check_webhook, post_webhook
from ragmeter.monitor._source import Cursor, read_new, source_files

if TYPE_CHECKING:
    from ragmeter.embed import Embeddings
    from ragmeter.judge import Judge
    from ragmeter.prompts import Language
    from ragmeter.results import EvaluationResult
    from ragmeter.store import Store

#: The reference-free metrics scored when none are named.
DEFAULT_METRICS = ("faithfulness", "answer_relevancy", "context_utilization")
#: Fields only a labelled (golden) sample has: a metric that cannot do without one of them
#: cannot score production traffic.
REFERENCE_FIELDS = frozenset(
    {"reference", "reference_contexts", "reference_context_ids", "relevance"}
)
STATE_FILE = "state.json"
#: Closed windows kept in the state (the run store keeps them all): the state file, written
#: after every step, stays small however long the monitor runs.
KEEP_CLOSED = 200
STATE_VERSION = 1
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class WindowSpec:
    """A window of ``size`` samples, or of ``seconds`` of time (``text`` as given)."""

    text: str
    size: int | None = None
    seconds: int | None = None

    @classmethod
    def parse(cls, value: str | int) -> WindowSpec:
        """``100`` (samples), or ``30m``, ``1h``, ``1d`` (time; also ``s``).

        >>> WindowSpec.parse("100").size, WindowSpec.parse("1h").seconds
        (100, 3600)
        """
        text = str(value).strip().lower()
        if text.isdigit() and int(text) >= 2:
            return cls(text, size=int(text))
        number, unit = text[:-1], text[-1:]
        if unit in _UNITS and number.isdigit() and int(number) > 0:
            return cls(text, seconds=int(number) * _UNITS[unit])
        raise ValueError(
            f"window {value!r} cannot be read: give a number of samples (at least 2, e.g. "
            "100) or a time with s, m, h or d (e.g. 1h, 1d)"
        )


def check_reference_free(metrics: Sequence[Metric]) -> None:
    """Refuse a metric that needs a reference: production traffic has none."""
    for metric in metrics:
        for alternatives in metric.requires:
            if alternatives and set(alternatives) <= REFERENCE_FIELDS:
                raise ValueError(
                    f"metric {metric.name!r} needs {' or '.join(alternatives)}, a reference "
                    "answer that live traffic does not have: monitor with reference-free "
                    f"metrics ({', '.join(DEFAULT_METRICS)}, or a prompt metric on "
                    "user_input, response and retrieved_contexts)"
                )


@dataclass(frozen=True)
class WindowMetric:
    """One metric in one window: its mean with a bootstrap CI, and, against the baseline,
    the difference (window - baseline) with its CI and the unpaired test's p-value
    (Holm-adjusted across the window's metrics in ``p_adjusted``). ``drop``: an alert."""

    metric: str
    direction: str
    n: int
    mean: float | None
    ci: tuple[float, float] | None
    baseline_mean: float | None = None
    n_baseline: int = 0
    difference: float | None = None
    difference_ci: tuple[float, float] | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    drop: bool = False
    worst_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["worst_ids"] = list(self.worst_ids)
        return out


@dataclass(frozen=True)
class Window:
    """A closed window: its bounds (ISO 8601, UTC), its samples, the run it was stored as,
    and per metric its estimate and comparison. ``baseline``: it is one of the first
    windows that make the baseline (no baseline run given), so it is not compared."""

    index: int
    start: str
    end: str
    n_samples: int
    run_dir: str
    run_name: str
    run_id: str | None
    metrics: tuple[WindowMetric, ...]
    baseline: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["metrics"] = [m.to_dict() for m in self.metrics]
        return out


@dataclass
class PollReport:
    """What one poll did: lines read, rows skipped (each problem with file, line, field and
    fix), late samples, notes (a rotated file, a run not stored...), closed windows, the
    alerts raised and the webhook deliveries that failed."""

    lines: int = 0
    samples: int = 0
    bad: list[Problem] = field(default_factory=list)
    late: int = 0
    notes: list[str] = field(default_factory=list)
    windows: list[Window] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    webhook_failures: list[str] = field(default_factory=list)
    #: Windows due to close of which nothing could be scored (the judge was down): each
    #: is kept open and scored again on the next poll (its run resumed: nothing paid twice).
    unscored: list[str] = field(default_factory=list)


class Monitor:
    """Score the samples appended to ``source`` (a JSONL file, or a folder of them) in
    windows; store each window as a run; compare it with the baseline; alert on a drop.

    ``window``: a number of samples (``100``) or a time (``"1h"``, ``"1d"``). A time window
    goes by each sample's ``metadata.timestamp`` (ISO 8601; without a zone, UTC), else by
    when the sample was read. It closes once a sample ``grace_s`` seconds past its end has
    been read, or, for samples timed on arrival, once the clock is; a sample whose window
    has closed is late: counted and skipped. ``poll(flush=True)`` closes every open window.

    ``baseline``: a run (an :class:`EvaluationResult`, a run directory, or a run id or name
    in the run store) whose scores each window is compared with; without one, the first
    ``baseline_windows`` windows make it. A metric drops when the window is worse in its
    direction, by more than ``min_drop`` (absolute), and an unpaired permutation test
    (:func:`ragmeter.stats.two_sample_test`), Holm-corrected across metrics, is below
    ``alpha``. Each drop is an alert: a JSON line in ``log``, a POST to ``webhook`` (10 s
    timeout, 3 tries; a failure is noted, never raised).

    ``state_dir`` (default ``.ragmeter/monitor/NAME``) holds the file offsets, the open
    windows, the closed ones and each window's run directory.
    """

    def __init__(
        self,
        source: str | os.PathLike[str],
        metrics: Sequence[Metric | str] | str = DEFAULT_METRICS,
        *,
        name: str | None = None,
        window: str | int = 100,
        grace_s: float = 300.0,
        baseline: EvaluationResult | str | os.PathLike[str] | None = None,
        baseline_windows: int = 1,
        alpha: float = 0.05,
        min_drop: float = 0.05,
        level: float = 0.95,
        n_resamples: int = 10_000,
        worst: int = 5,
        state_dir: str | os.PathLike[str] | None = None,
        store: Store | str | None = None,
        record_runs: bool = True,
        log: str | os.PathLike[str] | None = None,
        webhook: str | None = None,
        webhook_backoff_s: float = 1.0,
        judge: Judge | None = None,
        embeddings: Embeddings | None = None,
        language: Language | None = None,
        concurrency: int = 16,
    ) -> None:
        from ragmeter._validate import check_level

        self.source = Path(source)
        source_files(self.source)  # a missing source fails now
        self.metrics = resolve_metrics(metrics)
        check_reference_free(self.metrics)
        self.name = name or self.source.stem
        self.window = WindowSpec.parse(window)
        if baseline_windows < 1:
            raise ValueError(f"baseline_windows must be at least 1, got {baseline_windows}")
        if not min_drop >= 0:  # also NaN
            raise ValueError(f"min_drop must be 0 or more, got {min_drop}")
        self.alpha, self.level = check_level(alpha, "alpha"), check_level(level)
        self.grace_s, self.baseline_windows, self.min_drop = grace_s, baseline_windows, min_drop
        self.n_resamples, self.worst = n_resamples, worst
        self.state_dir = Path(state_dir or Path(".ragmeter") / "monitor" / self.name)
        self.log = None if log is None else Path(log)
        self.webhook, self.webhook_backoff_s = check_webhook(webhook), webhook_backoff_s
        #: Set to stop at once: a webhook delivery in progress gives up (SIGTERM sets it).
        self.stopping = threading.Event()
        self.judge, self.embeddings, self.language = judge, embeddings, language
        self.concurrency = concurrency
        self._store = self._open_store(store) if record_runs else None
        self._needs = {m.name: [tuple(a) for a in m.requires] for m in self.metrics}
        self.state = self._load_state()
        self._baseline_run = None if baseline is None else _baseline_run(baseline, self._store)
        self._baseline_scores = (
            None
            if self._baseline_run is None
            else _baseline_scores(self._baseline_run, self.metrics)
        )

    # -- state ------------------------------------------------------------------------------
    @property
    def state_file(self) -> Path:
        return self.state_dir / STATE_FILE

    def _load_state(self) -> dict[str, Any]:
        fresh = {
            "version": STATE_VERSION,
            "name": self.name,
            "source": str(self.source),
            "window": self.window.text,
            "metrics": [m.name for m in self.metrics],
            "files": {},
            "open": [],
            "closed": [],
            "baseline": {m.name: [] for m in self.metrics},
            "counts": {"lines": 0, "samples": 0, "bad": 0, "late": 0},
            "next_index": 1,
        }
        if not self.state_file.exists():
            return fresh
        try:
            state: dict[str, Any] = json.loads(self.state_file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
            why = "nested too deeply" if isinstance(error, RecursionError) else str(error)
            raise ValueError(
                f"the monitor state {self.state_file} cannot be read ({why}): move it away "
                "to start afresh (every sample is then read and scored again)"
            ) from None
        problem = _state_problem(state)
        if problem is not None:
            raise ValueError(
                f"the monitor state {self.state_file} is damaged ({problem}): move it away "
                "to start afresh (every sample is then read and scored again)"
            )
        for key, now in (("window", self.window.text), ("metrics", fresh["metrics"])):
            if state.get(key) != now:
                raise ValueError(
                    f"the monitor state {self.state_file} was made with {key} "
                    f"{state.get(key)!r}, not {now!r}: keep the same {key}, or give another "
                    "--name or --state folder to start a new monitor"
                )
        return state

    def _save_state(self) -> None:
        """Replace the state file atomically: a kill leaves the old one or the new one."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with replaced_atomically(self.state_file) as temporary:
            # ASCII: a lone surrogate in a sample is escaped, never an unwritable state
            temporary.write_text(json.dumps(self.state), encoding="utf-8")

    @property
    def windows(self) -> list[Window]:
        """The closed windows, oldest first (the last :data:`KEEP_CLOSED`; the run store
        has every one)."""
        return [_window_from_dict(w["window"]) for w in self.state["closed"]]

    # -- polling ----------------------------------------------------------------------------
    def poll(self, *, flush: bool = False) -> PollReport:
        """Read what was appended, close the windows that are done (``flush``: every open
        one), score, store and compare them, and deliver their alerts."""
        report = PollReport()
        self._deliver_pending(report)  # alerts of windows closed just before a crash
        files = source_files(self.source)
        folder = self.source.is_dir()
        for position, path in enumerate(files):
            self._read_file(path, folder and position < len(files) - 1, report)
        self._close_windows(report, flush=flush)
        return report

    def run(self, *, interval_s: float = 60.0, stop: threading.Event | None = None) -> int:
        """Poll every ``interval_s`` seconds until ``stop`` is set; the number of alerts."""
        stop = stop or threading.Event()
        alerts = 0
        while not stop.is_set():
            alerts += len(self.poll().alerts)
            stop.wait(interval_s)
        return alerts

    def _read_file(self, path: Path, finished: bool, report: PollReport) -> None:
        key = os.path.abspath(path)  # absolute, so a changed cwd finds the file's cursor
        before = self.state["files"].get(key) or {}
        cursor = Cursor.from_dict(before)
        lines = list(read_new(path, cursor, finished=finished, notes=report.notes))
        self.state["files"][key] = cursor.to_dict()
        if not lines:
            if self.state["files"][key] != before:
                self._save_state()  # a new inode or a reset offset is kept
            return
        report.lines += len(lines)
        self.state["counts"]["lines"] += len(lines)
        good = []
        for line in lines:
            if line.problem is not None:
                report.bad.append(line.problem)
            else:
                assert line.record is not None
                record = dict(line.record)
                if record.get("id") in (None, ""):  # stable across restarts: file and line
                    rotated = f"#{cursor.generation}" if cursor.generation else ""
                    record["id"] = f"{path.name}{rotated}:{line.number}"
                good.append((line.number, record))
        if good:
            self._accept(path, good, report)
        bad_rows = {p.row for p in report.bad if p.source == str(path)}
        self.state["counts"]["bad"] = self.state["counts"].get("bad", 0) + len(bad_rows)
        self._save_state()

    def _accept(
        self, path: Path, good: list[tuple[int, dict[str, Any]]], report: PollReport
    ) -> None:
        """Validate the records as the dataset loader does; place the valid ones in windows."""
        rows = [number for number, _ in good]
        dataset = Dataset.from_records(
            [record for _, record in good], rows=rows, source=str(path), skip_invalid=True
        )
        problems = [p for row in dataset.invalid for p in row.problems]
        problems += [
            Problem(p.row, p.field, p.message, p.fix, str(path), p.sample_id)
            for p in dataset.problems_for(self._needs)
        ]
        bad_rows = {p.row for p in problems}
        by_row = dict(good)
        open_ids = {s["record"]["id"] for w in self.state["open"] for s in w["samples"]}
        now = time.time()
        for row in dataset.rows:
            if row in bad_rows:
                continue
            record = by_row[row]
            stamp, problem = _timestamp(record, now)
            if problem is not None:
                problems.append(Problem(row, "metadata.timestamp", *problem, str(path)))
                continue
            if str(record["id"]) in open_ids:
                problems.append(
                    Problem(
                        row,
                        "id",
                        f"duplicate sample id {record['id']!r} in an open window",
                        "give every sample a unique id",
                        str(path),
                    )
                )
                continue
            open_ids.add(str(record["id"]))
            sample = {
                "record": record,
                "source": str(path),
                "line": row,
                "time": now if stamp is None else stamp,
                "arrival": stamp is None,
            }
            if not self._place(sample):
                report.late += 1
                self.state["counts"]["late"] += 1
                continue
            report.samples += 1
            self.state["counts"]["samples"] += 1
        report.bad.extend(sorted(problems, key=lambda p: p.row))

    def _place(self, sample: dict[str, Any]) -> bool:
        """Put a sample in its window; ``False`` when that window has closed (late)."""
        opened: list[dict[str, Any]] = self.state["open"]
        if self.window.size is not None:
            current = next((w for w in opened if not w["full"]), None)
            if current is None:
                current = {"key": self.state["counts"]["samples"], "samples": [], "full": False}
                opened.append(current)
            current["samples"].append(sample)
            current["full"] = len(current["samples"]) >= self.window.size
            return True
        seconds = self.window.seconds
        assert seconds is not None
        key = math.floor(sample["time"] / seconds) * seconds
        if key <= self.state.get("last_closed_key", -math.inf):
            return False
        current = next((w for w in opened if w["key"] == key), None)
        if current is None:
            current = {"key": key, "samples": [], "full": False}
            opened.append(current)
            opened.sort(key=lambda w: w["key"])
        current["samples"].append(sample)
        self.state["watermark"] = max(self.state.get("watermark", -math.inf), sample["time"])
        return True

    # -- closing windows --------------------------------------------------------------------
    def _done(self, window: dict[str, Any], flush: bool) -> bool:
        if not window["samples"]:
            return False
        if flush or window["full"]:
            return True
        seconds = self.window.seconds
        if seconds is None:
            return False
        closes = window["key"] + seconds + self.grace_s
        if self.state.get("watermark", -math.inf) >= closes:
            return True
        return all(s["arrival"] for s in window["samples"]) and time.time() >= closes

    def _close_windows(self, report: PollReport, *, flush: bool) -> None:
        while True:
            done = [w for w in self.state["open"] if self._done(w, flush)]
            if not done:
                return
            window = done[0]
            closed = self._score(window, report)
            if closed is None:  # nothing scored: kept open, later windows wait behind it
                window["unscored_tries"] = int(window.get("unscored_tries", 0)) + 1
                self._save_state()
                return
            self.state["open"].remove(window)
            if self.window.seconds is not None:
                self.state["last_closed_key"] = window["key"]
            alerts = [self._alert(closed, m) for m in closed.metrics if m.drop]
            self.state["closed"].append(
                {"window": closed.to_dict(), "alerts": alerts, "delivered": False}
            )
            self.state["next_index"] = closed.index + 1
            self._save_state()
            report.windows.append(closed)
            self._deliver_pending(report)
            kept = self.state["closed"]
            while len(kept) > KEEP_CLOSED and kept[0].get("delivered"):
                kept.pop(0)

    def _score(self, window: dict[str, Any], report: PollReport) -> Window | None:
        """Evaluate a window into its own run directory (resumed after a crash), estimate
        each metric with a CI, compare with the baseline and store the run; ``None`` (noted
        in ``report.unscored``) when results failed and none was scored: the judge was down,
        and the window is scored again later instead of closing as 0 of N."""
        from ragmeter.runner import evaluate
        from ragmeter.stats import estimate_means

        index = int(self.state["next_index"])
        if self.window.seconds is not None:  # the window's bounds, else its samples' times
            times = [window["key"], window["key"] + self.window.seconds]
        else:
            times = [s["time"] for s in window["samples"]]
        start, end = _iso(min(times)), _iso(max(times))
        run_dir = self.state_dir / "windows" / f"{index:06d}"
        # Named by where the window starts: its time, or (N samples) its first sample's number.
        first = start if self.window.seconds is not None else str(int(window["key"]) + 1)
        run_name = f"monitor:{self.name}:window-{first}"
        params = {
            "monitor": self.name,
            "window": self.window.text,
            "window_index": index,
            "window_start": start,
            "window_end": end,
            "source": str(self.source),
        }
        result = evaluate(
            [s["record"] for s in window["samples"]],
            self.metrics,
            skip_invalid=True,
            judge=self.judge,
            embeddings=self.embeddings,
            language=self.language,
            concurrency=self.concurrency,
            run_dir=run_dir,
            resume=(run_dir / "run.db").exists(),
            progress=False,
            record={"monitor": params},
        )
        for row in result.skipped:
            report.bad.extend(row.problems)
        measured = {m.name: _scored(result, m.name) for m in self.metrics}
        failed = [r for s in result for r in s.scores.values() if r.status is Status.FAILED]
        if failed and not any(measured.values()):
            report.unscored.append(
                f"window {index} ({start}): 0 of {len(result)} sample(s) scored, "
                f"{len(failed)} result(s) failed ({(failed[0].error or 'no reason')[:200]}): "
                "kept open and scored again on the next poll"
            )
            if result.store is not None:
                result.store.close()  # the run folder is complete: the next try resumes it
            return None
        estimates = estimate_means(result, level=self.level, n_resamples=self.n_resamples)
        is_baseline = self._baseline_scores is None and index <= self.baseline_windows
        directions = {m.name: m.direction for m in result.metrics}
        if is_baseline:
            for name, pairs in measured.items():
                self.state["baseline"][name] += [score for _, score in pairs]
        metrics = self._compare(estimates, measured, directions, skip=is_baseline)
        if self._baseline_run is not None:
            report.notes += _judge_changes(self._baseline_run, result, index)
        run_id = self._record(result, run_name, params, report)
        n_samples = len(result)
        if result.store is not None:
            result.store.close()  # its journal goes into run.db: the folder is complete
        return Window(
            index, start, end, n_samples, str(run_dir), run_name, run_id, metrics, is_baseline
        )

    def _baseline(self) -> dict[str, list[float]] | None:
        if self._baseline_scores is not None:
            return self._baseline_scores
        if int(self.state["next_index"]) - 1 < self.baseline_windows:
            return None
        scores: dict[str, list[float]] = self.state["baseline"]
        return scores

    def _compare(
        self,
        estimates: Mapping[str, Any],
        measured: Mapping[str, list[tuple[str, float]]],
        directions: Mapping[str, Direction],
        *,
        skip: bool,
    ) -> tuple[WindowMetric, ...]:
        from ragmeter.stats import holm, two_sample_test

        baseline = None if skip else self._baseline()
        rows: list[dict[str, Any]] = []
        for metric in self.metrics:
            estimate = estimates[metric.name]
            direction = directions[metric.name]
            pairs = measured[metric.name]
            worst = sorted(
                pairs, key=lambda p: p[1], reverse=direction is Direction.LOWER_IS_BETTER
            )
            row: dict[str, Any] = {
                "metric": metric.name,
                "direction": direction.value,
                "n": estimate.n,
                "mean": estimate.mean,
                "ci": None if estimate.ci is None else (estimate.ci.low, estimate.ci.high),
                "worst_ids": tuple(i for i, _ in worst[: self.worst]),
            }
            base = (baseline or {}).get(metric.name) or []
            if base:
                row["baseline_mean"] = sum(base) / len(base)
                row["n_baseline"] = len(base)
            if len(base) >= 2 and len(pairs) >= 2:
                test = two_sample_test(
                    base, [s for _, s in pairs], level=self.level, n_resamples=self.n_resamples
                )
                row |= {
                    "difference": test.difference,
                    "difference_ci": (test.ci.low, test.ci.high),
                    "p_value": test.p_value,
                }
            rows.append(row)
        tested = [r for r in rows if r.get("p_value") is not None]
        for r, adjusted in zip(tested, holm([r["p_value"] for r in tested])):
            worse = r["difference"] < 0 if r["direction"] == "higher" else r["difference"] > 0
            r["p_adjusted"] = adjusted
            r["drop"] = worse and adjusted < self.alpha and abs(r["difference"]) > self.min_drop
        return tuple(WindowMetric(**r) for r in rows)

    def _record(
        self, result: EvaluationResult, run_name: str, params: dict[str, Any], report: PollReport
    ) -> str | None:
        """Store the window's run (once: a window stored before a crash is found again)."""
        if self._store is None:
            return None
        from sqlalchemy.exc import SQLAlchemyError

        from ragmeter._services import redact_secrets

        try:
            for info in self._store.list(name=run_name, tag="monitor", limit=None):
                if info.params.get("window_index") == params["window_index"]:
                    return info.id
            tags = ["monitor", f"monitor:{self.name}"]
            return self._store.record(result, name=run_name, tags=tags, params=params).id
        except (SQLAlchemyError, OSError, ValueError) as error:
            said = redact_secrets(str(error).splitlines()[0] if str(error) else repr(error))
            report.notes.append(
                f"window {params['window_index']} was not recorded in the run store ({said}); "
                f"its run directory has it"
            )
            return None

    @staticmethod
    def _open_store(store: Store | str | None) -> Store:
        from ragmeter.store import Store

        return store if isinstance(store, Store) else Store(store)

    # -- alerts -----------------------------------------------------------------------------
    def _alert(self, window: Window, metric: WindowMetric) -> dict[str, Any]:
        """An alert as logged and posted: figures and sample ids, never a secret."""
        return {
            "event": "alert",
            "monitor": self.name,
            "window": window.index,
            "window_start": window.start,
            "window_end": window.end,
            "run_id": window.run_id,
            "run_name": window.run_name,
            "metric": metric.metric,
            "direction": metric.direction,
            "baseline_mean": metric.baseline_mean,
            "window_mean": metric.mean,
            "difference": metric.difference,
            "difference_ci": list(metric.difference_ci or ()),
            "level": self.level,
            "p_value": metric.p_value,
            "p_adjusted": metric.p_adjusted,
            "alpha": self.alpha,
            "min_drop": self.min_drop,
            "n_window": metric.n,
            "n_baseline": metric.n_baseline,
            "worst_sample_ids": list(metric.worst_ids),
            "test": "permutation (unpaired), Holm-corrected across metrics",
        }

    def _deliver_pending(self, report: PollReport) -> None:
        for closed in self.state["closed"]:
            if closed.get("delivered"):
                continue
            for alert in closed["alerts"]:
                report.alerts.append(alert)
                self._deliver(alert, report)
            closed["delivered"] = True
            self._save_state()

    def _deliver(self, alert: dict[str, Any], report: PollReport) -> None:
        self._log_event(alert, "the alert", report)
        if self.webhook is None:
            return
        from ragmeter._services import redact_url

        failed = post_webhook(
            self.webhook, alert, backoff_s=self.webhook_backoff_s, stop=self.stopping
        )
        if failed is None:
            return
        message = f"webhook {redact_url(self.webhook)}: {failed}"
        report.webhook_failures.append(message)
        event = {
            "event": "webhook_failed",
            "monitor": self.name,
            "window": alert["window"],
            "metric": alert["metric"],
            "error": message,
        }
        self._log_event(event, "the webhook failure", report)

    def _log_event(self, event: dict[str, Any], what: str, report: PollReport) -> None:
        if self.log is not None:
            try:
                append_log(self.log, event)
            except OSError as error:
                report.notes.append(f"{what} was not written to {self.log}: {error}")


def _iso(seconds: float) -> str:
    moment = dt.datetime.fromtimestamp(seconds, dt.timezone.utc).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


#: The earliest timestamp taken (2000-01-01T00:00:00Z): before it, a number is no time.
EARLIEST_TIMESTAMP = 946_684_800.0
#: How far ahead of this machine's clock a timestamp may be (clock skew): one further
#: ahead would close the windows of live traffic early and make it all late.
MAX_AHEAD_S = 300.0
_TIMESTAMP_FIX = (
    "write it as 2026-12-02T13:05:00Z (or epoch seconds), or leave it out to time the "
    "sample on arrival"
)


def _timestamp(
    record: Mapping[str, Any], now: float
) -> tuple[float | None, tuple[str, str] | None]:
    """``metadata.timestamp`` as epoch seconds (``None`` when absent), or (message, fix):
    a number that is not finite, in epoch milliseconds, before 2000 or ahead of ``now``
    by more than :data:`MAX_AHEAD_S` is refused, so one bad sample cannot wedge the
    windows."""
    metadata = record.get("metadata")
    value = metadata.get("timestamp") if isinstance(metadata, Mapping) else None
    if value in (None, ""):
        return None, None
    shown = str(value)[:40]
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
        if not math.isfinite(seconds):
            return None, (f"timestamp {shown} is not a number", _TIMESTAMP_FIX)
        if seconds > 1e11:  # after the year 5138 in seconds: milliseconds since 1970
            return None, (
                f"timestamp {shown} looks like epoch milliseconds",
                "give epoch seconds (divide by 1000) or an ISO 8601 time",
            )
    else:
        try:
            moment = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.timezone.utc)
            seconds = moment.timestamp()
        except (ValueError, OverflowError, OSError):
            return None, (f"timestamp {shown!r} is not ISO 8601", _TIMESTAMP_FIX)
    if seconds < EARLIEST_TIMESTAMP:
        return None, (f"timestamp {shown!r} is before 2000", _TIMESTAMP_FIX)
    if seconds > now + MAX_AHEAD_S:
        return None, (
            f"timestamp {shown!r} is ahead of this machine's clock ({_iso(now)})",
            "fix the clock of the system that wrote it, or leave the timestamp out to time "
            "the sample on arrival",
        )
    return seconds, None


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _open_problem(opened: list[Any]) -> str | None:
    """What is wrong with the open windows of a loaded state, or ``None``."""
    for i, window in enumerate(opened):
        where = f"open[{i}]"
        if not isinstance(window, dict) or not _finite(window.get("key")):
            return f"{where} has no numeric 'key'"
        if not isinstance(window.get("samples"), list) or not isinstance(window.get("full"), bool):
            return f"{where} needs a list 'samples' and a true/false 'full'"
        for j, sample in enumerate(window["samples"]):
            if not (
                isinstance(sample, dict)
                and isinstance(sample.get("record"), dict)
                and "id" in sample["record"]
                and _finite(sample.get("time"))
                and EARLIEST_TIMESTAMP <= sample["time"] < 1e11
                and isinstance(sample.get("arrival"), bool)
            ):
                return f"{where}.samples[{j}] needs a 'record' with an id, a 'time' and 'arrival'"
    return None


def _state_problem(state: Any) -> str | None:
    """What is wrong with the shape of a loaded state (a hand edit, another program), or
    ``None``: each field the monitor reads, with the type it needs."""

    if not isinstance(state, dict):
        return f"expected a JSON object, got {type(state).__name__}"
    shapes: dict[str, tuple[type, ...]] = {
        "files": (dict,), "open": (list,), "closed": (list,), "baseline": (dict,),
        "counts": (dict,), "next_index": (int,),
    }  # fmt: skip
    for key, types in shapes.items():
        if not isinstance(state.get(key), types) or isinstance(state.get(key), bool):
            return f"{key!r} is {type(state.get(key)).__name__}, expected {types[0].__name__}"
    for key in ("last_closed_key", "watermark"):
        if key in state and not _finite(state[key]):
            return f"{key!r} is {state[key]!r}, expected a finite number"
    for key, count in state["counts"].items():
        if not isinstance(count, int) or isinstance(count, bool):
            return f"counts[{key!r}] is {count!r}, expected a whole number"
    for key, scores in state["baseline"].items():
        if not isinstance(scores, list) or not all(_finite(x) for x in scores):
            return f"baseline[{key!r}] is not a list of finite numbers"
    problem = _open_problem(state["open"])
    if problem is not None:
        return problem
    for i, closed in enumerate(state["closed"]):
        if not (
            isinstance(closed, dict)
            and isinstance(closed.get("window"), dict)
            and isinstance(closed.get("alerts"), list)
        ):
            return f"closed[{i}] needs a 'window' and a list 'alerts'"
    for key, cursor in state["files"].items():
        if not isinstance(cursor, dict):
            return f"files[{key!r}] is {type(cursor).__name__}, expected an object"
        for field_ in ("offset", "line", "generation"):
            value = cursor.get(field_, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                return f"files[{key!r}].{field_} is {value!r}, expected a whole number"
    return None


def _baseline_run(
    baseline: EvaluationResult | str | os.PathLike[str], store: Store | None
) -> EvaluationResult:
    """The baseline run: given, a run directory, or a run id or name in the run store."""
    from ragmeter.results import EvaluationResult

    if isinstance(baseline, EvaluationResult):
        return baseline
    if Path(baseline).is_dir():
        return EvaluationResult.load(Path(baseline))
    return (store or Monitor._open_store(None)).load(str(baseline))


def _baseline_scores(result: EvaluationResult, metrics: Sequence[Metric]) -> dict[str, list[float]]:
    """Each metric's scored values in the baseline run; a metric it lacks is an error."""
    known = [m.name for m in result.metrics]
    missing = [m.name for m in metrics if m.name not in known]
    if missing:
        raise ValueError(
            f"the baseline run has no {', '.join(missing)} (it has {', '.join(known)}): "
            "score the baseline with the monitored metrics"
        )
    return {m.name: [score for _, score in _scored(result, m.name)] for m in metrics}


def _scored(result: EvaluationResult, metric: str) -> list[tuple[str, float]]:
    """(sample id, score) of each sample ``metric`` scored in ``result``."""
    return [
        (s.sample_id, float(r.score))
        for s in result
        if (r := s.scores[metric]).status is Status.OK and r.score is not None
    ]


def _window_from_dict(data: Mapping[str, Any]) -> Window:
    metrics = []
    for m in data["metrics"]:
        values = dict(m)
        for key in ("ci", "difference_ci"):
            values[key] = None if values.get(key) is None else tuple(values[key])
        values["worst_ids"] = tuple(values.get("worst_ids") or ())
        metrics.append(WindowMetric(**values))
    return Window(**{**data, "metrics": tuple(metrics)})


def monitor(
    source: str | os.PathLike[str],
    metrics: Sequence[Metric | str] | str = DEFAULT_METRICS,
    *,
    flush: bool = False,
    **options: Any,
) -> PollReport:
    """One pass (what ``ragmeter monitor --once`` and a cron job do): read what is new in
    ``source``, close and score the windows that are done, alert on drops. ``options`` are
    :class:`Monitor`'s; the state folder carries the position to the next pass."""
    return Monitor(source, metrics, **options).poll(flush=flush)


def _judge_changes(baseline: EvaluationResult, window: EvaluationResult, index: int) -> list[str]:
    """A note per metric whose judge or embedding model differs from the baseline run's: a
    drop may then be the judge's, not the traffic's (the comparison is made all the same)."""
    from ragmeter.stats import comparability

    checked = comparability(baseline, window, metrics=[m.name for m in window.metrics])
    refusals = (checked.refusal(metric.name) for metric in window.metrics)
    return [
        f"window {index}: {refusal}, so a change may be the judge's, not the traffic's: score "
        "the baseline with the monitor's judge"
        for refusal in refusals
        if refusal is not None
    ]
