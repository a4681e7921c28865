"""Cosine similarity of unit vectors stays within [-1, 1] despite float32 rounding."""

from __future__ import annotations

import numpy as np

from ragmeter.embed import cosine_similarity


def test_rounding_never_takes_a_similarity_past_one():
    # float32(1.0000001) squared is 1.0000002: a dot product past 1, as answer relevancy once
    # printed (1.0000000397).
    v = np.array([1.0000001, 0.0], dtype=np.float32)
    assert float(v @ v) > 1.0
    assert cosine_similarity(v, v) == 1.0
    assert cosine_similarity(np.stack([v, -v]), v).tolist() == [1.0, -1.0]
    assert cosine_similarity(np.stack([v]), np.stack([v, -v])).max() == 1.0


def test_unit_vectors_of_a_real_size_stay_in_range():
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(200, 384)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    scores = cosine_similarity(rows, rows)
    assert scores.max() <= 1.0 and scores.min() >= -1.0
    assert np.allclose(np.diag(scores), 1.0, atol=1e-6)
