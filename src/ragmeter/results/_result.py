"""What an evaluation produced: per-sample results, per-metric aggregates and the run config."""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.dataset import InvalidRow, Problem, Sample
from ragmeter.metrics import Direction, MetricResult, Status

if TYPE_CHECKING:
    import pandas as pd

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class MetricInfo:
    """A metric as it ran: its name, which way is better, and its settings."""

    name: str
    direction: Direction
    params: dict[str, Any] = field(default_factory=dict)
    kind: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "direction": self.direction.value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MetricInfo:
        return cls(
            data["name"],
            Direction(data["direction"]),
            data.get("params") or {},
            data.get("kind", ""),
        )


@dataclass
class SampleResult:
    """Every metric's result for one sample, with the sample itself."""

    index: int
    row: int
    sample_id: str
    sample: Sample
    scores: dict[str, MetricResult]
    #: Judge usage of this sample's calls (shared by its judged metrics), when any.
    usage: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "index": self.index,
            "row": self.row,
            "id": self.sample_id,
            "sample": self.sample.to_record(),
            "metrics": {name: result.to_dict() for name, result in self.scores.items()},
        }
        if self.usage is not None:
            out["usage"] = self.usage
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SampleResult:
        return cls(
            data["index"],
            data["row"],
            data["id"],
            Sample.model_validate(data["sample"]),
            {name: MetricResult.from_dict(r) for name, r in data["metrics"].items()},
            data.get("usage"),
        )


@dataclass(frozen=True)
class Aggregate:
    """A metric over the run. ``mean`` and ``median`` cover the ok samples only; the counts
    say how many samples that is, so nothing failed or not applicable is averaged away."""

    metric: str
    direction: Direction
    n_total: int
    n_ok: int
    n_not_applicable: int
    n_failed: int
    mean: float | None
    median: float | None

    @property
    def coverage(self) -> float:
        """Share of samples that got a score."""
        return self.n_ok / self.n_total if self.n_total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "direction": self.direction.value, "coverage": self.coverage}


def aggregate(metric: MetricInfo, results: list[MetricResult]) -> Aggregate:
    scores = [r.score for r in results if r.status is Status.OK and r.score is not None]
    return Aggregate(
        metric=metric.name,
        direction=metric.direction,
        n_total=len(results),
        n_ok=len(scores),
        n_not_applicable=sum(r.status is Status.NOT_APPLICABLE for r in results),
        n_failed=sum(r.status is Status.FAILED for r in results),
        mean=statistics.fmean(scores) if scores else None,
        median=statistics.median(scores) if scores else None,
    )


@dataclass
class EvaluationResult:
    """Results of one evaluation run.

    ``samples`` are in dataset order; ``skipped`` lists rows left out as invalid.
    """

    samples: list[SampleResult]
    metrics: list[MetricInfo]
    config: dict[str, Any] = field(default_factory=dict)
    skipped: list[InvalidRow] = field(default_factory=list)

    def __iter__(self) -> Iterator[SampleResult]:
        return iter(self.samples)

    def __len__(self) -> int:
        return len(self.samples)

    @property
    def aggregates(self) -> dict[str, Aggregate]:
        return {
            m.name: aggregate(m, [s.scores[m.name] for s in self.samples]) for m in self.metrics
        }

    def scores(self, metric: str) -> list[float | None]:
        """Per-sample scores of ``metric`` in dataset order (``None`` where not ok)."""
        if metric not in {m.name for m in self.metrics}:
            raise KeyError(
                f"no metric {metric!r} in this run; it has {[m.name for m in self.metrics]}"
            )
        return [s.scores[metric].score for s in self.samples]

    # -- export ----------------------------------------------------------------------------
    def to_jsonl(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as handle:
            for sample in self.samples:
                handle.write(json.dumps(sample.to_dict(), ensure_ascii=False) + "\n")
        return path

    def _flat_rows(self) -> list[dict[str, Any]]:
        rows = []
        for s in self.samples:
            row: dict[str, Any] = {"id": s.sample_id, "row": s.row}
            for m in self.metrics:
                result = s.scores[m.name]
                row[m.name] = result.score
                row[f"{m.name}:status"] = result.status.value
                row[f"{m.name}:reason"] = result.reason or result.error
            rows.append(row)
        return rows

    def to_csv(self, path: str | Path) -> Path:
        """One row per sample: each metric's score, status and reason or error."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = self._flat_rows()
        columns = ["id", "row"] + [
            f"{m.name}{suffix}" for m in self.metrics for suffix in ("", ":status", ":reason")
        ]
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
        return path

    def to_pandas(self) -> pd.DataFrame:
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas needs pandas: pip install 'ragmeter[pandas]'") from None
        return pd.DataFrame(self._flat_rows())

    def summary(self) -> dict[str, Any]:
        return {
            "config": self.config,
            "metrics": [m.to_dict() for m in self.metrics],
            "aggregates": {name: a.to_dict() for name, a in self.aggregates.items()},
            "n_samples": len(self.samples),
            "skipped": [
                {"row": r.row, "id": r.sample_id, "problems": [str(p) for p in r.problems]}
                for r in self.skipped
            ],
        }

    def save(self, run_dir: str | Path) -> Path:
        """Write ``results.jsonl`` (per sample) and ``summary.json`` into ``run_dir``."""
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        self.to_jsonl(run_dir / RESULTS_FILE)
        (run_dir / SUMMARY_FILE).write_text(
            json.dumps(self.summary(), ensure_ascii=False, indent=2), encoding="utf-8"
        )
        return run_dir

    @classmethod
    def load(cls, run_dir: str | Path) -> EvaluationResult:
        """Read back a run written by :meth:`save`."""
        run_dir = Path(run_dir)
        summary = json.loads((run_dir / SUMMARY_FILE).read_text(encoding="utf-8"))
        with (run_dir / RESULTS_FILE).open(encoding="utf-8") as handle:
            samples = [SampleResult.from_dict(json.loads(line)) for line in handle if line.strip()]
        skipped = [
            InvalidRow(
                r["row"],
                r["id"],
                tuple(Problem(r["row"], None, text, "see the message") for text in r["problems"]),
            )
            for r in summary.get("skipped", [])
        ]
        return cls(
            samples,
            [MetricInfo.from_dict(m) for m in summary["metrics"]],
            summary.get("config", {}),
            skipped,
        )
