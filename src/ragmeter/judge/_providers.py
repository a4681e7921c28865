"""The endpoint judges by provider name: each provider registers itself where it is defined
(:func:`register_provider`, one line at the end of its module), and the judge is chosen here
by the name a settings file or the environment gives, or by the type of its config.

A new provider is one module: its config (an :class:`~ragmeter._services.EndpointConfig`
with ``from_env`` and ``from_file``), its judge, and the line that registers them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragmeter._services import Cache, UsageLedger

if TYPE_CHECKING:
    from ragmeter.judge._base import Judge

#: The provider of every config no other provider claims: OpenAI-compatible endpoints (and
#: their presets, ``provider = "deepseek"`` and the like, which its config resolves).
DEFAULT_PROVIDER = "openai-compatible"


@dataclass(frozen=True)
class Provider:
    """A provider: its name, its config class, and how its judge is made from a config."""

    name: str
    config: type[Any]
    judge: Callable[..., Judge]

    def make(self, config: Any, *, cache: Cache, ledger: UsageLedger | None) -> Judge:
        return self.judge(config, cache=cache, ledger=ledger)


_PROVIDERS: dict[str, Provider] = {}


def register_provider(name: str, config: type[Any], judge: Callable[..., Judge]) -> None:
    """Make provider ``name`` known: ``config`` its config class (read with ``from_env`` /
    ``from_file``), ``judge`` what makes its judge (``judge(config, cache=, ledger=)``)."""
    _PROVIDERS[name] = Provider(name, config, judge)


def provider_named(name: str | None) -> Provider:
    """The provider ``name`` names; the OpenAI-compatible one for any other name (its
    presets) or none."""
    found = _PROVIDERS.get(name) if name is not None else None
    return found or _PROVIDERS[DEFAULT_PROVIDER]


def provider_of(config: object) -> Provider:
    """The provider whose config ``config`` is; the OpenAI-compatible one for any other."""
    for provider in _PROVIDERS.values():
        if provider.name != DEFAULT_PROVIDER and isinstance(config, provider.config):
            return provider
    return _PROVIDERS[DEFAULT_PROVIDER]
