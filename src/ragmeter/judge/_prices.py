"""Judge model prices: defaults for common models, overridden by the user's figures."""

from __future__ import annotations

from collections.abc import Mapping

from ragmeter.judge._config import Price

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
