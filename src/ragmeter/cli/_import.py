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
    "openinference (alias phoenix): Phoenix span exports (JSON, JSON lines, Parquet); otel "
    "(aliases otlp, traceloop, openllmetry): OTLP/JSON or OTLP protobuf files (OpenInference, "
    "GenAI or OpenLLMetry attributes); langfuse; langsmith. gzip/zstd files are decompressed."
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
    samples (JSONL) for `ragmeter eval`, whole or not at all: an earlier file of that name
    stays as it was until the new one is complete. Exit 0 when written; 2 for a file or option
    that cannot be read as asked (the message names the file, the record and the fix), and
    when no sample came out (why, and the format the files look like when it is another);
    4 when a file cannot be opened or written.
    """
    from ragmeter._services import replaced_atomically
    from ragmeter.dataset import sample as draw
    from ragmeter.dataset import save_dataset, utf8_text
    from ragmeter.traces import canonical_format, guess_format, import_traces, nothing_read

    if stratify is not None and sample is None:
        raise typer.BadParameter("--stratify needs --sample N", param_hint="--stratify")
    try:
        result = import_traces(format, files, since=since, until=until)
        dataset = result.to_dataset()
        summary, imported = result.summary(), len(result.samples)
        result.samples.clear()  # they are the dataset's samples now: not held twice
        if sample is not None and len(dataset):
            dataset = draw(dataset, sample, seed=seed or 0, stratify=stratify)
    except OSError as error:
        fail_io(_printable(error))
    except (ValueError, ImportError) as error:  # a DatasetError is a ValueError
        _fail(utf8_text(str(error) + _other_format(format, files, guess_format(files))))
    console.print(escape(summary), highlight=False, soft_wrap=True)
    if not imported:
        asked = canonical_format(format)
        why = _other_format(format, files, guess_format(files))
        if not why:  # the files are of the format asked for: what they carry, what it reads
            why = "; every trace read is listed above as not mapped, with the reason"
            if (since or until) and result.n_traces:
                why += " (--since/--until left out the traces outside the window)"
            else:
                seen = nothing_read(asked, files)
                why += f"; {seen}" if seen else ""
        _fail(
            utf8_text(
                f"no sample from {', '.join(map(str, files))} as {asked} traces{why}; "
                f"{output} left as it was"
            )
        )
    if sample is not None:
        console.print(f"--sample {sample}: {len(dataset)} of {imported} samples kept")
    try:
        with replaced_atomically(output) as partial:
            save_dataset(dataset, partial, format="jsonl")
    except OSError as error:
        fail_io(_printable(error), kept=utf8_text(f"{output} was left as it was"))
    console.print(f"wrote {len(dataset)} samples to {escape(utf8_text(output))}", highlight=False)


def _other_format(format: str, files: list[Path], guessed: str | None) -> str:
    """``; the files look like a X export...`` when they look like another format than
    ``format`` (an unknown format says nothing here: its error names the formats)."""
    from ragmeter.traces import canonical_format, format_name

    try:
        asked = canonical_format(format)
    except ValueError:
        return ""
    if guessed is None or guessed == asked:
        return ""
    names = " ".join(str(f) for f in files)
    name = format_name(guessed)
    return (
        f"; the files look like {'an' if name[0] in 'AEIOU' else 'a'} {name} export, not "
        f"{asked}: read them with ragmeter import {guessed} {names}"
    )


def _printable(error: OSError) -> OSError:
    """``error`` with a file name that can be printed (a non-UTF-8 byte as ``\\udcff``)."""
    from ragmeter.dataset import utf8_text

    if isinstance(error.filename, str) and error.errno is not None:
        return type(error)(error.errno, error.strerror, utf8_text(error.filename))
    return error
