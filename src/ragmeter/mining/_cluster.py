"""Near-duplicate removal and k-means, in numpy: the diversity half of mining.

Both work on L2-normalised rows (what :class:`ragmeter.embed.Embeddings` returns), so a dot
product is a cosine similarity. Everything is deterministic for a given seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter._text import normalize, tokenize

#: Rows compared with the kept ones at once while removing near-duplicates.
_BLOCK = 512
MAX_ITERATIONS = 100
N_INIT = 10
SEEDING_BUDGET = 4_000_000  # n * k of all seedings together, at most (at least one)


def question_key(text: str) -> str:
    """The text two questions must share to be the same question: normalised (NFKC, case
    folded), punctuation dropped, one space between words; Chinese characters one by one.

    >>> question_key("什么是 RAG？") == question_key("什么是rag?")
    True
    """
    tokens = tokenize(text, "char")
    return " ".join(tokens) if tokens else normalize(text)


@dataclass(frozen=True)
class Dedupe:
    """What near-duplicate removal kept, and which kept row each removed row repeats."""

    kept: list[int]  # row positions, in the order they were considered
    duplicate_of: dict[int, int]  # removed row -> the kept row it repeats
    same_text: int  # removed because their normalised text equals a kept one's
    similar: int  # removed because of the cosine threshold


def dedupe(
    keys: Sequence[str], vectors: np.ndarray, order: Sequence[int], threshold: float
) -> Dedupe:
    """Keep rows in ``order``, each unless its key equals a kept row's or its cosine with a
    kept row is at least ``threshold``; a removed row is ascribed to its most similar kept row
    (the one with its text, if any)."""
    kept: list[int] = []
    duplicate_of: dict[int, int] = {}
    same_text = similar = 0
    first_with_key: dict[str, int] = {}
    kept_matrix = np.zeros((0, vectors.shape[1]), dtype=np.float32)
    order = list(order)
    for start in range(0, len(order), _BLOCK):
        block = order[start : start + _BLOCK]
        to_old = vectors[block] @ kept_matrix.T if len(kept) else None
        within = vectors[block] @ vectors[block].T
        block_kept: list[int] = []  # offsets in the block of the rows kept from it
        for offset, row in enumerate(block):
            owner = first_with_key.get(keys[row])
            if owner is not None:
                duplicate_of[row] = owner
                same_text += 1
                continue
            best, best_similarity = -1, -2.0
            if to_old is not None:
                position = int(np.argmax(to_old[offset]))
                best, best_similarity = kept[position], float(to_old[offset, position])
            if block_kept:
                sims = within[offset, block_kept]
                position = int(np.argmax(sims))
                if float(sims[position]) > best_similarity:
                    best, best_similarity = block[block_kept[position]], float(sims[position])
            if best >= 0 and best_similarity >= threshold:
                duplicate_of[row] = best
                similar += 1
                continue
            block_kept.append(offset)
            first_with_key[keys[row]] = row
        new = [block[offset] for offset in block_kept]
        kept += new
        kept_matrix = np.concatenate([kept_matrix, vectors[new]]) if new else kept_matrix
    return Dedupe(kept, duplicate_of, same_text, similar)


def _squared_distances(
    points: np.ndarray, centroids: np.ndarray, norms: np.ndarray | None = None
) -> np.ndarray:
    """Squared Euclidean distances, ``(len(points), len(centroids))``; ``norms`` are the
    points' squared norms when already known (computing them dominates otherwise)."""
    if norms is None:
        norms = np.einsum("ij,ij->i", points, points)
    distances = (
        norms[:, None]
        - 2.0 * points @ centroids.T
        + np.einsum("ij,ij->i", centroids, centroids)[None, :]
    )
    clipped: np.ndarray = np.maximum(distances, 0.0)
    return clipped


def _plus_plus(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding: each next centre drawn with probability proportional to the squared
    distance to the nearest centre already chosen."""
    norms = np.einsum("ij,ij->i", points, points)
    chosen = [int(rng.integers(len(points)))]
    nearest = _squared_distances(points, points[chosen], norms)[:, 0]
    while len(chosen) < k:
        total = float(nearest.sum())
        if total <= 0.0:  # every point sits on a centre: take any point not yet chosen
            rest = np.setdiff1d(np.arange(len(points)), chosen)
            chosen.append(int(rng.choice(rest)))
        else:
            chosen.append(int(rng.choice(len(points), p=nearest / total)))
        newest = _squared_distances(points, points[chosen[-1:]], norms)[:, 0]
        nearest = np.minimum(nearest, newest)
    centroids: np.ndarray = points[chosen].astype(np.float64)
    return centroids


def kmeans(
    points: np.ndarray, k: int, seed: int, *, n_init: int = N_INIT
) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means with k-means++ seeding, the best (lowest inertia) of up to ``n_init``
    seedings drawn from one generator: each row's cluster (0 to k-1) and the centroids.

    One seeding can settle on a poor split (an outlying question alone, two topics merged);
    several make that unlikely, as in scikit-learn's ``n_init``."""
    n = len(points)
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of points ({n}), got {k}")
    data = points.astype(np.float64)
    rng = np.random.default_rng(seed)
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    norms = np.einsum("ij,ij->i", data, data)
    # A seeding costs some n * k * dim operations: large sets get fewer of them (20,000
    # questions in 100 clusters: 2), so mining stays within seconds.
    for _ in range(max(1, min(n_init, SEEDING_BUDGET // (n * k)))):
        labels, centroids = _lloyd(data, _plus_plus(data, k, rng), norms)
        inertia = float(_squared_distances(data, centroids, norms)[np.arange(n), labels].sum())
        if best is None or inertia < best[0] - 1e-9:
            best = (inertia, labels, centroids)
    assert best is not None
    return best[1], best[2]


def _lloyd(
    data: np.ndarray, centroids: np.ndarray, norms: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's iterations from ``centroids`` until no point changes cluster. An emptied
    cluster takes the point farthest from its own centroid."""
    n, k = len(data), len(centroids)
    labels = np.full(n, -1)
    for _ in range(MAX_ITERATIONS):
        distances = _squared_distances(data, centroids, norms)
        new_labels = np.argmin(distances, axis=1)
        own = distances[np.arange(n), new_labels]
        for cluster in range(k):
            if not np.any(new_labels == cluster):
                counts = np.bincount(new_labels, minlength=k)
                movable = np.where(counts[new_labels] > 1, own, -1.0)
                farthest = int(np.argmax(movable))
                new_labels[farthest] = cluster
                own[farthest] = -1.0
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
        sums = np.stack(
            [np.bincount(labels, weights=data[:, j], minlength=k) for j in range(data.shape[1])],
            axis=1,
        )
        centroids = sums / np.bincount(labels, minlength=k)[:, None]
    return labels, centroids
