"""Usage accounting: per call, per metric, per sample and per run."""

from __future__ import annotations

import re
import threading
from collections import defaultdict

from ragmeter._services._types import Usage

_CJK = re.compile("[\u3400-\u9fff\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: CJK characters count one each, other text ~4 chars a token.

    >>> estimate_tokens("什么是RAG"), estimate_tokens("retrieval augmented generation")
    (4, 8)
    """
    cjk = len(_CJK.findall(text))
    other = len(text) - cjk
    return cjk + (other + 3) // 4


class UsageLedger:
    """Thread-safe running totals, by scope (e.g. metric or step name) and by sample."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.total = Usage()
        self.by_scope: dict[str, Usage] = defaultdict(Usage)
        self.by_sample: dict[str, Usage] = defaultdict(Usage)
        #: Calls under way, per sample: the usage objects they fill as requests go out.
        self._live: dict[str, list[Usage]] = defaultdict(list)

    def record(
        self, usage: Usage, *, scope: str | None = None, sample_id: str | None = None
    ) -> None:
        with self._lock:
            self.total = self.total + usage
            if scope is not None:
                self.by_scope[scope] = self.by_scope[scope] + usage
            if sample_id is not None:
                self.by_sample[sample_id] = self.by_sample[sample_id] + usage

    def forget_sample(self, sample_id: str) -> None:
        """Drop a sample's entry once it is recorded elsewhere (a run's store), so a long
        run's ledger does not grow with the dataset; totals are kept."""
        with self._lock:
            self.by_sample.pop(sample_id, None)

    def begin_call(self, usage: Usage, sample_id: str | None) -> None:
        """``usage`` belongs to a call under way for ``sample_id``: it counts in
        :meth:`sample_usage` as its requests go out (a kill mid-call still counts them)."""
        if sample_id is not None:
            with self._lock:
                self._live[sample_id].append(usage)

    def end_call(self, usage: Usage, sample_id: str | None) -> None:
        """The call is over (its usage is :meth:`record`-ed, or dropped when it sent nothing)."""
        if sample_id is None:
            return
        with self._lock:
            live = self._live.get(sample_id)
            if live is None:
                return
            live[:] = [u for u in live if u is not usage]
            if not live:
                del self._live[sample_id]

    def sample_usage(self, sample_id: str) -> Usage:
        """A sample's usage so far: its finished calls and what its calls under way sent."""
        with self._lock:
            recorded = self.by_sample.get(sample_id)
            live = self._live.get(sample_id)
            if not live:
                # recorded entries are replaced, never changed in place: safe to hand out
                return recorded if recorded is not None else Usage()
            used = recorded if recorded is not None else live[0]
            for part in live if recorded is not None else live[1:]:
                used = used + part
            # a lone live usage keeps growing as its requests go out: a copy of it now
            return used if used is not live[0] else used + Usage()
