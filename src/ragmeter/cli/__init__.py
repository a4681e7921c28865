"""The ``ragmeter`` command line."""

from ragmeter.cli import _generate  # noqa: F401 - registers `ragmeter generate`
from ragmeter.cli._app import app, main

__all__ = ["app", "main"]
