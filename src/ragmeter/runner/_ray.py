"""The Ray backend: a run's per-sample tasks on the workers of a Ray cluster.

The driver (the process calling :func:`ragmeter.evaluate`) keeps the run: it reads the
samples, decides what is missing, records every outcome the moment it comes back and writes
the run record, exactly as with the local backend. Workers (Ray actors, one CPU each by
default) receive a copy of the judges and embeddings and run :func:`run_task` on the tasks
they are sent, many at once on their own event loop. Two services keep the workers one run:

* **limits**: one :class:`LimitService` actor holds each endpoint's limiter (concurrency,
  requests and tokens per minute); a worker's request waits for a slot there, so N workers
  together keep the limits one process would (with ``local_endpoint``, each node's endpoint has
  its own limits);
* **cache**: one :class:`CacheService` actor, on the driver's node, holds the judges' and the
  embeddings' caches (the SQLite file of the run's judge cache is opened there, and only
  there): an answer paid for by one worker is never paid for again by another, nor by a run
  resumed after the driver was killed.

A worker that dies is replaced and its tasks sent again: what it had paid for is in the cache,
its slots are handed back. Nothing a worker does is recorded by it: the driver records.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar, cast

from ragmeter._services import (
    Breaker,
    Cache,
    Limiter,
    LimitSettings,
    NullCache,
    Usage,
    share_limits,
)
from ragmeter.embed import Embeddings
from ragmeter.judge import Judge
from ragmeter.runner._judged import JudgedSetup
from ragmeter.runner._task import SampleTask, TaskOutcome, run_task

T = TypeVar("T")

#: Seconds the cluster has to start the workers before the run gives up with an error.
WORKER_START_TIMEOUT_S = 180.0
#: Seconds a call to the limit or cache service may take before it counts as lost.
SERVICE_TIMEOUT_S = 120.0
INSTALL_HINT = "the Ray backend needs Ray: pip install 'ragmeter[ray]'"


class RayBackendError(RuntimeError):
    """The Ray backend could not run (Ray missing, the cluster unreachable or too small)."""


@dataclass(frozen=True)
class RayBackend:
    """Run per-sample tasks on a Ray cluster (``evaluate(..., backend=RayBackend(...))``,
    ``ragmeter eval --backend ray``).

    ``address``: the cluster (``"auto"``, ``"HOST:6379"``, ``"ray://HOST:10001"``); ``None``
    connects to ``RAY_ADDRESS`` or, without it, starts a cluster on this machine. ``workers``:
    how many worker actors (default: the cluster's CPUs / ``worker_cpus``, at least 1), each
    with ``worker_cpus`` CPUs. ``local_endpoint``: a self-hosted judge on every node (e.g.
    vLLM on ``http://127.0.0.1:8000/v1``): each worker sends its judge requests to this URL as
    seen from its own node (``$VARS`` are expanded there, from the environment the node's
    Ray was started with), under that node's own limits.

    >>> RayBackend(address="auto", workers=8).describe()["workers"]
    8
    """

    address: str | None = None
    workers: int | None = None
    worker_cpus: float = 1.0
    local_endpoint: str | None = None

    @classmethod
    def of(cls, backend: str | RayBackend) -> RayBackend | None:
        """The cluster a ``backend`` argument names: ``"local"`` (``None``: this process),
        ``"ray"`` (the defaults) or a ``RayBackend``; anything else is a ``ValueError``.

        >>> RayBackend.of("local") is None, RayBackend.of("ray")
        (True, RayBackend(address=None, workers=None, worker_cpus=1.0, local_endpoint=None))
        """
        if isinstance(backend, RayBackend):
            return backend
        if backend == "local":
            return None
        if backend == "ray":
            return cls()
        raise ValueError(f"backend must be 'local', 'ray' or a RayBackend, got {backend!r}")

    def describe(self) -> dict[str, Any]:
        return {"kind": "ray", **asdict(self)}

    def start(self, services: Any) -> WorkerPool:
        """Workers holding a copy of ``services`` (judges and embeddings, or a
        :class:`JudgedSetup`), ready for :meth:`WorkerPool.call`; :meth:`WorkerPool.close`
        them when done."""
        return WorkerPool(self, services)


def _ray() -> Any:
    try:
        import ray
    except ImportError as error:
        raise RayBackendError(INSTALL_HINT) from error
    return ray


def connect(address: str | None) -> Any:
    """The ``ray`` module, connected to the cluster at ``address`` (once per process)."""
    ray = _ray()
    if ray.is_initialized():
        current = ray.get_runtime_context().gcs_address
        if not _same_cluster(address, current):
            raise RayBackendError(
                f"this process is already connected to the Ray cluster at {current}, not "
                f"{address}: one process talks to one cluster (ray.shutdown() first)"
            )
    else:
        try:
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                logging_level="WARNING",
                configure_logging=False,
            )
        except (ConnectionError, RuntimeError, ValueError) as error:
            where = address or os.environ.get("RAY_ADDRESS") or "a new local cluster"
            raise RayBackendError(
                f"could not connect to the Ray cluster at {where}: {error}. Start one "
                "(`ray start --head`) and pass its address (--ray-address HOST:6379), or "
                "leave the address out to start one on this machine"
            ) from error
    return ray


def _same_cluster(address: str | None, current: str) -> bool:
    """Whether ``address`` names the cluster this process is connected to (at ``current``,
    which Ray reports with the node's IP: only the port can be compared).

    >>> _same_cluster("127.0.0.1:6379", "10.0.0.5:6379"), _same_cluster("h:6380", "h:6379")
    (True, False)
    """
    if address in (None, "auto") or address.startswith("ray://"):
        return True
    return address.rsplit(":", 1)[-1] == current.rsplit(":", 1)[-1]


# -- the cluster's shared services --------------------------------------------------------


class LimitService:
    """Every endpoint's limiter for the whole cluster (an async Ray actor). A slot is held
    in the name of a worker, so the slots of a worker that died can be handed back."""

    def __init__(self) -> None:
        self._limiters: dict[str, Limiter] = {}
        self._held: dict[str, dict[str, int]] = {}  # worker -> endpoint -> slots held
        self._gone: set[str] = set()  # workers that died: a slot granted to one goes back

    def _limiter(self, key: str, settings: LimitSettings) -> Limiter:
        limiter = self._limiters.get(key)
        if limiter is None or limiter.settings != settings:
            limiter = self._limiters[key] = Limiter(settings)
        return limiter

    async def acquire(
        self, key: str, settings: LimitSettings, worker: str, estimated_tokens: int
    ) -> tuple[str, float] | None:
        """Take a slot; the endpoint's breaker state (:meth:`Breaker.state`) comes back with
        it, so the worker does not send while the cluster's breaker is open."""
        limiter = self._limiter(key, settings)
        await limiter.acquire(estimated_tokens)
        if worker in self._gone:  # it died while waiting: nobody will give this one back
            limiter.release()
            return None
        held = self._held.setdefault(worker, {})
        held[key] = held.get(key, 0) + 1
        return limiter.breaker.state()

    async def trip(self, key: str, reason: str, for_s: float) -> None:
        limiter = self._limiters.get(key)
        if limiter is not None:
            limiter.breaker.trip(reason, for_s)

    async def failed(self, key: str, where: str, elapsed_s: float) -> None:
        """A worker's call failed without an answer, ``elapsed_s`` after it started (clocks
        of other nodes are not compared)."""
        limiter = self._limiters.get(key)
        if limiter is not None:
            limiter.breaker.failed(where, time.monotonic() - elapsed_s)

    async def succeeded(self, key: str) -> None:
        limiter = self._limiters.get(key)
        if limiter is not None:
            limiter.breaker.succeeded()

    async def open_breakers(self) -> list[str]:
        """Why each open breaker of the cluster's endpoints is open."""
        found = (limiter.breaker.reason for limiter in self._limiters.values())
        return [reason for reason in found if reason is not None]

    async def release(self, key: str, worker: str) -> None:
        held = self._held.get(worker, {})
        if held.get(key, 0) > 0:  # not already handed back with its worker
            held[key] -= 1
            self._limiters[key].release()

    async def settle_tokens(self, key: str, estimated: int, actual: int) -> None:
        limiter = self._limiters.get(key)
        if limiter is not None:
            limiter.settle_tokens(estimated, actual)

    async def release_worker(self, worker: str) -> int:
        """Hand back every slot a (dead) worker held; how many."""
        self._gone.add(worker)
        released = 0
        for key, count in self._held.pop(worker, {}).items():
            for _ in range(count):
                self._limiters[key].release()
            released += count
        return released

    async def max_in_flight(self) -> dict[str, int]:
        return {key: limiter.max_in_flight for key, limiter in self._limiters.items()}


class CacheService:
    """The run's caches for the whole cluster (a Ray actor on the driver's node): the
    driver's own cache objects, received as copies (a SQLite cache opens the same file)."""

    def __init__(self, caches: list[Cache]) -> None:
        self._caches = caches

    def get(self, slot: int, key: str) -> dict[str, Any] | None:
        return self._caches[slot].get(key)

    def get_many(self, slot: int, keys: list[str]) -> list[dict[str, Any] | None]:
        return [self._caches[slot].get(key) for key in keys]

    def put(self, slot: int, key: str, value: dict[str, Any]) -> None:
        self._caches[slot].put(key, value)

    def put_many(self, slot: int, items: list[tuple[str, dict[str, Any]]]) -> None:
        for key, value in items:
            self._caches[slot].put(key, value)

    def close(self) -> None:
        for cache in self._caches:
            cache.close()


class _RemoteCache(Cache):
    """A worker's handle on one of the :class:`CacheService`'s caches."""

    def __init__(self, service: Any, slot: int) -> None:
        self._service = service
        self._slot = slot

    def get(self, key: str) -> dict[str, Any] | None:
        found = _ray().get(self._service.get.remote(self._slot, key), timeout=SERVICE_TIMEOUT_S)
        return cast("dict[str, Any] | None", found)

    def put(self, key: str, value: dict[str, Any]) -> None:
        # Waited for: an answer is in the cache before its sample's outcome goes back, so a
        # run resumed after any kill finds every answer it recorded.
        _ray().get(self._service.put.remote(self._slot, key, value), timeout=SERVICE_TIMEOUT_S)

    # What the judges and embeddings use: the worker's event loop goes on meanwhile.
    async def aget(self, key: str) -> dict[str, Any] | None:
        found = await asyncio.wait_for(self._service.get.remote(self._slot, key), SERVICE_TIMEOUT_S)
        return cast("dict[str, Any] | None", found)

    async def aget_many(self, keys: Sequence[str]) -> list[dict[str, Any] | None]:
        found: list[dict[str, Any] | None] = await asyncio.wait_for(
            self._service.get_many.remote(self._slot, list(keys)), SERVICE_TIMEOUT_S
        )
        return found

    async def aput(self, key: str, value: dict[str, Any]) -> None:
        await asyncio.wait_for(self._service.put.remote(self._slot, key, value), SERVICE_TIMEOUT_S)

    async def aput_many(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        await asyncio.wait_for(
            self._service.put_many.remote(self._slot, list(items)), SERVICE_TIMEOUT_S
        )


class _SharedBreaker(Breaker):
    """A worker's breaker: what its calls meet goes to the :class:`LimitService`'s breaker
    of the endpoint, which opens for the whole cluster; it learns the cluster's state with
    each slot it takes (:meth:`_RemoteLimiter.acquire`)."""

    def __init__(self, service: Any, key: str, settings: LimitSettings) -> None:
        super().__init__(settings.breaker_failures, settings.breaker_silence_s)
        self._service = service
        self._key = key

    def trip(self, reason: str, for_s: float) -> None:
        super().trip(reason, for_s)
        self._service.trip.remote(self._key, reason, for_s)

    def failed(self, where: str, started: float) -> None:
        self._service.failed.remote(self._key, where, time.monotonic() - started)

    def succeeded(self) -> None:
        self._service.succeeded.remote(self._key)

    def mirror(self, state: tuple[str, float] | None) -> None:
        """Open as the cluster's breaker is (``state``: :meth:`Breaker.state`)."""
        if state is not None:
            super().trip(*state)


class _RemoteLimiter(Limiter):
    """A worker's limiter: each slot is taken from the :class:`LimitService`."""

    def __init__(self, service: Any, key: str, settings: LimitSettings, worker: str) -> None:
        super().__init__(settings)
        self._service = service
        self._key = key
        self._worker = worker
        self.breaker: _SharedBreaker = _SharedBreaker(service, key, settings)

    async def acquire(self, estimated_tokens: int = 0) -> None:
        taken = self._service.acquire.remote(
            self._key, self.settings, self._worker, estimated_tokens
        )
        try:
            self.breaker.mirror(await taken)
        except asyncio.CancelledError:
            # The service may still grant it: give it back once it is granted.
            taken.future().add_done_callback(lambda _granted: self.release())
            raise

    def release(self) -> None:
        self._service.release.remote(self._key, self._worker)

    def settle_tokens(self, estimated: int, actual: int) -> None:
        self._service.settle_tokens.remote(self._key, estimated, actual)


def _services_of(setup: Any) -> list[Judge | Embeddings]:
    """The distinct judges and embeddings of ``setup`` (a :class:`JudgedSetup`, a judge or
    embeddings, or a tuple of them), in a fixed order."""
    if isinstance(setup, JudgedSetup):
        listed: list[Any] = [*setup.judges.values(), *setup.embeddings.values()]
    elif isinstance(setup, tuple | list):
        listed = list(setup)
    else:
        listed = [setup]
    # Each once, where it first comes (an object listed again is the same object).
    return list({id(s): s for s in listed if isinstance(s, Judge | Embeddings)}.values())


async def _run_sample(setup: JudgedSetup, task: SampleTask) -> TaskOutcome:
    return await run_task(task, setup)


class Worker:
    """A Ray actor that runs tasks with its own copy of the run's judges and embeddings, on
    its own event loop (in a thread, so the synchronous cache handle may wait)."""

    def __init__(
        self,
        payload: bytes,
        cache_slots: list[int | None],
        cache_service: Any,
        limit_service: Any,
        name: str,
        local_endpoint: str | None,
    ) -> None:
        import cloudpickle

        ray = _ray()
        node = ray.get_runtime_context().get_node_id()
        per_node = local_endpoint is not None

        def limiter(identity: str, settings: LimitSettings) -> Limiter:
            key = f"{identity}@{node}" if per_node else identity
            return _RemoteLimiter(limit_service, key, settings, name)

        share_limits(limiter)  # before the services are unpacked: their clients take limiters
        self.setup: Any = cloudpickle.loads(payload)
        self.services = _services_of(self.setup)
        if local_endpoint is not None:  # first: pointing a judge elsewhere reopens it
            url = os.path.expandvars(local_endpoint)
            for service in self.services:
                if isinstance(service, Judge):
                    _point_at(service, url)
        for service, slot in zip(self.services, cache_slots):
            service.cache = NullCache() if slot is None else _RemoteCache(cache_service, slot)
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="ragmeter-worker", daemon=True).start()

    def ready(self) -> None:
        """Answers once the actor is made (its constructor unpacked the services)."""

    def call(self, work: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> T:
        """``await work(services, *args)`` on this worker's loop (``work``: a module-level
        async function, sent by reference)."""
        return asyncio.run_coroutine_threadsafe(work(self.setup, *args), self.loop).result()

    def embedding_usage(self) -> list[Usage | None]:
        """What each embeddings (in :func:`_services_of` order; judges: None) spent here."""
        return [
            service.ledger.total if isinstance(service, Embeddings) else None
            for service in self.services
        ]


def _point_at(judge: Judge, url: str) -> None:
    """Send ``judge``'s requests to ``url`` (a node's own endpoint), if it has an endpoint."""
    config = getattr(judge, "config", None)
    if config is None or not hasattr(config, "base_url"):
        raise RayBackendError(
            f"local_endpoint needs a judge with an endpoint (OpenAI-compatible), not "
            f"{type(judge).__name__}"
        )
    judge.config = config.model_copy(update={"base_url": url})  # type: ignore[attr-defined]
    judge._reopen()


# -- the driver's side ----------------------------------------------------------------


@dataclass(eq=False)
class _Slot:
    """One worker actor and the tasks it is running."""

    name: str
    handle: Any
    running: int = 0
    dead: bool = False


class WorkerPool:
    """The driver's pool of workers: sends tasks to the least busy one, replaces a worker
    that dies and sends its tasks again."""

    def __init__(self, backend: RayBackend, setup: Any) -> None:
        import cloudpickle

        self.backend = backend
        self.setup = setup
        ray = self.ray = connect(backend.address)
        services = _services_of(setup)
        caches: dict[int, Cache] = {}
        for service in services:
            if not isinstance(service.cache, NullCache):  # nothing to share: no round trip
                caches.setdefault(id(service.cache), service.cache)
        slot_of = {key: index for index, key in enumerate(caches)}
        self.cache_slots = [slot_of.get(id(service.cache)) for service in services]
        try:
            self.payload = cloudpickle.dumps(setup)
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            here = ray.get_runtime_context().get_node_id()
            self.cache_service = (
                ray.remote(CacheService)
                .options(
                    num_cpus=0,
                    scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
                )
                .remote(list(caches.values()))
            )
        except (TypeError, AttributeError, ValueError) as error:
            raise RayBackendError(
                f"the run's judges, embeddings or metrics cannot be sent to Ray workers "
                f"({type(error).__name__}: {error}); use the local backend with this judge"
            ) from error
        self.limit_service = ray.remote(LimitService).options(num_cpus=0).remote()
        self.worker_class = ray.remote(Worker)
        self._next = 0
        count = backend.workers or max(
            1, int(ray.cluster_resources().get("CPU", 1) // backend.worker_cpus)
        )
        self.slots = [self._start() for _ in range(count)]
        self._wait_ready(self.slots)
        #: How many workers died and were replaced during the run.
        self.workers_lost = 0

    def _start(self) -> _Slot:
        name = f"ragmeter-worker-{self._next}"
        self._next += 1
        handle = self.worker_class.options(
            num_cpus=self.backend.worker_cpus,
            max_concurrency=1024,
            scheduling_strategy="SPREAD",
        ).remote(
            self.payload,
            self.cache_slots,
            self.cache_service,
            self.limit_service,
            name,
            self.backend.local_endpoint,
        )
        return _Slot(name, handle)

    def _wait_ready(self, slots: Sequence[_Slot]) -> None:
        ray = self.ray
        refs = [slot.handle.ready.remote() for slot in slots]
        try:
            ray.get(refs, timeout=WORKER_START_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError as error:
            raise RayBackendError(
                f"the Ray cluster did not start {len(slots)} workers of "
                f"{self.backend.worker_cpus} CPU within {WORKER_START_TIMEOUT_S:.0f} s: "
                "ask for fewer workers (--ray-workers) or add nodes"
            ) from error
        except ray.exceptions.RayActorError as error:
            raise RayBackendError(f"a Ray worker could not start: {error}") from error

    async def open_breakers(self) -> list[str]:
        """Why each open breaker of the cluster's endpoints is open (none: ``[]``)."""
        reasons: list[str] = await asyncio.wait_for(
            self.limit_service.open_breakers.remote(), SERVICE_TIMEOUT_S
        )
        return reasons

    async def run(self, task: SampleTask) -> TaskOutcome:
        """Run ``task`` on the least busy worker; again on another if that one dies."""
        return await self.call(_run_sample, task, what=f"sample {task.sample_id!r}")

    async def call(self, work: Callable[..., Coroutine[Any, Any, T]], *args: Any, what: str) -> T:
        """``await work(services, *args)`` on the least busy worker; again on another if that
        one dies (``work`` must be a module-level async function; ``what`` names the unit
        of work in the error if every try is lost)."""
        ray = self.ray
        lost = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)
        for _ in range(2 * len(self.slots) + 3):
            slot = min((s for s in self.slots if not s.dead), key=lambda s: s.running)
            slot.running += 1
            try:
                return cast(T, await slot.handle.call.remote(work, *args))
            except lost:
                await self._replace(slot)
            finally:
                slot.running -= 1
        raise RayBackendError(
            f"{what}: its workers kept dying; see the Ray logs (`ray logs`) for why"
        )

    async def _replace(self, slot: _Slot) -> None:
        if slot.dead:
            return
        slot.dead = True
        self.workers_lost += 1
        await self.limit_service.release_worker.remote(slot.name)
        fresh = self._start()
        self.slots[self.slots.index(slot)] = fresh
        await asyncio.to_thread(self._wait_ready, [fresh])

    async def close(self) -> None:
        """Add what the workers' embeddings spent to the driver's ledgers; stop the actors."""
        ray = self.ray
        services = _services_of(self.setup)
        alive = [slot for slot in self.slots if not slot.dead]
        spent = await asyncio.gather(
            *(
                asyncio.wait_for(slot.handle.embedding_usage.remote(), SERVICE_TIMEOUT_S)
                for slot in alive
            ),
            return_exceptions=True,
        )
        for worker_usage in spent:
            if isinstance(worker_usage, BaseException):
                continue  # a worker lost at the end: its embedding count with it
            for service, used in zip(services, worker_usage):
                if used and isinstance(service, Embeddings):
                    service.ledger.record(used)
        for slot in alive:
            ray.kill(slot.handle)
        # On failure the process ends below all the same: what it wrote is committed.
        with contextlib.suppress(TimeoutError, ray.exceptions.RayError):
            await asyncio.wait_for(self.cache_service.close.remote(), SERVICE_TIMEOUT_S)
        ray.kill(self.limit_service)
        ray.kill(self.cache_service)

    async def max_in_flight(self) -> dict[str, int]:
        return cast("dict[str, int]", await self.limit_service.max_in_flight.remote())
