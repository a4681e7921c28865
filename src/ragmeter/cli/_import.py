"""``ragmeter import``: production traces (Phoenix / OpenInference, OpenTelemetry, Langfuse,
LangSmith exports) into a samples file to score."""

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ragmeter.cli._app import _fail, app, console
from ragmeter.cli._budget import SeedOption, StratifyOption
from ragmeter.cli._exit import fail_io
from ragmeter.cli._judging import whole_paragraphs

FORMAT_HELP = (
    "openinference (alias phoenix): Phoenix span exports (JSON, JSON lines, Parquet); otel: "
    "OTLP/JSON files (OpenInference or GenAI attributes); langfuse; langsmith."
)


@app.command("import")
@whole_paragraphs
def import_command(
    format: Annotated[str, typer.Argument(help=FORMAT_HELP, show_default=False)],
    files: Annotated[list[Path], typer.Argument(help="Export files to read.", show_default=False)],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Samples file to write (JSONL).")
    ] = Path("samples.jsonl"),
    since: Annotated[
        str | None,
        typer.Option("--since", help="Keep traces that started at or after this ISO date/time."),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            "--until",
            help="Keep traces that started before this ISO date/time (a date keeps that day).",
        ),
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample",
            min=1,
            help="Keep N samples drawn at random (the same N for the same --seed), in time order.",
        ),
    ] = None,
    seed: SeedOption = None,
    stratify: StratifyOption = None,
) -> None:
    """Read trace exports into samples, one per trace: the root span's input and output are
    the question and the answer, retriever spans the contexts (a reranker's order when there
    is one), LLM spans the model, tokens and latency, session/user/tags the metadata.

    Prints what was read and everything not mapped, with the reason and how many; writes the
    samples (JSONL) for `ragmeter eval`. Exit 0 when written, 2 for a file or option that
    cannot be read as asked (the message names the file, the record and the fix), 4 when a
    file cannot be opened or written.
    """
    from ragmeter.dataset import sample as draw
    from ragmeter.dataset import save_dataset
    from ragmeter.traces import import_traces

    if stratify is not None and sample is None:
        raise typer.BadParameter("--stratify needs --sample N", param_hint="--stratify")
    try:
        result = import_traces(format, files, since=since, until=until)
        dataset = result.to_dataset()
        if sample is not None and len(dataset):
            dataset = draw(dataset, sample, seed=seed or 0, stratify=stratify)
    except OSError as error:
        fail_io(error)
    except (ValueError, ImportError) as error:  # a DatasetError is a ValueError
        _fail(str(error))
    console.print(escape(result.summary()), highlight=False, soft_wrap=True)
    if sample is not None:
        console.print(f"--sample {sample}: {len(dataset)} of {len(result.samples)} samples kept")
    try:
        save_dataset(dataset, output, format="jsonl")
    except OSError as error:
        fail_io(error)
    console.print(f"wrote {len(dataset)} samples to {escape(str(output))}", highlight=False)
