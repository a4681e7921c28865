"""The values every service shares: chat messages in, usage out."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class Usage:
    """Usage of a judge or embeddings endpoint. Cached calls are counted apart and cost
    nothing."""

    calls: int = 0
    cached_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Calls whose token counts were estimated because the endpoint returned none.
    estimated_calls: int = 0
    retries: int = 0
    latency_s: float = 0.0
    cost: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            cached_calls=self.cached_calls + other.cached_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            estimated_calls=self.estimated_calls + other.estimated_calls,
            retries=self.retries + other.retries,
            latency_s=self.latency_s + other.latency_s,
            cost=self.cost + other.cost,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, float | int]:
        return {
            "calls": self.calls,
            "cached_calls": self.cached_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "estimated_calls": self.estimated_calls,
            "retries": self.retries,
            "latency_s": round(self.latency_s, 6),
            "cost": self.cost,
        }
