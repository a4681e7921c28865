"""``--mlflow`` and ``--wandb``: log a finished run to an experiment tracker.

Typer (0.29) has no option with an optional value (click's ``is_flag=False, flag_value=``
is not passed through), and one would be ambiguous before the DATA argument anyway
(``--mlflow data.jsonl``), so the URI and the project have options of their own, each
implying its tracker: ``--mlflow`` / ``--mlflow-uri URI``, ``--wandb`` / ``--wandb-project``.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragmeter.cli._app import console, print_error
from ragmeter.cli._exit import ExitCode
from ragmeter.cli._groups import OptionGroup

if TYPE_CHECKING:
    from ragmeter.results import EvaluationResult

MlflowOption = Annotated[
    bool,
    typer.Option(
        "--mlflow",
        help="Also log the run to MLflow: metrics with CIs, settings, report (the tracking "
        "URI from --mlflow-uri, else from the environment as MLflow reads it).",
    ),
]
MlflowUriOption = Annotated[
    str | None,
    typer.Option("--mlflow-uri", help="MLflow tracking URI (implies --mlflow)."),
]
MlflowExperimentOption = Annotated[
    str | None,
    typer.Option(
        "--mlflow-experiment",
        help="MLflow experiment, created when missing (implies --mlflow; default: from "
        "the environment, else Default).",
    ),
]
WandbOption = Annotated[
    bool,
    typer.Option(
        "--wandb",
        help="Also log the run to Weights & Biases (mode from $WANDB_MODE: offline writes "
        "locally for wandb sync).",
    ),
]
WandbProjectOption = Annotated[
    str | None,
    typer.Option("--wandb-project", help="W&B project (implies --wandb; default $WANDB_PROJECT)."),
]


@dataclass(frozen=True)
class TrackingOptions:
    """Where ``ragmeter eval`` logs its run besides its own directory and store."""

    mlflow: bool = False
    mlflow_uri: str | None = None
    mlflow_experiment: str | None = None
    wandb: bool = False
    wandb_project: str | None = None

    @property
    def to_mlflow(self) -> bool:
        return self.mlflow or self.mlflow_uri is not None or self.mlflow_experiment is not None

    @property
    def to_wandb(self) -> bool:
        return self.wandb or self.wandb_project is not None

    def check(self) -> None:
        """An ImportError (a usage error) now, before the run, for a tracker not installed."""
        for wanted, module, extra in (
            (self.to_mlflow, "mlflow", "mlflow"),
            (self.to_wandb, "wandb", "wandb"),
        ):
            if wanted and importlib.util.find_spec(module) is None:
                raise ImportError(
                    f"--{extra} needs {module}, which is not installed: "
                    f"pip install 'ragmeter[{extra}]'"
                )

    def log(
        self,
        result: EvaluationResult,
        *,
        name: str | None,
        tags: list[str],
        params: dict[str, Any],
    ) -> list[tuple[ExitCode, str]]:
        """Log ``result`` to each tracker asked for; the problems met (each printed as an
        error line): the run is complete in its directory whatever happens here."""
        from ragmeter.tracking import TrackingError, log_to_mlflow, log_to_wandb

        loggers: list[tuple[str, str, str, Any]] = []
        if self.to_mlflow:
            log = partial(
                log_to_mlflow, tracking_uri=self.mlflow_uri, experiment=self.mlflow_experiment
            )
            loggers.append(("MLflow", "experiment", "", log))
        if self.to_wandb:
            offline = " (offline: upload it with wandb sync)"
            loggers.append(
                ("W&B", "project", offline, partial(log_to_wandb, project=self.wandb_project))
            )
        problems = []
        for tracker, within, offline, log in loggers:
            try:
                run = log(result, run_name=name, params=params, tags=tags)
            except (TrackingError, ValueError) as error:
                problems.append(_problem(error, tracker))
                continue
            where = f" {run.url}" if run.url else offline
            console.print(
                f"logged to {tracker}: run {run.run_id} ({within} {run.experiment}){where}",
                highlight=False,
                soft_wrap=True,
            )
        return problems


#: ``--mlflow*`` and ``--wandb*``, taken by a command as one value.
TrackingGroup = Annotated[
    TrackingOptions,
    OptionGroup(
        TrackingOptions,
        mlflow=(MlflowOption, False),
        mlflow_uri=(MlflowUriOption, None),
        mlflow_experiment=(MlflowExperimentOption, None),
        wandb=(WandbOption, False),
        wandb_project=(WandbProjectOption, None),
    ),
]


def _problem(error: Exception, tracker: str) -> tuple[ExitCode, str]:
    from ragmeter._services import redact_secrets

    print_error(redact_secrets(str(error)))
    # a parameter that clashes with ragmeter's own is the command's fault, not the server's
    code = ExitCode.IO_ERROR if isinstance(error, RuntimeError) else ExitCode.USAGE
    return code, f"the run was not logged to {tracker} (its results are in the run directory)"
