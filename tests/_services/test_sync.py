import asyncio
import threading

import pytest

from ragmeter.metrics import run_sync


async def _thread_name() -> str:
    return threading.current_thread().name


def test_without_a_running_loop_it_runs_here():
    assert run_sync(_thread_name()) == threading.current_thread().name


def test_inside_a_running_loop_it_runs_on_a_worker_thread():
    async def cell() -> str:  # a notebook cell: a loop is already running
        return run_sync(_thread_name())

    assert asyncio.run(cell()) == "ragmeter-sync"


@pytest.mark.parametrize("in_loop", [False, True])
def test_errors_reach_the_caller(in_loop: bool):
    async def fails() -> None:
        raise KeyError("boom")

    async def cell() -> None:
        run_sync(fails())

    with pytest.raises(KeyError, match="boom"):
        if in_loop:
            asyncio.run(cell())
        else:
            run_sync(fails())


def test_one_run_sync_everywhere():
    from ragmeter.embed import _base as embed_base
    from ragmeter.metrics import llm

    assert llm.run_sync is run_sync
    assert embed_base.run_sync is run_sync
