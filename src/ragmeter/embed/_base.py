"""The Embeddings interface: texts in, L2-normalised float32 rows out, batched and cached.

Subclasses implement one uncached batch (:meth:`Embeddings._embed_batch`); this class adds
de-duplication, batching, the cache and usage accounting, so every backend gets them the
same way. Vectors are cached one by one under a key made of the backend's identity, its
settings, the kind (query or passage) and the text's hash, as compact base64 float32.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ragmeter._services import Cache, MemoryCache, Portable, Usage, UsageLedger, run_sync

Kind = Literal["query", "passage"]
KINDS: tuple[str, ...] = ("query", "passage")
EMBED_CACHE_FORMAT = 1


def embedding_cache_key(
    *, identity: str, params: dict[str, Any], kind: str, text: str, salt: str = ""
) -> str:
    """A stable hash of everything that can change a vector.

    >>> a = embedding_cache_key(identity="u|m", params={}, kind="query", text="hi")
    >>> a == embedding_cache_key(identity="u|m", params={}, kind="passage", text="hi")
    False
    >>> a == embedding_cache_key(identity="u|m2", params={}, kind="query", text="hi")
    False
    """
    payload = json.dumps(
        {
            "embed_format": EMBED_CACHE_FORMAT,
            "identity": identity,
            "params": params,
            "kind": kind,
            "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "salt": salt,
        },
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return "embed:" + hashlib.sha256(payload.encode("utf-8")).hexdigest()


def encode_vector(vector: np.ndarray) -> dict[str, Any]:
    """A cache value: little-endian float32 bytes in base64, and the dimension.

    >>> decode_vector(encode_vector(np.array([0.6, 0.8], dtype=np.float32))).tolist()
    [0.6000000238418579, 0.800000011920929]
    """
    data = np.ascontiguousarray(vector, dtype="<f4")
    return {"f32": base64.b64encode(data.tobytes()).decode("ascii"), "dim": int(data.shape[0])}


def decode_vector(value: dict[str, Any]) -> np.ndarray | None:
    """The vector of a cache value; ``None`` for an entry that is not one."""
    try:
        raw = base64.b64decode(value["f32"], validate=True)
        vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        if vector.shape[0] != int(value["dim"]) or vector.shape[0] == 0:
            return None
        return vector
    except (KeyError, TypeError, ValueError):
        return None


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (all-zero rows stay zero), as float32.

    >>> normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist()
    [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
    """
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return unit


def cosine_similarity(a: Any, b: Any) -> Any:
    """Cosine similarity of L2-normalised vectors (a dot product): two vectors give a float,
    a matrix and a vector one score per row, two matrices the ``(len(a), len(b))`` matrix.

    >>> cosine_similarity([0.6, 0.8], [0.6, 0.8])
    1.0
    >>> cosine_similarity([[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0]]).tolist()
    [[1.0], [0.0]]
    """
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    # float32 rounding lets the dot product of two unit vectors exceed 1 (1.0000000397 was
    # seen as an answer relevancy): no similarity leaves [-1, 1].
    scores = np.clip(a @ b.T, -1.0, 1.0)
    if scores.ndim == 0:
        return round(float(scores), 6)
    return scores


