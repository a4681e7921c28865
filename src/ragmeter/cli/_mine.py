"""``ragmeter mine``: pick production questions to label; ``ragmeter mine merge``: put the
labelled ones into the golden set."""

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from ragmeter.cli._app import CommandGroup, RunStoreOption, _fail, app, console, resolve_run
from ragmeter.cli._exit import fail_io
from ragmeter.cli._judging import whole_paragraphs

PICK = "pick"


class MineGroup(CommandGroup):
    """``ragmeter mine FILE ...`` runs ``mine pick FILE ...``: only ``merge`` (and ``pick``)
    name a subcommand, anything else is the samples file or an option of ``pick``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = [PICK, *args]
        return super().parse_args(ctx, args)


mine_app = typer.Typer(
    help="Test sets from real questions: pick production samples to label "
    "(ragmeter mine SAMPLES -n 100 -o to_label.jsonl), then merge the labelled ones into "
    "the golden set (ragmeter mine merge to_label.jsonl --into golden.jsonl).",
    no_args_is_help=True,
    cls=MineGroup,
)
app.add_typer(mine_app, name="mine")


@mine_app.command(PICK)
@whole_paragraphs
def pick_command(
    samples: Annotated[
        Path, typer.Argument(help="Production samples (JSONL, JSON, CSV or Parquet).")
    ],
    n: Annotated[int, typer.Option("-n", "--n", help="How many questions to pick.")] = 100,
    output: Annotated[
        Path,
        typer.Option("-o", "--output", help="The labelling file to write (.jsonl, .json, .csv)."),
    ] = Path("to_label.jsonl"),
    scores: Annotated[
        list[str] | None,
        typer.Option(
            "--scores",
            help="A run of these samples (run directory, or run id / name in the run store): "
            "the worst-scored are over-sampled. Repeat it for several runs (monitor windows).",
        ),
    ] = None,
    golden: Annotated[
        Path | None,
        typer.Option(
            "--golden",
            help="The current golden set: questions unlike any of it are over-sampled, "
            "questions already in it left out.",
        ),
    ] = None,
    dedupe: Annotated[
        float,
        typer.Option("--dedupe", help="Cosine at or above which two questions are the same."),
    ] = 0.95,
    clusters: Annotated[
        int | None,
        typer.Option("--clusters", help="k-means clusters (default: about sqrt(candidates))."),
    ] = None,
    worst_share: Annotated[
        float | None,
        typer.Option(
            "--worst-share", help="Share of the picks for the worst-scored (default 0.3)."
        ),
    ] = None,
    novel_share: Annotated[
        float | None,
        typer.Option(
            "--novel-share",
            help="Share of the picks for questions new to --golden (default 0.2; the two "
            "shares together at most 1).",
        ),
    ] = None,
    keep: Annotated[
        str,
        typer.Option(
            "--keep",
            help="Of near-duplicates keep the 'latest' (metadata timestamp) or the 'first'.",
        ),
    ] = "latest",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the clustering.")] = 0,
    force: Annotated[
        bool,
        typer.Option("--force", help="Overwrite an existing labelling file (its labels too)."),
    ] = False,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the counts as JSON here.")
    ] = None,
    store: RunStoreOption = None,
) -> None:
    """Pick real questions to label: diverse, representative, worst-scored and novel.

    Near-duplicates are removed, the rest clustered by meaning and picked across the
    clusters in proportion to their traffic; --worst-share of the picks go to the questions
    the --scores run scored worst, --novel-share to those least like the --golden set.

    Exit codes: 0 written, 2 bad input or options, 4 a file could not be read or written.
    """
    from ragmeter.dataset import DatasetError
    from ragmeter.judge import JudgeError
    from ragmeter.mining import DEFAULT_NOVEL_SHARE, DEFAULT_WORST_SHARE, describe, mine

    if worst_share is not None and novel_share is not None and worst_share + novel_share > 1:
        _fail(
            f"--worst-share {worst_share} and --novel-share {novel_share} add up to more than 1: "
            "they are shares of the same picks; lower one of them"
        )
    if keep not in ("latest", "first"):
        _fail(f"--keep must be 'latest' or 'first', got {keep!r}")
    if output.exists() and not output.is_file():
        _fail(f"-o {output} is not a regular file: give the path of a .jsonl, .json or .csv file")
    if output.exists() and not force:
        _fail(
            f"{output} already exists: the labels filled in it would be lost. Merge it first "
            "(ragmeter mine merge), choose another -o, or pass --force to overwrite it"
        )
    runs = [resolve_run(ref, store) for ref in scores or ()]  # by id or name: in --store
    try:
        result = mine(
            samples,
            n,
            scores=runs or None,
            golden=golden,
            dedupe=dedupe,
            clusters=clusters,
            worst_share=DEFAULT_WORST_SHARE if worst_share is None else worst_share,
            novel_share=DEFAULT_NOVEL_SHARE if novel_share is None else novel_share,
            seed=seed,
            keep="latest" if keep == "latest" else "first",
            output=output,
        )
    except (DatasetError, FileNotFoundError, ValueError, ImportError, JudgeError) as error:
        if isinstance(error, OSError) and error.filename == str(output):
            fail_io(error, kept="the labelling file was not written")  # -o cannot be written
        _fail(str(error))
    except OSError as error:  # the run store or the labelling file: exit 4
        fail_io(error, kept="the labelling file was not written")
    try:
        if json_out is not None:
            summary = {**result.summary(), "output": str(output)}
            json_out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        fail_io(error, kept=f"the labelling file {output} was written")
    for line in describe(result):
        console.print(escape(line), highlight=False, soft_wrap=True)
    console.print(
        f"wrote {escape(str(output))}: fill reference, reference_context_ids or label, then "
        f"ragmeter mine merge {escape(str(output))} --into GOLDEN",
        highlight=False,
        soft_wrap=True,
    )


@mine_app.command("merge")
@whole_paragraphs
def merge_command(
    labelled: Annotated[Path, typer.Argument(help="The labelling file, labelled.")],
    into: Annotated[Path, typer.Option("--into", help="The golden set (created when absent).")],
    update: Annotated[
        bool, typer.Option("--update", help="Replace golden rows that have the same id.")
    ] = False,
    skip_existing: Annotated[
        bool, typer.Option("--skip-existing", help="Leave out rows whose id is already there.")
    ] = False,
    labelled_by: Annotated[
        str | None, typer.Option("--labelled-by", help="Who labelled (kept as a tag).")
    ] = None,
    labelled_at: Annotated[
        str | None, typer.Option("--labelled-at", help="When it was labelled (ISO date).")
    ] = None,
) -> None:
    """Merge the labelled rows of a labelling file into the golden set.

    A row is labelled when a reference, relevant context ids or a label was filled; it
    keeps its provenance (source=production, mined_at, labelled_by). Rows not labelled are
    left out and counted.

    Exit codes: 0 merged, 2 bad input or an id already in the golden set (without --update
    or --skip-existing), 4 a file could not be read or written.
    """
    from ragmeter.dataset import DatasetError
    from ragmeter.mining import merge_labelled

    if update and skip_existing:
        _fail("give --update or --skip-existing, not both")
    policy: Any = "update" if update else "skip" if skip_existing else "error"
    if not labelled.is_file():
        _fail(f"no labelling file {str(labelled)!r}")
    try:
        result = merge_labelled(
            labelled,
            into,
            on_conflict=policy,
            labelled_by=labelled_by,
            labelled_at=labelled_at,
        )
    except (DatasetError, FileNotFoundError, ValueError) as error:
        if isinstance(error, OSError) and error.filename == str(into):
            fail_io(error, kept=f"{into} is unchanged")  # the golden set cannot be written
        _fail(str(error))
    except OSError as error:
        fail_io(error, kept=f"{into} is unchanged")
    parts = [f"{len(result.added)} added", f"{len(result.updated)} updated"]
    if result.skipped_existing:
        parts.append(f"{len(result.skipped_existing)} already there, skipped")
    parts.append(f"{len(result.unlabelled)} not labelled, left out")
    console.print(
        f"merged into {escape(str(into))}: {', '.join(parts)}; the golden set has "
        f"{result.n_golden} rows",
        highlight=False,
        soft_wrap=True,
    )
