"""The ``ragmeter`` command line."""

from ragmeter.cli import _align, _generate, _runs, _serve  # noqa: F401 - register the commands
from ragmeter.cli._app import app, main

__all__ = ["app", "main"]
