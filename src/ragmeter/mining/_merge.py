"""``merge_labelled()``: labelled rows of a labelling file join the golden set.

A row counts as labelled when a person filled at least one of ``reference``,
``reference_context_ids`` (or ``relevance``) and ``label``; the others are left out and
counted. Merged rows keep their provenance (``source = "production"``, ``mined_at``,
``mined_because``, the original id) and gain ``labelled_at`` / ``labelled_by`` when given.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragmeter.dataset import Dataset, Sample, load_dataset, save_dataset
from ragmeter.mining._labels import written_whole
from ragmeter.mining._mine import SOURCE

OnConflict = Literal["error", "update", "skip"]
#: Details of one mining that mean nothing in a golden set; dropped on merge.
MINING_DETAILS: tuple[str, ...] = (
    "mined_cluster",
    "mined_score",
    "mined_scores",
    "mined_nearest_golden",
    "mined_duplicates",
)


class MergeConflict(ValueError):
    """Rows whose id is already in the golden set, with neither update nor skip asked."""

    def __init__(self, ids: list[str], golden: Path) -> None:
        self.ids = ids
        shown = ", ".join(repr(i) for i in ids[:5]) + (", …" if len(ids) > 5 else "")
        super().__init__(
            f"{len(ids)} labelled row(s) have an id already in {golden}: {shown}; nothing was "
            "merged. Replace those rows with --update (on_conflict='update') or "
            "leave them out with --skip-existing (on_conflict='skip')"
        )


@dataclass
class MergeResult:
    """What a merge did: ``added`` and ``updated`` ids, and the rows it left out."""

    golden: Path
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    skipped_existing: list[str] = field(default_factory=list)
    unlabelled: list[str] = field(default_factory=list)
    n_golden: int = 0  # rows of the golden set after the merge

    def summary(self) -> dict[str, Any]:
        return {
            "golden": str(self.golden),
            "added": len(self.added),
            "updated": len(self.updated),
            "skipped_existing": len(self.skipped_existing),
            "unlabelled": len(self.unlabelled),
            "n_golden": self.n_golden,
        }


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def is_labelled(sample: Sample) -> bool:
    """Whether a person filled a reference, relevant context ids or a label."""
    return (
        not _blank(sample.reference)
        or bool(sample.reference_context_ids)
        or bool(sample.relevance)
        or not _blank(sample.metadata.get("label"))
    )


def _golden_sample(
    sample: Sample, sample_id: str, stamp: dict[str, str], labelled_by: str | None
) -> Sample:
    metadata = {k: v for k, v in sample.metadata.items() if k not in MINING_DETAILS}
    for key in ("label", "reason"):
        if _blank(metadata.get(key)):
            metadata.pop(key, None)
    metadata.setdefault("source", SOURCE)
    metadata.update(stamp)
    if labelled_by is not None:
        metadata["labelled_by"] = labelled_by
    return sample.model_copy(
        update={
            "id": sample_id,
            "reference": None if _blank(sample.reference) else sample.reference,
            "reference_context_ids": sample.reference_context_ids or None,
            "metadata": metadata,
        }
    )


def _iso(moment: dt.datetime | str | None) -> str | None:
    if moment is None or isinstance(moment, str):
        return moment
    return moment.isoformat()


def merge_labelled(
    labelled: Any,
    golden: str | Path,
    *,
    on_conflict: OnConflict = "error",
    labelled_by: str | None = None,
    labelled_at: dt.datetime | str | None = None,
    merged_at: dt.datetime | str | None = None,
) -> MergeResult:
    """Merge the labelled rows of ``labelled`` (a labelling file from :func:`mine`, or
    anything :func:`ragmeter.load_dataset` takes) into the golden set file ``golden``
    (created when absent; JSONL, JSON, CSV or Parquet).

    Rows not labelled are left out and listed. A row whose id is already in the golden set
    stops the merge (:class:`MergeConflict`, nothing written) unless ``on_conflict`` is
    ``"update"`` (the golden row is replaced where it stands) or ``"skip"``. New rows are
    appended; a JSONL golden set without updated rows is appended to as it is, any other is
    rewritten in ragmeter's field names.
    """
    if on_conflict not in ("error", "update", "skip"):
        raise ValueError(f"on_conflict must be 'error', 'update' or 'skip', got {on_conflict!r}")
    golden = Path(golden)
    source = labelled if isinstance(labelled, Dataset) else load_dataset(labelled)
    existing = load_dataset(golden) if golden.exists() else Dataset([], source=str(golden))
    result = MergeResult(golden)
    stamp = {
        "merged_at": _iso(merged_at)
        or dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
    }
    if labelled_at is not None:
        stamp["labelled_at"] = str(_iso(labelled_at))

    position_of = {sample_id: i for i, sample_id in enumerate(existing.ids)}
    missing_id = [row for sample, row in zip(source.samples, source.rows) if sample.id is None]
    if missing_id:
        raise ValueError(
            f"row(s) {', '.join(map(str, missing_id[:5]))} of "
            f"{source.source or 'the labelled data'} have no id; give every row an id "
            "(ragmeter mine writes one) so that the golden set can be joined back"
        )
    chosen: list[Sample] = []
    conflicts: list[str] = []
    for sample, sample_id in zip(source.samples, source.ids):
        if not is_labelled(sample):
            result.unlabelled.append(sample_id)
        elif sample_id in position_of and on_conflict == "skip":
            result.skipped_existing.append(sample_id)
        else:
            if sample_id in position_of:
                conflicts.append(sample_id)
            chosen.append(_golden_sample(sample, sample_id, stamp, labelled_by))
    if conflicts and on_conflict == "error":
        raise MergeConflict(conflicts, golden)

    samples = list(existing.samples)
    new: list[Sample] = []
    for sample in chosen:
        assert sample.id is not None
        if sample.id in position_of:
            samples[position_of[sample.id]] = sample
            result.updated.append(sample.id)
        else:
            new.append(sample)
            result.added.append(sample.id)
    if golden.suffix.lower() == ".jsonl" and golden.exists() and not result.updated:
        _append_jsonl(golden, new)
    elif new or result.updated or not golden.exists():
        _replace(Dataset([*samples, *new]), golden)
    result.n_golden = len(samples) + len(new)
    return result


def _append_jsonl(path: Path, samples: list[Sample]) -> None:
    if not samples:
        return
    text = path.read_text(encoding="utf-8")
    with path.open("a", encoding="utf-8") as handle:
        if text and not text.endswith("\n"):
            handle.write("\n")
        for sample in samples:
            handle.write(json.dumps(sample.to_record(), ensure_ascii=False) + "\n")


def _replace(dataset: Dataset, path: Path) -> None:
    """Write next to ``path``, then rename over it: a failed write leaves the old file."""
    with written_whole(path) as partial:
        save_dataset(dataset, partial)
