"""``ragmeter align``: a metric's agreement with human labels, and few-shot improvement."""

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

from ragmeter.cli._app import RunStoreOption, _fail, app, console, errors, print_error
from ragmeter.cli._exit import (
    ExitCode,
    FailureGroup,
    FailurePolicy,
    Outcome,
    fail_io,
    io_message,
)
from ragmeter.cli._groups import option_groups
from ragmeter.cli._judging import (
    CacheGroup,
    CacheOptions,
    JudgeGroup,
    JudgeOptions,
    whole_paragraphs,
)

if TYPE_CHECKING:
    from ragmeter.align import AlignmentReport
    from ragmeter.metrics import Metric

METRIC_FILE_SUFFIXES = (".yaml", ".yml", ".toml")


def load_metric_argument(value: str) -> "Metric":
    """A built-in metric by name (``faithfulness``, ``recall@5``), or a metric file
    (``.yaml``/``.yml``/``.toml``) loaded with ``ragmeter.metrics.custom.load_metric``."""
    from ragmeter.metrics import resolve_metrics

    if Path(value).suffix.lower() in METRIC_FILE_SUFFIXES:
        if not Path(value).is_file():
            raise FileNotFoundError(f"no such metric file: {value!r}")
        try:
            from ragmeter.metrics.custom import load_metric
        except ImportError as error:
            raise ImportError(
                f"cannot load the metric file {value!r}: custom metrics "
                f"(ragmeter.metrics.custom) are not available in this installation ({error})"
            ) from None
        metric = load_metric(value)
        return metric
    return resolve_metrics([value])[0]


#: How the runner marks the results a judge that refused its configuration never computed.
NOT_JUDGED = "not judged:"


def judgment_problems(
    report: "AlignmentReport", policy: FailurePolicy
) -> list[tuple[ExitCode, str]]:
    """What the failed judgments of ``report`` (original and improved metric) mean for the
    exit code: exit 2 when the judge refused its configuration (nothing more was judged),
    else ``policy`` on the share failed, with the most common error."""
    measured = [m for m in (report.original, report.improved) if m is not None]
    failed = [u for m in measured for u in m.unscored if u.status == "failed"]
    if not failed:
        return []
    refused = next((u.message for u in failed if u.message.startswith(NOT_JUDGED)), None)
    if refused is not None:
        errors.print(f"[bold red]error:[/bold red] {escape(refused)}", highlight=False)
        return [(ExitCode.USAGE, "the judge refused its configuration; fix it and run again")]
    message, count = Counter(u.message.splitlines()[0][:300] for u in failed).most_common(1)[0]
    checked = policy.check(
        len(failed),
        sum(len(m.sample_ids) for m in measured),
        "judgments",
        f"most common error ({count}x): {message}; run again (answers already given come "
        "from the judge cache), or accept them with --allow-failures",
    )
    return [] if checked is None else [checked]


#: How ``align`` says that the metric scored no item at all (every judgment failed, say).
NOTHING_SCORED = "gave nothing to compare on any of the"


def _nothing_scored(message: str) -> NoReturn:
    """No item was scored: exit 3 when it is because the judgments failed (the judge down),
    exit 2 when the judge refused its configuration or the items do not suit the metric."""
    if ": failed, " not in message or NOT_JUDGED in message:
        _fail(message)
    print_error(message)
    outcome = Outcome()
    outcome.add(
        ExitCode.RESULTS_FAILED,
        "every judgment failed, so there is no agreement to report; run again once the judge "
        "answers (answers already given come from the judge cache)",
    )
    outcome.exit("")


