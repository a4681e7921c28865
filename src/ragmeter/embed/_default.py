"""The embeddings ragmeter uses when none is given."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from ragmeter._services import Cache, UsageLedger, settings_error
from ragmeter.embed._base import Embeddings
from ragmeter.embed._config import EmbeddingsConfig
from ragmeter.embed._local import LocalEmbeddings
from ragmeter.embed._openai import OpenAIEmbeddings


def default_embeddings(
    *,
    cache: Cache | None = None,
    ledger: UsageLedger | None = None,
    env: Mapping[str, str] | None = None,
) -> Embeddings:
    """:class:`OpenAIEmbeddings` when ``RAGMETER_EMBEDDINGS_MODEL`` is set (see
    :meth:`EmbeddingsConfig.from_env`), else the offline :class:`LocalEmbeddings`.

    Without ``cache``, vectors are cached on disk with the judge's answers
    (:func:`ragmeter.judge.make_cache`: ``$RAGMETER_CACHE`` or ``.ragmeter/cache.db``)."""
    if cache is None:
        from ragmeter.judge import make_cache

        cache = make_cache()
    try:
        config = EmbeddingsConfig.from_env(env)
    except ValidationError as error:  # said with the variables that set them
        raise settings_error(
            error,
            EmbeddingsConfig,
            where="the embeddings settings of the environment",
            name=lambda key: f"RAGMETER_EMBEDDINGS_{key.split('.')[0].upper()}",
        ) from None
    if config is not None:
        return OpenAIEmbeddings(config, cache=cache, ledger=ledger)
    return LocalEmbeddings(cache=cache, ledger=ledger)
