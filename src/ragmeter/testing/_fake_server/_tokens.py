"""The fake server's tokens: usage counts and logprobs (yes/no verdict probabilities)."""

from __future__ import annotations

import math
import re
from typing import Any

#: Probability given to an emitted yes/no/0/1 token when its reply sets no ``p_yes``.
DEFAULT_BINARY_CONFIDENCE = 0.99

_TOKEN_RE = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")
_BINARY_PAIRS = {"yes": "no", "no": "yes", "1": "0", "0": "1"}
_POSITIVE = frozenset({"yes", "1"})
_MIN_PROB = 1e-12
_FILLER_LOGPROB = -30.0


def tokenize(text: str) -> list[str]:
    """Split ``text`` into the fake server's tokens; ``"".join(tokenize(t)) == t``.

    >>> tokenize('{"verdict": "yes"}')
    ['{', '"', 'verdict', '"', ':', ' "', 'yes', '"', '}']
    """
    return _TOKEN_RE.findall(text)


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return ""


def _binary_alternatives(token: str, p_yes: float | None) -> list[tuple[str, float]] | None:
    """[(token, logprob)] for the emitted yes/no/0/1 token and its counterpart, else None."""
    stripped = token.strip()
    key = stripped.lower()
    if key not in _BINARY_PAIRS:
        return None
    prefix = token[: len(token) - len(token.lstrip())]
    other = _BINARY_PAIRS[key]
    if stripped.isupper() and len(stripped) > 1:
        other = other.upper()
    elif stripped[:1].isupper():
        other = other.capitalize()
    if p_yes is None:
        p_emitted = DEFAULT_BINARY_CONFIDENCE
    else:
        p_emitted = p_yes if key in _POSITIVE else 1.0 - p_yes
    return [
        (token, math.log(max(p_emitted, _MIN_PROB))),
        (prefix + other, math.log(max(1.0 - p_emitted, _MIN_PROB))),
    ]


def _logprob_entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def logprobs_content(tokens: list[str], top_n: int, p_yes: float | None) -> list[dict[str, Any]]:
    entries = []
    for token in tokens:
        alternatives = _binary_alternatives(token, p_yes)
        if alternatives is None:
            top = [(token, 0.0)]
            keep = top_n
        else:
            top = sorted(alternatives, key=lambda alt: -alt[1])
            keep = max(top_n, len(top))
        while len(top) < keep:  # placeholders, so that there are top_logprobs entries
            filler = len(top)
            top.append((f"<alt{filler}>", _FILLER_LOGPROB - filler))
        logprob = alternatives[0][1] if alternatives is not None else 0.0
        entry = _logprob_entry(token, logprob)
        entry["top_logprobs"] = [_logprob_entry(t, lp) for t, lp in top[:keep]]
        entries.append(entry)
    return entries