@app.command("align")
@whole_paragraphs
@option_groups
def align_command(
    metric: Annotated[
        str,
        typer.Argument(
            help="A built-in metric (e.g. faithfulness) or a metric file (.yaml, .yml, .toml)."
        ),
    ],
    labelled: Annotated[
        Path | None,
        typer.Argument(
            help="Human-labelled samples: .jsonl, .json, .csv or .parquet (or --run).",
            show_default=False,
        ),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option(
            "--kind",
            help="discrete, numeric, rubric or ranking (default: the metric's, else from the "
            "labels).",
        ),
    ] = None,
    improve: Annotated[
        bool,
        typer.Option(
            "--improve",
            help="Give the metric few-shot examples from a train split; measure on the test split.",
        ),
    ] = False,
    shots: Annotated[
        int, typer.Option("--shots", min=1, help="Examples to give the metric with --improve.")
    ] = 4,
    test_share: Annotated[
        float,
        typer.Option("--test-share", help="Share of the items held out for testing (--improve)."),
    ] = 0.5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the split and the CIs.")] = 0,
    label_field: Annotated[
        str, typer.Option("--label-field", help="The column with the human label.")
    ] = "label",
    reason_field: Annotated[
        str, typer.Option("--reason-field", help="The column with the human's reason, if any.")
    ] = "reason",
    top: Annotated[
        int, typer.Option("--top", min=0, help="Disagreements to print (all are in --json).")
    ] = 10,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the full report as JSON to this file.")
    ] = None,
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="Instead of LABELLED: measure this stored run's verdicts against the labels "
            "kept in the run store, without calling the judge (as ragmeter labels agreement).",
        ),
    ] = None,
    store: RunStoreOption = None,
    judge: JudgeGroup = JudgeOptions(),
    cache: CacheGroup = CacheOptions(),
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
    failures: FailureGroup = FailurePolicy(),
) -> None:
    """How far does a metric agree with people? Scores human-labelled samples and reports
    agreement with 95% bootstrap CIs (accuracy and Cohen's kappa for discrete labels,
    quadratic-weighted kappa for rubric levels, Spearman and Pearson for numbers), the items
    it did not score, and the largest disagreements with the metric's reasons.

    With --run RUN the figures come from a stored run and the labels kept in the run store
    (ragmeter labels import), per level (sample, claim, context), as ragmeter labels
    agreement prints them: nothing is judged again.

    With --improve the metric gets few-shot examples chosen from a train split, and the
    original and the improved metric are measured on the held-out test split only.

    Exit code 0 when a report was made and no judgment failed, 2 for a usage or judge
    configuration error (a rejected key), 3 when more judgments failed than
    --max-failed-share allows (default 0; --allow-failures accepts them), 4 when a file could
    not be read or written. Items the metric does not apply to are reported, not failures.
    """
    if run is not None or labelled is None:
        from ragmeter.cli._labels import align_on_stored_labels

        align_on_stored_labels(metric, labelled, run, store, top=top, json_out=json_out)
        return
    from ragmeter.align import AlignOptions, align
    from ragmeter.dataset import DatasetError
    from ragmeter.judge import JudgeError
    from ragmeter.metrics import UnknownMetricError

    options = AlignOptions(
        kind=kind,
        improve=improve,
        test_share=test_share,
        shots=shots,
        seed=seed,
        label_field=label_field,
        reason_field=reason_field,
    )
    try:
        resolved = load_metric_argument(metric)
        options.checked(resolved)  # before the judge is made
        report = align(
            resolved,
            labelled,
            judge=judge.build_if_needed([resolved], cache),
            progress=not quiet,
            **dataclasses.asdict(options),
        )
    except (
        UnknownMetricError,
        DatasetError,
        FileNotFoundError,
        ValueError,
        ImportError,
        JudgeError,
    ) as error:
        if isinstance(error, ValueError) and NOTHING_SCORED in str(error):
            _nothing_scored(str(error))
        _fail(str(error))
    except OSError as error:  # an unreadable file, a full disk: one line, exit 4
        fail_io(error, kept="the labelled samples could not be scored")
    for line in report.summary(top=top).splitlines():
        console.print(escape(line), highlight=False, soft_wrap=True)
    outcome = Outcome()
    if json_out is not None:
        try:
            json_out.parent.mkdir(parents=True, exist_ok=True)
            json_out.write_text(
                json.dumps(report.to_dict(), ensure_ascii=False, indent=2, allow_nan=False),
                encoding="utf-8",
            )
            console.print(f"report: {escape(str(json_out))}", highlight=False)
        except OSError as error:
            errors.print(f"[bold red]error:[/bold red] {escape(io_message(error))}")
            outcome.add(ExitCode.IO_ERROR, f"the report {json_out} was not written")
    for code, reason in judgment_problems(report, failures):
        outcome.add(code, reason)
    outcome.exit("the report was made")