class Embeddings(Portable, ABC):
    """Asynchronous text embeddings: ``await embed(texts, kind=...)`` is an ``(n, dim)``
    float32 array of L2-normalised rows, in the order of ``texts``.

    Within one call, duplicate texts are embedded once; texts not in the cache are sent in
    batches of ``batch_size``; every vector is cached, so a re-run makes no call. Usage
    (calls, cached texts as ``cached_calls``, tokens) goes to :attr:`ledger`.
    """

    def __init__(
        self,
        *,
        cache: Cache | None = None,
        ledger: UsageLedger | None = None,
        batch_size: int = 32,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.cache: Cache = cache if cache is not None else MemoryCache()
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.batch_size = batch_size
        self._dimension: int | None = None
        self._open()

    #: A copy for another process (a cluster worker) gets a cache handle and usage ledger
    #: afresh (the worker then gives it the shared cache); subclasses add their HTTP clients.
    _process_local: tuple[str, ...] = ("cache", "ledger")

    def _reopen(self) -> None:
        self.cache = MemoryCache()
        self.ledger = UsageLedger()
        self._open()

    def _open(self) -> None:
        """Make (or check) what these embeddings need in this process, as they are made
        and in a copy received from another process: e.g. fail, naming the extra, when a
        package they need is missing."""

    # -- what subclasses provide ----------------------------------------------------------
    @property
    @abstractmethod
    def identity(self) -> str:
        """Endpoint (or engine) and model: what vectors belong to."""

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """For run records: model, endpoint, settings. Never a secret."""

    def cache_params(self) -> dict[str, Any]:
        """Settings besides the identity that change vectors (part of every cache key)."""
        return {}

    @abstractmethod
    async def _embed_batch(self, texts: list[str], kind: Kind, usage: Usage) -> np.ndarray:
        """One uncached batch: an ``(len(texts), dim)`` array (normalised here afterwards).
        Adds calls and tokens to ``usage``."""

    async def release_loop_resources(self) -> None:
        """Free what belongs to the running event loop (called before a sync call's loop
        closes)."""

    async def aclose(self) -> None:
        """Release connections."""

    # -- public ---------------------------------------------------------------------------
    @property
    def dimension(self) -> int | None:
        """The vector size; ``None`` until known (for API backends, after the first call)."""
        return self._dimension

    async def embed(
        self,
        texts: Sequence[str],
        *,
        kind: Kind = "query",
        scope: str | None = None,
    ) -> np.ndarray:
        """Embed ``texts`` as queries or passages; rows are L2-normalised float32.

        ``scope`` attributes the usage in the ledger (e.g. a metric's name)."""
        if kind not in KINDS:
            raise ValueError(f"kind must be 'query' or 'passage', got {kind!r}")
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string: use [text]")
        texts = list(texts)
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"text {position} is a {type(text).__name__}, not a str")
        usage = Usage()
        vectors: dict[str, np.ndarray] = {}
        keys: dict[str, str] = {}
        identity, params = self.identity, self.cache_params()
        unique = {
            text: embedding_cache_key(identity=identity, params=params, kind=kind, text=text)
            for text in dict.fromkeys(texts)
        }
        hits = await self.cache.aget_many(list(unique.values()))
        for (text, key), hit in zip(unique.items(), hits, strict=True):
            vector = decode_vector(hit) if hit is not None else None
            if vector is not None and self._dimension in (None, vector.shape[0]):
                self._learn_dimension(vector.shape[0])
                vectors[text] = vector
                usage.cached_calls += 1
            else:
                keys[text] = key
        try:
            missing = list(keys)
            batches = [
                missing[start : start + self.batch_size]
                for start in range(0, len(missing), self.batch_size)
            ]
            # Every batch runs to its end, so what succeeded is cached even when one fails.
            outcomes = await asyncio.gather(
                *(self._run_batch(batch, kind, usage, keys, vectors) for batch in batches),
                return_exceptions=True,
            )
        finally:
            self.ledger.record(usage, scope=scope)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return np.stack([vectors[text] for text in texts]).astype(np.float32, copy=False)

    def embed_sync(
        self, texts: Sequence[str], *, kind: Kind = "query", scope: str | None = None
    ) -> np.ndarray:
        """:meth:`embed` from sync code, also inside a running event loop (Jupyter), where
        it runs in a worker thread."""

        async def call() -> np.ndarray:
            try:
                return await self.embed(texts, kind=kind, scope=scope)
            finally:
                await self.release_loop_resources()

        return run_sync(call())

    async def _run_batch(
        self,
        batch: list[str],
        kind: Kind,
        usage: Usage,
        keys: dict[str, str],
        vectors: dict[str, np.ndarray],
    ) -> None:
        matrix = normalize_rows(await self._embed_batch(batch, kind, usage))
        if matrix.ndim != 2 or matrix.shape[0] != len(batch) or matrix.shape[1] == 0:
            raise ValueError(
                f"{type(self).__name__} returned an array of shape {matrix.shape} "
                f"for {len(batch)} texts"
            )
        self._learn_dimension(matrix.shape[1])
        for text, vector in zip(batch, matrix):
            vectors[text] = vector
        await self.cache.aput_many([(keys[text], encode_vector(vectors[text])) for text in batch])

    def _learn_dimension(self, dimension: int) -> None:
        if self._dimension is None:
            self._dimension = dimension
        elif self._dimension != dimension:
            raise ValueError(
                f"{type(self).__name__} returned {dimension}-dimensional vectors after "
                f"{self._dimension}-dimensional ones"
            )
