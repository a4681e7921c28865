"""The embeddings layer: OpenAI-compatible endpoints, or an offline multilingual model."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.embed._base import Embeddings as Embeddings
    from ragmeter.embed._base import Kind as Kind
    from ragmeter.embed._base import cosine_similarity as cosine_similarity
    from ragmeter.embed._base import decode_vector as decode_vector
    from ragmeter.embed._base import embedding_cache_key as embedding_cache_key
    from ragmeter.embed._base import encode_vector as encode_vector
    from ragmeter.embed._base import normalize_rows as normalize_rows
    from ragmeter.embed._config import EmbeddingsConfig as EmbeddingsConfig
    from ragmeter.embed._default import default_embeddings as default_embeddings
    from ragmeter.embed._local import LocalEmbeddings as LocalEmbeddings
    from ragmeter.embed._openai import OpenAIEmbeddings as OpenAIEmbeddings

_lazy.attach(__name__, __file__)
