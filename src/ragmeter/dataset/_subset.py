"""Subsets of a dataset for a cheap first pass: the first rows, or a reproducible sample.

A subset keeps each sample's row number and id (``row-N`` ids stay those of the full file),
so its results join back to the full dataset, and it keeps the dataset's order.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence

from ragmeter.dataset._dataset import Dataset

#: The stratum of the samples that lack the stratifying tag.
_UNTAGGED = "\x00untagged"


def _check_n(n: int, what: str) -> None:
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{what} must be a whole number of samples, got {n!r}")
    if n < 1:
        raise ValueError(f"{what} must be at least 1 sample, got {n}")


def _subset(dataset: Dataset, keep: Sequence[int]) -> Dataset:
    """The samples at positions ``keep`` (ascending), with their rows and ids."""
    return Dataset(
        [dataset.samples[i] for i in keep],
        source=dataset.source,
        invalid=dataset.invalid,
        rows=[dataset.rows[i] for i in keep],
        unknown_columns=dataset.unknown_columns,
        field_columns=dataset.field_columns,
    )


def head(dataset: Dataset, n: int) -> Dataset:
    """The first ``n`` samples (all of them when there are fewer).

    >>> ds = Dataset.from_records([{"question": f"q{i}"} for i in range(5)])
    >>> head(ds, 2).ids
    ['row-1', 'row-2']
    """
    _check_n(n, "limit")
    return _subset(dataset, range(min(n, len(dataset))))


def sample(dataset: Dataset, n: int, *, seed: int, stratify: str | None = None) -> Dataset:
    """``n`` samples drawn at random, in the dataset's order: the same ``seed`` draws the same
    rows on every machine and run (``random.Random(seed)``, not Python's hash seed).

    With ``stratify`` (a metadata tag, e.g. ``"question_type"``) each value of the tag gets
    its share of the ``n`` (largest remainder), and every value at least one sample when
    ``n`` is at least the number of values; samples without the tag are one more group.
    ``n`` at least the dataset's size keeps every sample.

    >>> ds = Dataset.from_records([{"question": f"q{i}"} for i in range(10)])
    >>> sample(ds, 3, seed=1).ids == sample(ds, 3, seed=1).ids
    True
    """
    _check_n(n, "sample size")
    strata = _strata(dataset, stratify) if stratify is not None else {"": list(range(len(dataset)))}
    if n >= len(dataset):
        return _subset(dataset, range(len(dataset)))
    rng = random.Random(seed)
    counts = allocate(n, [len(members) for members in strata.values()])
    chosen = [i for members, k in zip(strata.values(), counts) for i in rng.sample(members, k)]
    return _subset(dataset, sorted(chosen))


def _strata(dataset: Dataset, tag: str) -> dict[str, list[int]]:
    """Positions of the samples by the value of ``tag``, the groups in a fixed order (by
    value, those without the tag last)."""
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(dataset.samples):
        metadata = item.metadata or {}
        key = (
            json.dumps(metadata[tag], sort_keys=True, ensure_ascii=False)
            if tag in metadata
            else _UNTAGGED
        )
        groups.setdefault(key, []).append(i)
    if _UNTAGGED in groups and len(groups) == 1:
        present = sorted({name for s in dataset.samples for name in (s.metadata or {})})
        shown = ", ".join(present) if present else "none (the samples have no metadata)"
        raise ValueError(
            f"no sample has the metadata tag {tag!r} to stratify by; tags present: {shown}"
        )
    return {key: groups[key] for key in sorted(groups, key=lambda k: (k == _UNTAGGED, k))}


def allocate(n: int, sizes: Sequence[int]) -> list[int]:
    """How many of ``n`` draws each group of ``sizes`` gets: proportional shares rounded by
    largest remainder (ties to the earlier group), then, when ``n`` allows, one for every
    group left with none, taken from the group furthest above its exact share.

    >>> allocate(5, [6, 3, 1])
    [3, 1, 1]
    >>> allocate(2, [6, 3, 1])
    [1, 1, 0]
    """
    total = sum(sizes)
    if n >= total:
        return list(sizes)
    quotas = [n * size / total for size in sizes]
    counts = [math.floor(q) for q in quotas]
    by_remainder = sorted(range(len(sizes)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in by_remainder[: n - sum(counts)]:
        counts[i] += 1
    if n >= len(sizes):
        for empty in [i for i, c in enumerate(counts) if c == 0 and sizes[i] > 0]:
            donors = [i for i, c in enumerate(counts) if c > 1]
            donor = max(donors, key=lambda i: (counts[i] - quotas[i], -i))
            counts[donor] -= 1
            counts[empty] += 1
    return counts
