import asyncio
import threading
import time

import pytest

from ragmeter.judge import Limiter, LimitSettings, limiter_for


def test_concurrency_never_exceeds_the_limit():
    limiter = Limiter(LimitSettings(max_concurrency=3))
    active = 0
    peak = 0

    async def work():
        nonlocal active, peak
        async with limiter.slot():
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

    async def main():
        await asyncio.gather(*(work() for _ in range(20)))

    asyncio.run(main())
    assert peak == 3
    assert limiter.max_in_flight == 3


def test_the_limit_is_shared_across_event_loops_in_threads():
    limiter = Limiter(LimitSettings(max_concurrency=2))
    active = 0
    peak = 0
    lock = threading.Lock()

    async def work():
        nonlocal active, peak
        async with limiter.slot():
            with lock:
                active += 1
                peak = max(peak, active)
            await asyncio.sleep(0.02)
            with lock:
                active -= 1

    async def many():
        await asyncio.wait_for(asyncio.gather(*(work() for _ in range(5))), 10)

    def run_loop():
        asyncio.run(many())

    threads = [threading.Thread(target=run_loop) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert peak == 2


def test_requests_per_minute_are_respected():
    # 600 rpm = 10/s with a burst of 10: 30 requests need at least ~2 s.
    limiter = Limiter(LimitSettings(max_concurrency=50, requests_per_minute=600))
    stamps: list[float] = []

    async def work():
        async with limiter.slot():
            stamps.append(time.monotonic())

    async def main():
        await asyncio.gather(*(work() for _ in range(30)))

    asyncio.run(main())
    stamps.sort()
    elapsed = stamps[-1] - stamps[0]
    assert elapsed >= 1.9
    # and in any 1-second window there are at most burst + rate = 20 starts
    assert max(sum(1 for t in stamps if s <= t < s + 1.0) for s in stamps) <= 20


def test_the_token_budget_reserves_in_order(monkeypatch):
    # 6000 tokens a minute: 100 a second, at most 100 saved up. Each caller reserves its
    # tokens at once and waits its turn: the waits are what the limiter sleeps.
    limiter = Limiter(LimitSettings(max_concurrency=10, tokens_per_minute=6000))
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async def main():
        for tokens in (100, 50, 50):
            await limiter.acquire(tokens)
            limiter.release()

    monkeypatch.setattr(asyncio, "sleep", sleep)
    asyncio.run(main())
    assert waits == [pytest.approx(0.5, abs=0.02), pytest.approx(1.0, abs=0.02)]  # 100: none


def test_cancelled_waiter_gives_its_slot_back():
    limiter = Limiter(LimitSettings(max_concurrency=1))

    async def main():
        async with limiter.slot():
            waiter = asyncio.create_task(_hold(limiter))
            await asyncio.sleep(0.01)
            waiter.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiter
        # the slot is free again
        await asyncio.wait_for(_hold(limiter), 1)

    asyncio.run(main())


async def _hold(limiter):
    async with limiter.slot():
        await asyncio.sleep(0)


def test_limiters_are_shared_per_endpoint():
    settings = LimitSettings(max_concurrency=4)
    assert limiter_for("u|m", settings) is limiter_for("u|m", settings)
    assert limiter_for("u|m", settings) is not limiter_for("u|other", settings)
