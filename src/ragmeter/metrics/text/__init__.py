"""Answer-vs-reference text metrics without an LLM, and the tokenizer they share."""

from ragmeter._text import tokenize
from ragmeter.metrics.text.bleu import BLEU
from ragmeter.metrics.text.chrf import ChrF
from ragmeter.metrics.text.exact_match import ExactMatch
from ragmeter.metrics.text.rouge import Rouge
from ragmeter.metrics.text.string_presence import StringPresence

__all__ = ["BLEU", "ChrF", "ExactMatch", "Rouge", "StringPresence", "tokenize"]
