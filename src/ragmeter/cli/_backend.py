"""``--backend`` and the ``--ray-*`` options of ``ragmeter eval`` and ``ragmeter generate``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from ragmeter.cli._groups import OptionGroup

if TYPE_CHECKING:
    from ragmeter.runner import RayBackend

BackendOption = Annotated[
    str,
    typer.Option(
        "--backend",
        help="Where the judge work runs: local (this process) or ray (a Ray cluster's "
        "workers, with the judge's limits and cache shared; see docs/scale.md).",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        help="The Ray cluster (HOST:6379, ray://HOST:10001 or auto); default RAY_ADDRESS, "
        "else a cluster started on this machine.",
    ),
]
RayWorkersOption = Annotated[
    int | None,
    typer.Option("--ray-workers", help="Ray worker actors (default: the cluster's CPUs)."),
]
RayLocalEndpointOption = Annotated[
    str | None,
    typer.Option(
        "--ray-local-endpoint",
        help="The judge's base URL on every node, e.g. a vLLM server on port 8000 of each: "
        "each worker asks its own node's, under that node's limits.",
    ),
]


def backend_from_options(
    backend: str, address: str | None, workers: int | None, local_endpoint: str | None
) -> str | RayBackend:
    """``--backend`` and the ``--ray-*`` options, checked (a ``ValueError`` says what to fix).

    >>> backend_from_options("local", None, None, None)
    'local'
    >>> backend_from_options("ray", "127.0.0.1:6379", 4, None).workers
    4
    """
    if backend not in ("local", "ray"):
        raise ValueError(f"--backend must be local or ray, got {backend!r}")
    ray_options = address is not None or workers is not None or local_endpoint is not None
    if backend == "local":
        if ray_options:
            raise ValueError(
                "--ray-address, --ray-workers and --ray-local-endpoint need --backend ray"
            )
        return "local"
    if workers is not None and workers < 1:
        raise ValueError(f"--ray-workers must be at least 1, got {workers}")
    from ragmeter.runner import RayBackend

    return RayBackend(address=address, workers=workers, local_endpoint=local_endpoint)


@dataclass(frozen=True)
class BackendOptions:
    """``--backend`` and the ``--ray-*`` options as given; checked by :meth:`checked`."""

    backend: str = "local"
    address: str | None = None
    workers: int | None = None
    local_endpoint: str | None = None

    def checked(self) -> str | RayBackend:
        return backend_from_options(self.backend, self.address, self.workers, self.local_endpoint)


#: ``--backend`` and the ``--ray-*`` options, taken by a command as one value.
BackendGroup = Annotated[
    BackendOptions,
    OptionGroup(
        BackendOptions,
        backend=(BackendOption, "local"),
        ray_address=(RayAddressOption, None),
        ray_workers=(RayWorkersOption, None),
        ray_local_endpoint=(RayLocalEndpointOption, None),
    ),
]
