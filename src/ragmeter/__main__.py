"""``python -m ragmeter``: the command line."""

from ragmeter.cli import main

main()
