"""The ``ragmeter`` command line."""

# isort: off
# Importing a module registers its commands; `ragmeter --help` lists them in this order.
from ragmeter.cli import _eval, _run_commands  # noqa: F401
from ragmeter.cli import _align, _generate, _judging, _runs, _serve  # noqa: F401
from ragmeter.cli import _judge_serve  # noqa: F401
from ragmeter.cli import _mine  # noqa: F401
from ragmeter.cli import _import  # noqa: F401
from ragmeter.cli import _labels  # noqa: F401
from ragmeter.cli import _monitor  # noqa: F401
from ragmeter.cli import _calibrate  # noqa: F401
from ragmeter.cli._app import app, main
from ragmeter.cli._exit import ExitCode

# isort: on

__all__ = ["ExitCode", "app", "main"]
