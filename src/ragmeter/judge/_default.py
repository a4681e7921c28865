"""Choosing the judge: a configured endpoint if there is one, else the embedded offline judge."""

from __future__ import annotations

import os
from pathlib import Path

from ragmeter._services import Cache, NullCache, SQLiteCache, UsageLedger
from ragmeter.judge._base import Judge
from ragmeter.judge._config import JudgeConfig
from ragmeter.judge._openai import OpenAIJudge

DEFAULT_CACHE_PATH = Path(".ragmeter") / "cache.db"


def make_cache(
    path: str | Path | None = None, *, enabled: bool = True, refresh: bool = False
) -> Cache:
    """The judge cache: ``path``, else ``$RAGMETER_CACHE``, else ``.ragmeter/cache.db``.

    ``enabled=False`` is ``--no-cache``; ``refresh=True`` is ``--refresh-cache``.
    """
    if not enabled:
        return NullCache()
    location = Path(path or os.environ.get("RAGMETER_CACHE") or DEFAULT_CACHE_PATH)
    return SQLiteCache(location, refresh=refresh)


def default_judge(
    config: JudgeConfig | None = None,
    *,
    cache: Cache | None = None,
    ledger: UsageLedger | None = None,
) -> Judge:
    """The judge to use: ``config``, else the ``RAGMETER_JUDGE_*`` / ``OPENAI_*`` environment,
    else the embedded offline judge (extra ``[local]``; ``$RAGMETER_LOCAL_MODEL`` names another
    bundled model, e.g. ``qwen2.5-coder-1.5b-instruct-q4_k_m`` from ``[local-large]``)."""
    config = config or JudgeConfig.from_env()
    cache = cache if cache is not None else make_cache()
    if config is not None:
        return OpenAIJudge(config, cache=cache, ledger=ledger)
    from ragmeter.judge._local import LocalJudge
    from ragmeter.judge._models import DEFAULT_MODEL

    model = os.environ.get("RAGMETER_LOCAL_MODEL") or DEFAULT_MODEL
    return LocalJudge(model, cache=cache, ledger=ledger)
