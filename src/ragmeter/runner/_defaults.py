"""The runner's defaults that the command line shows in ``--help``: a module that imports
nothing, so that ``ragmeter --help`` need not load the runner."""

#: Samples in flight at once. Larger than the judge's own request limit (16 by default), so
#: the judge always has queued work while some samples wait on their second step.
DEFAULT_CONCURRENCY = 64
