"""Nearest-neighbour pairs: the exact search, and the inverted file used for large corpora."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.testset import _neighbours  # private: the exact and approximate pair search


def clustered(n: int, seed: int = 0, dimension: int = 64) -> np.ndarray:
    rng = np.random.default_rng(seed)
    topics = rng.standard_normal((max(1, n // 8), dimension))
    vectors = topics[rng.integers(0, len(topics), n)] + 0.45 * rng.standard_normal((n, dimension))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def brute_force(vectors, threshold, k, groups=None, positions=None):
    """Each vector's k best partners above the threshold, by scoring every pair in Python."""
    scores = vectors @ vectors.T
    chosen = set()
    for i in range(len(vectors)):
        partners = [
            j
            for j in range(len(vectors))
            if j != i
            and scores[i, j] >= threshold
            and not (
                groups is not None
                and groups[i] == groups[j]
                and abs(positions[i] - positions[j]) <= 1
            )
        ]
        for j in sorted(partners, key=lambda j: -scores[i, j])[:k]:
            chosen.add((min(i, j), max(i, j)))
    return chosen


def as_set(pairs):
    return set(zip(pairs.first.tolist(), pairs.second.tolist(), strict=True))


def test_the_exact_search_finds_each_vectors_best_partners_above_the_threshold():
    vectors = clustered(300)
    pairs = _neighbours.nearest_pairs(vectors, threshold=0.6, k=3)
    assert as_set(pairs) == brute_force(vectors, 0.6, 3)
    expected = np.einsum("ij,ij->i", vectors[pairs.first], vectors[pairs.second])
    np.testing.assert_allclose(pairs.score, expected, rtol=1e-5)
    assert np.all(pairs.first < pairs.second)


def test_neighbouring_positions_of_one_group_are_never_paired():
    vectors = clustered(200, seed=1)
    groups = np.arange(200) // 10
    positions = np.arange(200) % 10
    pairs = _neighbours.nearest_pairs(
        vectors, threshold=0.5, k=4, groups=groups, positions=positions
    )
    assert as_set(pairs) == brute_force(vectors, 0.5, 4, groups, positions)
    same = groups[pairs.first] == groups[pairs.second]
    assert not np.any(same & (np.abs(positions[pairs.first] - positions[pairs.second]) <= 1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_inverted_file_finds_nearly_every_pair_of_the_exact_search(monkeypatch, seed):
    vectors = clustered(3000, seed=seed)
    exact = as_set(_neighbours.nearest_pairs(vectors, threshold=0.7, k=5))
    monkeypatch.setattr(_neighbours, "EXACT_LIMIT", 100)
    approximate = _neighbours.nearest_pairs(vectors, threshold=0.7, k=5)
    found = as_set(approximate)
    assert len(found & exact) / len(exact) >= 0.97
    assert np.all(approximate.score >= 0.7)
    expected = np.einsum("ij,ij->i", vectors[approximate.first], vectors[approximate.second])
    np.testing.assert_allclose(approximate.score, expected, rtol=1e-5)


def test_small_and_empty_inputs():
    one = _neighbours.nearest_pairs(np.ones((1, 4), dtype=np.float32) / 2, threshold=0.0, k=3)
    assert len(one.first) == 0
    two = _neighbours.nearest_pairs(np.eye(2, dtype=np.float32), threshold=-1.0, k=3)
    assert as_set(two) == {(0, 1)}
