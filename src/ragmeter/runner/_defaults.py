"""The runner's defaults that the command line shows in ``--help``: a module that imports
nothing, so that ``ragmeter --help`` need not load the runner."""

#: Samples in flight at once. Larger than the judge's own request limit (16 by default), so
#: the judge always has queued work while some samples wait on their second step.
DEFAULT_CONCURRENCY = 64
#: Seconds the first Ctrl-C (or SIGTERM) waits for the samples in flight to be answered and
#: recorded before the run stops (``interrupt_wait_s``, ``--interrupt-wait``).
DEFAULT_INTERRUPT_WAIT_S = 10.0
