"""Steps: the shared, batched judge work that metrics are built from. Only steps call the judge."""

from ragmeter.steps._facts import (
    ContextVerdict,
    Entity,
    Facts,
    Need,
    Statement,
    Support,
)
from ragmeter.steps._runner import StepError, StepRunner, context_columns

__all__ = [
    "ContextVerdict",
    "Entity",
    "Facts",
    "Need",
    "Statement",
    "StepError",
    "StepRunner",
    "Support",
    "context_columns",
]
