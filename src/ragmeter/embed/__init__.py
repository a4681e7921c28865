"""The embeddings layer: OpenAI-compatible endpoints, or an offline multilingual model."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.embed._base import (
        Embeddings,
        Kind,
        cosine_similarity,
        decode_vector,
        embedding_cache_key,
        encode_vector,
        normalize_rows,
    )
    from ragmeter.embed._config import EmbeddingsConfig
    from ragmeter.embed._default import default_embeddings
    from ragmeter.embed._local import LocalEmbeddings
    from ragmeter.embed._openai import OpenAIEmbeddings

__all__ = [
    "Embeddings",
    "EmbeddingsConfig",
    "Kind",
    "LocalEmbeddings",
    "OpenAIEmbeddings",
    "cosine_similarity",
    "decode_vector",
    "default_embeddings",
    "embedding_cache_key",
    "encode_vector",
    "normalize_rows",
]

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.embed._base": (
            "Embeddings",
            "Kind",
            "cosine_similarity",
            "decode_vector",
            "embedding_cache_key",
            "encode_vector",
            "normalize_rows",
        ),
        "ragmeter.embed._config": ("EmbeddingsConfig",),
        "ragmeter.embed._default": ("default_embeddings",),
        "ragmeter.embed._local": ("LocalEmbeddings",),
        "ragmeter.embed._openai": ("OpenAIEmbeddings",),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
