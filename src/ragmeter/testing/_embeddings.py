"""Embeddings with prepared vectors, for tests of metrics that use similarity."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.embed import Embeddings, Kind
from ragmeter.judge import Usage


def unit_vector_with_cosine(cosine: float, axis: int, dimension: int = 16) -> list[float]:
    """A unit vector whose cosine with the first axis is ``cosine``; ``axis`` (>= 1) picks the
    orthogonal direction, so vectors built with different axes only share the first one.

    >>> round(float(np.dot(unit_vector_with_cosine(0.5, 1), unit_vector_with_cosine(1.0, 2))), 6)
    0.5
    """
    vector = [0.0] * dimension
    vector[0] = cosine
    vector[axis] = float(np.sqrt(max(0.0, 1.0 - cosine * cosine)))
    return vector


class ScriptedEmbeddings(Embeddings):
    """Vectors from a mapping (or a function) of text; other texts get deterministic
    hash-seeded vectors. Records every text it was asked to embed in ``calls``."""

    def __init__(
        self,
        vectors: Mapping[str, Sequence[float]] | Callable[[str], Sequence[float]] | None = None,
        *,
        dimension: int = 16,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._vectors = vectors
        self.size = dimension
        self.calls: list[str] = []

    @property
    def identity(self) -> str:
        return f"scripted-embeddings|{self.size}"

    def describe(self) -> dict[str, Any]:
        return {"kind": "scripted", "dimension": self.size}

    def _vector(self, text: str) -> Sequence[float]:
        if callable(self._vectors):
            return self._vectors(text)
        if self._vectors is not None and text in self._vectors:
            return self._vectors[text]
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
        vector: list[float] = np.random.default_rng(seed).standard_normal(self.size).tolist()
        return vector

    async def _embed_batch(self, texts: list[str], kind: Kind, usage: Usage) -> np.ndarray:
        self.calls.extend(texts)
        usage.calls += 1
        return np.asarray([self._vector(t) for t in texts], dtype=np.float32)
