"""The ``ragmeter`` command line."""

from ragmeter.cli._app import app, main

__all__ = ["app", "main"]
