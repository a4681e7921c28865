"""The embeddings layer: OpenAI-compatible endpoints, or an offline multilingual model."""

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
