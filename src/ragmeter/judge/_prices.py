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
    # reasoning models: their hidden reasoning is billed as completion tokens
    "gpt-5": Price(input_per_million=1.25, output_per_million=10.00),
    "gpt-5-mini": Price(input_per_million=0.25, output_per_million=2.00),
    "gpt-5-nano": Price(input_per_million=0.05, output_per_million=0.40),
    "gpt-5-pro": Price(input_per_million=15.00, output_per_million=120.00),
    "o3": Price(input_per_million=2.00, output_per_million=8.00),
    "o3-pro": Price(input_per_million=20.00, output_per_million=80.00),
    "o3-mini": Price(input_per_million=1.10, output_per_million=4.40),
    "o4-mini": Price(input_per_million=1.10, output_per_million=4.40),
    "o1": Price(input_per_million=15.00, output_per_million=60.00),
    "o1-pro": Price(input_per_million=150.00, output_per_million=600.00),
    "o1-mini": Price(input_per_million=1.10, output_per_million=4.40),
    "gemini-2.5-flash": Price(input_per_million=0.30, output_per_million=2.50),
    "gemini-2.5-flash-lite": Price(input_per_million=0.10, output_per_million=0.40),
    "gemini-2.5-pro": Price(input_per_million=1.25, output_per_million=10.00),
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
        if matches:
            return self._prices[max(matches, key=len)]
        # a router's "openai/o4-mini" or "google/gemini-2.5-flash": the model's own price
        vendor, slash, name = model.partition("/")
        return self.price_of(name) if slash and vendor and name else None
