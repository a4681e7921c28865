"""Endpoint constants shared by the judge and embeddings configurations."""

from __future__ import annotations

#: The OpenAI API root: the default base URL of every OpenAI-compatible endpoint config.
OPENAI_BASE_URL = "https://api.openai.com/v1"
