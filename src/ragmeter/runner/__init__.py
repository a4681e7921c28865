"""Running metrics over datasets."""

from ragmeter.runner._evaluate import evaluate

__all__ = ["evaluate"]
