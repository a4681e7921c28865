"""Prompts: versioned Chinese and English templates, rendered with delimited data."""

from ragmeter.prompts._template import (
    BLOCK_NAMES,
    LANGUAGES,
    Example,
    Language,
    PromptTemplate,
    data_block,
    detect_language,
    load_prompt,
    neutralise,
    parse_prompt,
)

__all__ = [
    "BLOCK_NAMES",
    "LANGUAGES",
    "Example",
    "Language",
    "PromptTemplate",
    "data_block",
    "detect_language",
    "load_prompt",
    "neutralise",
    "parse_prompt",
]
