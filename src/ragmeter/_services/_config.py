"""Endpoint constants shared by the judge and embeddings configurations, and which
environment key an endpoint may be sent."""

from __future__ import annotations

from collections.abc import Mapping

#: The OpenAI API root: the default base URL of every OpenAI-compatible endpoint config.
OPENAI_BASE_URL = "https://api.openai.com/v1"


def openai_key_for(base_url: str, env: Mapping[str, str]) -> str | None:
    """``OPENAI_API_KEY`` when ``base_url`` is the endpoint that key belongs to: the one
    ``OPENAI_BASE_URL`` names, or OpenAI's own API when it is unset. ``None`` for any other
    endpoint: an OpenAI key is never sent to a server it was not made for.

    >>> env = {"OPENAI_API_KEY": "sk-x"}
    >>> openai_key_for("https://api.openai.com/v1/", env), openai_key_for("http://other/v1", env)
    ('sk-x', None)
    >>> openai_key_for("http://gw/v1", {**env, "OPENAI_BASE_URL": "http://gw/v1"})
    'sk-x'
    """
    key = env.get("OPENAI_API_KEY")
    if not key:
        return None
    home = env.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
    return key if base_url.strip().rstrip("/") == home.strip().rstrip("/") else None
