"""Live quality: score new production samples in windows, compare each to a baseline, alert
on drops.

:class:`Monitor` follows a growing JSONL file (or a folder of them): new samples are scored
with reference-free metrics in windows of N samples or of a time span, each window is
stored as a run (so ``ragmeter runs list`` and the dashboard's trends show it), its means
come with bootstrap CIs, and each metric is compared with a baseline run by an unpaired
test; a significant drop is an alert (a log line, a webhook). Its state folder lets a
restart lose nothing and score nothing twice. :func:`monitor` is one pass (``--once``).
"""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter.monitor._alerts import post_webhook as post_webhook
    from ragmeter.monitor._monitor import DEFAULT_METRICS as DEFAULT_METRICS
    from ragmeter.monitor._monitor import Monitor as Monitor
    from ragmeter.monitor._monitor import PollReport as PollReport
    from ragmeter.monitor._monitor import Window as Window
    from ragmeter.monitor._monitor import WindowMetric as WindowMetric
    from ragmeter.monitor._monitor import WindowSpec as WindowSpec
    from ragmeter.monitor._monitor import monitor as monitor

_lazy.attach(__name__, __file__)
