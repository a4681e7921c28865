"""Embeddings from any OpenAI-compatible ``/embeddings`` endpoint (OpenAI, Azure OpenAI,
Gemini, DashScope/Qwen, Zhipu, SiliconFlow, Ollama, vLLM, TEI, the llama.cpp server)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter._services import Cache, Usage, UsageLedger, endpoint_client, estimate_tokens
from ragmeter.embed._base import Embeddings, Kind
from ragmeter.embed._config import ENV_PREFIX, EmbeddingsConfig

if TYPE_CHECKING:  # only for an explicit transport: aiohttp does the requests otherwise
    import httpx


def _vector_of(item: dict[str, Any]) -> np.ndarray:
    raw = item["embedding"]
    if isinstance(raw, str):  # encoding_format "base64": little-endian float32
        vector = np.frombuffer(base64.b64decode(raw, validate=True), dtype="<f4")
    else:
        vector = np.asarray(raw, dtype=np.float64)
    if vector.ndim != 1 or vector.shape[0] == 0 or not np.all(np.isfinite(vector)):
        raise ValueError("not a finite vector")
    return vector.astype(np.float32)


def _check_shape(expected: int) -> Any:
    def validate(data: dict[str, Any]) -> None:
        items = data["data"]
        if not isinstance(items, list) or len(items) != expected:
            raise ValueError(f"expected {expected} embeddings")
        indices = sorted(int(item.get("index", position)) for position, item in enumerate(items))
        if indices != list(range(expected)):
            raise ValueError("embedding indices are not 0..n-1")
        sizes = {_vector_of(item).shape[0] for item in items}
        if len(sizes) != 1:
            raise ValueError("embeddings of different sizes")

    return validate


class OpenAIEmbeddings(Embeddings):
    """Embeddings on an OpenAI-compatible endpoint: ``POST {base_url}/embeddings`` with
    ``{"model", "input": [...]}``, under the endpoint's shared limits, with retries and
    backoff; 401/403/404 fail at once with the fix (``RAGMETER_EMBEDDINGS_*``) named.

    Vectors are put back in input order by ``index``; usage tokens come from the response,
    or are estimated (``estimated_calls``) when it has none. Empty texts are sent as one
    space (most endpoints reject an empty input).
    """

    def __init__(
        self,
        config: EmbeddingsConfig,
        cache: Cache | None = None,
        ledger: UsageLedger | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(cache=cache, ledger=ledger, batch_size=config.batch_size)
        self.config = config
        self._dimension = config.dimensions
        self.http = endpoint_client(config, env_prefix=ENV_PREFIX, transport=transport)
        self.limiter = self.http.limiter

    @property
    def identity(self) -> str:
        return self.config.identity

    def cache_params(self) -> dict[str, Any]:
        return {
            "query_prefix": self.config.query_prefix,
            "passage_prefix": self.config.passage_prefix,
            "dimensions": self.config.dimensions,
        }

    def describe(self) -> dict[str, Any]:
        return {"kind": "openai-compatible", **self.config.describe()}

    _process_local = (*Embeddings._process_local, "http", "limiter")

    def _reopen(self) -> None:
        super()._reopen()
        self.http = endpoint_client(self.config, env_prefix=ENV_PREFIX)
        self.limiter = self.http.limiter

    async def aclose(self) -> None:
        await self.http.aclose()

    async def release_loop_resources(self) -> None:
        # A sync call's loop is about to close: its httpx client must not outlive it.
        await self.http.aclose_current_loop()

    async def _embed_batch(self, texts: list[str], kind: Kind, usage: Usage) -> np.ndarray:
        prefix = self.config.query_prefix if kind == "query" else self.config.passage_prefix
        inputs = [f"{prefix}{text}" if (prefix or text) else " " for text in texts]
        body: dict[str, Any] = {"model": self.config.request_model, "input": inputs}
        if self.config.dimensions is not None:
            body["dimensions"] = self.config.dimensions
        estimated = sum(estimate_tokens(text) for text in inputs)
        data = await self.http.post(
            "embeddings",
            body,
            usage,
            estimated_tokens=estimated,
            validate=_check_shape(len(inputs)),
        )
        reported = data.get("usage") or {}
        tokens = reported.get("prompt_tokens", reported.get("total_tokens"))
        if not isinstance(tokens, int) or tokens < 0:
            usage.estimated_calls += 1
            tokens = estimated
        usage.prompt_tokens += tokens
        self.limiter.settle_tokens(estimated, tokens)
        items = sorted(enumerate(data["data"]), key=lambda pair: int(pair[1].get("index", pair[0])))
        return np.stack([_vector_of(item) for _, item in items])
