"""A real local Ray cluster for the Ray backend's tests (``ray start --head`` on 127.0.0.1,
started by the tests and stopped after; see :mod:`ragmeter.testing._ray_cluster`).

Without Ray installed the tests skip, saying so, unless ``RAGMETER_REQUIRE_RAY=1`` (as in CI,
whose ``.ci/run`` installs the ``[ray]`` extra): then they fail.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragmeter.testing import Node, join_ray_node, local_ray_cluster

REQUIRE_VARIABLE = "RAGMETER_REQUIRE_RAY"
#: The workers import the tests' own modules (responders are pickled by reference).
ROOT = Path(__file__).resolve().parents[1]


def require_ray() -> None:
    """Skip (or fail, in CI) when Ray is not installed."""
    try:
        import ray  # noqa: F401
    except ImportError:
        message = "Ray is not installed: pip install -e '.[ray]'"
        if os.environ.get(REQUIRE_VARIABLE) == "1":
            pytest.fail(f"{message} ({REQUIRE_VARIABLE}=1)")
        pytest.skip(message)


@contextlib.contextmanager
def local_cluster(num_cpus: int = 2, env: dict[str, str] | None = None) -> Iterator[str]:
    require_ray()
    with local_ray_cluster(num_cpus, env, python_path=str(ROOT)) as address:
        yield address


def join_node(address: str, num_cpus: int, env: dict[str, str]) -> Node:
    return join_ray_node(address, num_cpus, env, python_path=str(ROOT))
