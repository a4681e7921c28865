"""Prompts: versioned Chinese and English templates, rendered with delimited data."""

from typing import TYPE_CHECKING, Any

from ragmeter import _lazy

if TYPE_CHECKING:
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

# Each name is imported on first use (see ragmeter._lazy), not with the package.
_EXPORTS = _lazy.exports(
    {
        "ragmeter.prompts._template": (
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
        ),
    }
)

if not TYPE_CHECKING:  # hidden from type checkers, which then flag names not listed above

    def __getattr__(name: str) -> Any:
        return _lazy.load(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return _lazy.names(__name__, _EXPORTS)
