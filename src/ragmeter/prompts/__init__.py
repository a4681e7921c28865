"""Prompts: versioned Chinese and English templates, rendered with delimited data."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.prompts._template import BLOCK_NAMES as BLOCK_NAMES
    from ragmeter.prompts._template import LANGUAGES as LANGUAGES
    from ragmeter.prompts._template import Example as Example
    from ragmeter.prompts._template import Language as Language
    from ragmeter.prompts._template import PromptTemplate as PromptTemplate
    from ragmeter.prompts._template import data_block as data_block
    from ragmeter.prompts._template import detect_language as detect_language
    from ragmeter.prompts._template import load_prompt as load_prompt
    from ragmeter.prompts._template import neutralise as neutralise
    from ragmeter.prompts._template import parse_prompt as parse_prompt

_lazy.attach(__name__, __file__)
