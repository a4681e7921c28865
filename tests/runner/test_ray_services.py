"""The Ray backend's shared services as plain objects (no cluster): the cluster-wide limiter
hands back the slots of a worker that died, even those granted after it died."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from ragmeter._services import share_limits  # private: how a Ray worker shares limits
from ragmeter.judge import Limiter, LimitSettings, limiter_for
from ragmeter.runner._ray import LimitService  # private: the cluster limiter, no cluster

TWO = LimitSettings(max_concurrency=2)


def test_a_dead_workers_slots_are_handed_back() -> None:
    async def scenario() -> list[int]:
        service = LimitService()
        await service.acquire("endpoint", TWO, "w1", 0)
        await service.acquire("endpoint", TWO, "w1", 0)
        # Both slots held by w1: w2 waits until w1 is declared dead.
        waiting = asyncio.create_task(service.acquire("endpoint", TWO, "w2", 0))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        released = await service.release_worker("w1")
        await asyncio.wait_for(waiting, 1)
        return [released, (await service.max_in_flight())["endpoint"]]

    assert asyncio.run(scenario()) == [2, 2]


def test_a_slot_granted_to_a_worker_after_it_died_goes_back_at_once() -> None:
    async def scenario() -> bool:
        service = LimitService()
        await service.acquire("endpoint", TWO, "w1", 0)
        await service.acquire("endpoint", TWO, "w1", 0)
        late = asyncio.create_task(service.acquire("endpoint", TWO, "w2", 0))
        await asyncio.sleep(0.01)
        await service.release_worker("w2")  # w2 dies while its request waits
        await service.release("endpoint", "w1")  # ... which is then granted to it
        await asyncio.wait_for(late, 1)
        # That slot went straight back: w3 gets one without waiting.
        await asyncio.wait_for(service.acquire("endpoint", TWO, "w3", 0), 1)
        return True

    assert asyncio.run(scenario())


def test_a_release_after_the_worker_was_handed_back_is_not_counted_twice() -> None:
    async def scenario() -> None:
        service = LimitService()
        await service.acquire("endpoint", TWO, "w1", 0)
        await service.release_worker("w1")
        await service.release("endpoint", "w1")  # late: already handed back
        await service.acquire("endpoint", TWO, "w2", 0)
        await service.acquire("endpoint", TWO, "w2", 0)
        third = asyncio.create_task(service.acquire("endpoint", TWO, "w2", 0))
        await asyncio.sleep(0.01)
        assert not third.done()  # 2 slots, not 3
        third.cancel()

    asyncio.run(scenario())


class _Counting(Limiter):
    made: ClassVar[list[str]] = []

    def __init__(self, identity: str, settings: LimitSettings) -> None:
        super().__init__(settings)
        self.made.append(identity)


def test_share_limits_gives_every_endpoint_of_the_process_the_factorys_limiter() -> None:
    share_limits(_Counting)
    try:
        limiter = limiter_for("https://x.example|m", TWO)
        assert isinstance(limiter, _Counting)
        assert limiter_for("https://x.example|m", TWO) is limiter  # one per endpoint
        assert _Counting.made == ["https://x.example|m"]
    finally:
        share_limits(None)
    assert type(limiter_for("https://x.example|m", TWO)) is Limiter


def test_the_breaker_of_an_endpoint_is_the_clusters() -> None:
    """Calls failing on several workers add up in the cluster's breaker; once it is open,
    every worker learns it with the next slot it takes, and the driver can ask for it."""
    settings = LimitSettings(max_concurrency=4, breaker_failures=3)

    async def scenario() -> tuple[list[str], tuple[str, float] | None, list[str]]:
        service = LimitService()
        assert await service.acquire("endpoint", settings, "w1", 0) is None  # closed
        for _worker in ("w1", "w2", "w1"):  # no worker alone saw 3 failures in a row
            await service.failed("endpoint", "gw", 2.0)
        opened = await service.open_breakers()
        state = await service.acquire("endpoint", settings, "w3", 0)
        other = LimitService()
        await other.acquire("endpoint", settings, "w1", 0)
        await other.failed("endpoint", "gw", 2.0)
        await other.failed("endpoint", "gw", 2.0)
        await other.succeeded("endpoint")  # an answer between: a blip, not an outage
        await other.failed("endpoint", "gw", 2.0)
        return opened, state, await other.open_breakers()

    opened, state, blip = asyncio.run(scenario())
    assert opened == ["no answer from gw for 2 s across 3 calls"]
    assert state is not None and state[0] == opened[0] and state[1] > 0
    assert blip == []
