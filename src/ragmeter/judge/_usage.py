"""Usage and cost accounting: per call, per metric, per sample and per run."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Mapping

from ragmeter.judge._config import Price
from ragmeter.judge._types import Usage

#: Defaults per million tokens, for common judge models (user overrides win). Prices change:
#: pass ``prices=`` or set ``price`` in the judge config for your contract's figures.
DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4o-mini": Price(input_per_million=0.15, output_per_million=0.60),
    "gpt-4o": Price(input_per_million=2.50, output_per_million=10.00),
    "gpt-4.1-mini": Price(input_per_million=0.40, output_per_million=1.60),
    "gpt-4.1": Price(input_per_million=2.00, output_per_million=8.00),
    "deepseek-chat": Price(input_per_million=2.0, output_per_million=3.0, currency="CNY"),
    "qwen-plus": Price(input_per_million=0.8, output_per_million=2.0, currency="CNY"),
    "qwen-turbo": Price(input_per_million=0.3, output_per_million=0.6, currency="CNY"),
    "moonshot-v1-8k": Price(input_per_million=12.0, output_per_million=12.0, currency="CNY"),
}


class PriceTable:
    """Model name -> price, defaults overridden by the user's figures."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self._prices = {**DEFAULT_PRICES, **(overrides or {})}

    def price_of(self, model: str) -> Price | None:
        if model in self._prices:
            return self._prices[model]
        # "gpt-4o-mini-2024-07-18" -> the longest known prefix
        matches = [name for name in self._prices if model.startswith(name)]
        return self._prices[max(matches, key=len)] if matches else None


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: CJK characters count one each, other text ~4 chars a token.

    >>> estimate_tokens("什么是RAG"), estimate_tokens("retrieval augmented generation")
    (4, 8)
    """
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
    other = len(text) - cjk
    return cjk + (other + 3) // 4


class UsageLedger:
    """Thread-safe running totals, by scope (e.g. metric or step name) and by sample."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = Usage()
        self.by_scope: dict[str, Usage] = defaultdict(Usage)
        self.by_sample: dict[str, Usage] = defaultdict(Usage)

    def record(
        self, usage: Usage, *, scope: str | None = None, sample_id: str | None = None
    ) -> None:
        with self._lock:
            self.total = self.total + usage
            if scope is not None:
                self.by_scope[scope] = self.by_scope[scope] + usage
            if sample_id is not None:
                self.by_sample[sample_id] = self.by_sample[sample_id] + usage

    def forget_sample(self, sample_id: str) -> None:
        """Drop a sample's entry once it is recorded elsewhere (a run's store), so a long
        run's ledger does not grow with the dataset; totals are kept."""
        with self._lock:
            self.by_sample.pop(sample_id, None)
