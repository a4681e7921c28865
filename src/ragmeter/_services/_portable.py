"""Services that travel to another process (a Ray worker) by pickling, less what is local."""

from __future__ import annotations

from typing import Any


class Portable:
    """A judge or embeddings sent to another process: the copy is the same service without
    the attributes named in :attr:`_process_local` (a cache handle, a usage ledger, HTTP
    clients, locks), which belong to the process that made them; :meth:`_reopen` makes them
    afresh in the copy (a subclass adds its own names and extends ``_reopen``)."""

    #: Attributes a copy for another process leaves out and :meth:`_reopen` makes again.
    _process_local: tuple[str, ...] = ()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        for name in self._process_local:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reopen()

    def _reopen(self) -> None:
        """Make, in a copy received from another process, what ``_process_local`` left out
        (subclasses that add names call ``super()._reopen()``)."""
