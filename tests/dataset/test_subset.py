"""Subsets for a cheap first pass: the first rows, or a reproducible (stratified) sample."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from typing import Any

import pytest

from ragmeter.dataset import Dataset, head, sample


def tagged(counts: dict[str | None, int]) -> Dataset:
    """Samples tagged ``kind`` = each key (``None``: no tag) as often as its count, the
    kinds interleaved, some with ids and some without (``row-N``)."""
    records: list[dict[str, Any]] = []
    left = dict(counts)
    while any(left.values()):
        for kind in counts:
            if left[kind]:
                left[kind] -= 1
                n = len(records)
                record = {"question": f"q{n}", "metadata": {} if kind is None else {"kind": kind}}
                if n % 2:
                    record["id"] = f"id-{n}"
                records.append(record)
    return Dataset.from_records(records)


def kinds(data: Dataset) -> Counter[str | None]:
    return Counter((s.metadata or {}).get("kind") for s in data)


def test_head_keeps_the_first_rows_with_their_rows_and_ids():
    data = Dataset.from_records([{"question": f"q{i}"} for i in range(5)])
    first = head(data, 3)
    assert [s.user_input for s in first] == ["q0", "q1", "q2"]
    assert first.rows == [1, 2, 3] and first.ids == ["row-1", "row-2", "row-3"]
    assert len(head(data, 50)) == 5


def test_head_of_a_dataset_with_skipped_rows_keeps_the_file_row_numbers():
    data = Dataset.from_records(
        [{"question": "q0"}, {"question": 7}, {"question": "q2"}, {"question": "q3"}],
        skip_invalid=True,
    )
    first = head(data, 2)
    assert first.rows == [1, 3] and first.ids == ["row-1", "row-3"]
    assert [r.row for r in first.invalid] == [2]  # still reported as skipped


@pytest.mark.parametrize("n", [0, -3])
def test_a_subset_of_fewer_than_one_sample_is_refused(n):
    data = tagged({"a": 3})
    with pytest.raises(ValueError, match=f"limit must be at least 1 sample, got {n}"):
        head(data, n)
    with pytest.raises(ValueError, match=f"sample size must be at least 1 sample, got {n}"):
        sample(data, n, seed=0)


def test_the_same_seed_draws_the_same_rows_in_the_dataset_order():
    data = tagged({"a": 60, "b": 40})
    first = sample(data, 10, seed=42)
    assert len(first) == 10
    assert first.ids == sample(data, 10, seed=42).ids
    assert first.rows == sorted(first.rows)  # the dataset's order
    by_row = dict(zip(data.rows, data.ids))
    assert all(by_row[row] == sample_id for row, sample_id in zip(first.rows, first.ids))
    assert any(sample(data, 10, seed=seed).rows != first.rows for seed in range(1, 4))


def test_a_sample_as_large_as_the_dataset_keeps_every_row():
    data = tagged({"a": 3, "b": 2})
    assert sample(data, 5, seed=1).ids == data.ids
    assert sample(data, 9, seed=1, stratify="kind").ids == data.ids


def test_the_draw_does_not_depend_on_pythons_hash_seed(tmp_path):
    script = (
        "from ragmeter.dataset import Dataset, sample\n"
        "data = Dataset.from_records([{'question': f'q{i}', 'metadata': {'kind': k}}"
        " for i in range(40) for k in ['ab'[i % 2]]])\n"
        "print(sample(data, 7, seed=3, stratify='kind').ids)\n"
    )
    outputs = set()
    for hash_seed in ("1", "2024"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_stratified_shares_by_largest_remainder():
    # 6/3/1 of 10 samples, 5 drawn: exact shares 3, 1.5, 0.5 -> 3, 2, 0 by largest
    # remainder (the tie to the earlier group), then the untouched group takes one from the
    # group furthest above its share: 3, 1, 1.
    data = tagged({"a": 6, "b": 3, "c": 1})
    drawn = sample(data, 5, seed=7, stratify="kind")
    assert kinds(drawn) == {"a": 3, "b": 1, "c": 1}
    # 2 drawn: shares 1.2, 0.6, 0.2 -> 1, 1, 0; two draws cannot cover three groups
    assert kinds(sample(data, 2, seed=7, stratify="kind")) == {"a": 1, "b": 1}


def test_every_value_gets_a_sample_when_n_allows():
    # shares of 10 from 97/2/1: 9.7, 0.2, 0.1 -> 10, 0, 0; the small groups take one each
    data = tagged({"big": 97, "few": 2, "one": 1})
    assert kinds(sample(data, 10, seed=0, stratify="kind")) == {"big": 8, "few": 1, "one": 1}


def test_samples_without_the_tag_are_a_group_of_their_own():
    # 4 a, 4 b, 2 untagged, 5 drawn: exact shares 2, 2, 1
    data = tagged({"a": 4, "b": 4, None: 2})
    assert kinds(sample(data, 5, seed=3, stratify="kind")) == {"a": 2, "b": 2, None: 1}


def test_an_unknown_tag_names_the_tags_there_are():
    data = Dataset.from_records(
        [{"question": "q", "metadata": {"language": "en", "question_type": "single_hop"}}] * 3
    )
    with pytest.raises(ValueError) as error:
        sample(data, 2, seed=0, stratify="qtype")
    assert "'qtype'" in str(error.value)
    assert "tags present: language, question_type" in str(error.value)
    bare = Dataset.from_records([{"question": "q"}] * 3)
    with pytest.raises(ValueError, match="no metadata"):
        sample(bare, 2, seed=0, stratify="kind")


def allocate(n: int, sizes: list[int]) -> list[int]:
    """How ``sample(..., stratify=)`` shares ``n`` among strata of these sizes (in order)."""
    kinds: dict[str | None, int] = {f"g{i}": size for i, size in enumerate(sizes)}
    picked = sample(tagged(kinds), n, seed=0, stratify="kind")
    counts = Counter(s.metadata["kind"] for s in picked)
    return [counts[kind] for kind in kinds]


def test_allocate_by_hand():
    assert allocate(5, [6, 3, 1]) == [3, 1, 1]
    assert allocate(4, [2, 2, 2, 2]) == [1, 1, 1, 1]
    assert allocate(3, [5, 5]) == [2, 1]  # 1.5 and 1.5: the tie to the earlier group
    assert allocate(20, [3, 4]) == [3, 4]  # more than there are: everything
    assert sum(allocate(7, [13, 1, 1, 1, 9])) == 7
