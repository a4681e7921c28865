"""The ``ragmeter`` command line."""

from ragmeter.cli import _generate, _runs  # noqa: F401 - register `generate` and `runs`
from ragmeter.cli._app import app, main

__all__ = ["app", "main"]
