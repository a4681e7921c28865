"""Prompts: versioned Chinese and English templates, rendered with delimited data."""

from ragmeter.prompts._template import (
    LANGUAGES,
    Example,
    Language,
    PromptTemplate,
    data_block,
    detect_language,
    load_prompt,
    parse_prompt,
)

__all__ = [
    "LANGUAGES",
    "Example",
    "Language",
    "PromptTemplate",
    "data_block",
    "detect_language",
    "load_prompt",
    "parse_prompt",
]
