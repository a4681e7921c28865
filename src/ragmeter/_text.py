"""Normalising and tokenising answer text, so that Chinese scores as sensibly as English."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any, Literal

Tokenizer = Literal["auto", "char", "jieba", "whitespace"]

# Han, kana and hangul: scripts written without spaces between words.
_CJK_RANGES = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK = re.compile(f"[{_CJK_RANGES}]")
_TOKEN = re.compile(f"[{_CJK_RANGES}]|[^\\W_{_CJK_RANGES}]+")
_SPACE = re.compile(r"\s+")


def contains_cjk(text: str) -> bool:
    """Whether ``text`` has any Chinese, Japanese or Korean character.

    >>> contains_cjk("RAG 是什么"), contains_cjk("what is RAG")
    (True, False)
    """
    return _CJK.search(text) is not None


def normalize(text: str) -> str:
    """NFKC (full-width to half-width), case folded, whitespace collapsed.

    >>> normalize("  Ｐａｒｉｓ\\n IS ")
    'paris is'
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


@lru_cache(maxsize=1)
def _jieba() -> Any:  # the jieba module, which ships no type information
    try:
        import jieba
    except ImportError:
        raise ImportError("tokenizer='jieba' needs jieba: pip install 'ragmeter[zh]'") from None
    jieba.setLogLevel(60)
    return jieba


def tokenize(text: str, tokenizer: Tokenizer = "auto") -> list[str]:
    """Split normalised text into tokens; punctuation is dropped.

    ``auto`` and ``char``: each CJK character is a token, other scripts split into words.
    ``jieba``: Chinese word segmentation. ``whitespace``: split on spaces only.

    >>> tokenize("RAG 是检索增强生成, right?")
    ['rag', '是', '检', '索', '增', '强', '生', '成', 'right']
    """
    text = normalize(text)
    if tokenizer in ("auto", "char"):
        return _TOKEN.findall(text)
    if tokenizer == "whitespace":
        return text.split()
    if tokenizer == "jieba":
        return [piece.strip() for piece in _jieba().lcut(text) if _TOKEN.search(piece)]
    raise ValueError(f"unknown tokenizer {tokenizer!r}; use auto, char, jieba or whitespace")
