"""A throwaway local Ray cluster for tests and benchmarks of the Ray backend: ``ray start
--head`` on 127.0.0.1, started by :func:`local_ray_cluster` and stopped (every process it
started) when the block ends; :func:`join_ray_node` adds a node with an environment of its own
(e.g. its own judge endpoint)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

START_TIMEOUT_S = 90.0
#: A throwaway cluster on 127.0.0.1 needs no token (and one left in ~/.ray by another
#: cluster would lock this process out of it).
AUTH_MODE = "disabled"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", port)) == 0


class Node:
    """One ``ray start --block`` process (a head, or a node joining one), stopped by
    signalling its process group."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [str(Path(sys.executable).with_name("ray")), "start", "--block", *args],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )

    def stop(self, grace_s: float = 0.0) -> None:
        """Stop every process the node started (its process group): after ``grace_s`` seconds
        of SIGTERM, in which a joined node tells the head it leaves, else at once."""
        if grace_s and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=grace_s)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        if self.process.stderr is not None:
            self.process.stderr.close()


def _env(extra: dict[str, str] | None, python_path: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if python_path:  # e.g. for the workers to import a test suite's modules
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [python_path, env.get("PYTHONPATH")]))
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    env["RAY_AUTH_MODE"] = AUTH_MODE
    env.pop("RAY_ADDRESS", None)
    env.update(extra or {})
    return env


@contextlib.contextmanager
def local_ray_cluster(
    num_cpus: int = 2, env: dict[str, str] | None = None, python_path: str | None = None
) -> Iterator[str]:
    """A head node on 127.0.0.1 with ``num_cpus`` CPUs and ``env`` added to its (and its
    workers') environment; yields its address, stops it after."""
    port = _free_port()
    # Ray's socket paths must stay short: a temp dir of its own right under /tmp.
    temp_dir = tempfile.mkdtemp(prefix="rgm-ray-", dir="/tmp")
    args = [
        "--head",
        f"--port={port}",
        "--node-ip-address=127.0.0.1",
        f"--num-cpus={num_cpus}",
        "--include-dashboard=false",
        "--object-store-memory=80000000",
        "--disable-usage-stats",
        f"--temp-dir={temp_dir}",
    ]
    head = Node(args, _env(env, python_path))
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while not _listening(port):
            if head.process.poll() is not None:
                err = head.process.stderr.read().decode() if head.process.stderr else ""
                raise RuntimeError(f"ray start --head exited: {err[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Ray head did not listen within {START_TIMEOUT_S} s")
            time.sleep(0.2)
        before = os.environ.get("RAY_AUTH_MODE")
        os.environ["RAY_AUTH_MODE"] = AUTH_MODE  # this process connects to it as a driver
        try:
            yield f"127.0.0.1:{port}"
        finally:
            if before is None:
                os.environ.pop("RAY_AUTH_MODE", None)
            else:
                os.environ["RAY_AUTH_MODE"] = before
    finally:
        with contextlib.suppress(ImportError):
            import ray

            ray.shutdown()
        head.stop()
        shutil.rmtree(temp_dir, ignore_errors=True)


def join_ray_node(
    address: str, num_cpus: int, env: dict[str, str], python_path: str | None = None
) -> Node:
    """A second node (same machine) joining the cluster at ``address``, with its own
    environment (e.g. its own endpoint URL)."""
    return Node(
        [
            f"--address={address}",
            "--node-ip-address=127.0.0.1",
            f"--num-cpus={num_cpus}",
            "--object-store-memory=80000000",
            "--disable-usage-stats",
        ],
        _env(env, python_path),
    )
