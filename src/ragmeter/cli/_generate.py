"""``ragmeter generate``: a test set from the user's documents."""

import csv
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._app import _fail, app, console, errors
from ragmeter.cli._backend import BackendGroup, BackendOptions
from ragmeter.cli._exit import (
    ExitCode,
    FailureGroup,
    FailurePolicy,
    Outcome,
    fail_io,
    interrupted,
)
from ragmeter.cli._groups import option_groups
from ragmeter.cli._judging import (
    CacheGroup,
    CacheOptions,
    JudgeOptions,
    JudgeWithoutLogprobsGroup,
    whole_paragraphs,
)

if TYPE_CHECKING:
    from ragmeter.testset import GeneratedTestset, KnowledgeGraph, LinkSettings


def read_chunk_file(path: Path) -> list[dict[str, object]]:
    """Chunk records (``id``, ``text``, optional ``document_id``, ``title``) from JSONL,
    JSON (a list) or CSV."""
    from ragmeter._services import check_regular_file

    suffix = path.suffix.lower()
    check_regular_file(
        path,
        what="chunk file",
        fix="give a .jsonl, .json or .csv file of chunks",
        directory_fix="give the chunk file, or the folder without --chunks to read documents",
    )
    text = path.read_text(encoding="utf-8-sig")
    if suffix == ".csv":
        return list(csv.DictReader(text.splitlines()))
    if suffix == ".json":
        data = json.loads(text)
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of chunk objects")
        return data
    if suffix == ".jsonl":
        records = []
        for line_number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as error:
                    raise ValueError(
                        f"{path}, line {line_number}: not valid JSON ({error.msg}); each line "
                        'must be one chunk like {"id": "c1", "text": "..."}'
                    ) from None
        return records
    raise ValueError(f"{path}: chunk files must be .jsonl, .json or .csv")


def _names(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in text.split(",") if s.strip())


@dataclass(frozen=True)
class GenerateOptions:
    """What ``ragmeter generate`` asks for: how many questions of which kinds and voices,
    and how the documents are chunked and linked. A stopped generation resumes from its
    work folder with the same options."""

    n: int = 50
    mix: str = "single=0.5,multi=0.3,compare=0.2"
    personas: int | tuple[str, ...] = 3  # how many to write from the corpus, or your own
    styles: tuple[str, ...] = ("plain", "colloquial", "typos", "web")
    lengths: tuple[str, ...] = ("short", "medium", "long")
    seed: int = 0
    language: str | None = None
    chunk_size: int = 400
    chunk_overlap: int | None = None  # default: 50, at most chunk_size / 8
    similarity: float | None = None  # re-link at this least cosine
    dedup: float = 0.92
    attempts: int = 4

    def check(self) -> None:
        if self.language not in (None, "en", "zh"):
            raise ValueError(f"--language must be en or zh, got {self.language!r}")

    def link(self, graph: "KnowledgeGraph | None") -> "LinkSettings | None":
        """The link settings of ``graph`` (or the defaults) with ``similarity``, if given."""
        from ragmeter.testset import LinkSettings

        if self.similarity is None:
            return None
        base = graph.settings if graph is not None else LinkSettings()
        return dataclasses.replace(base, similarity_threshold=self.similarity)

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of :func:`ragmeter.testset.generate_testset`."""
        return {
            "n": self.n,
            "mix": self.mix,
            "personas": list(self.personas) if isinstance(self.personas, tuple) else self.personas,
            "styles": list(self.styles),
            "lengths": list(self.lengths),
            "seed": self.seed,
            "language": self.language,
            "chunk_size": self.chunk_size,
            "chunk_overlap": (
                min(50, self.chunk_size // 8) if self.chunk_overlap is None else self.chunk_overlap
            ),
            "dedup_threshold": self.dedup,
            "attempts_per_question": self.attempts,
        }


def _sources(docs: list[Path], chunks: bool) -> object:
    """The documents as given, or the chunks of the one chunk file."""
    from ragmeter.testset import chunks_from_documents, documents_from_chunks

    if not chunks:
        return docs
    if len(docs) != 1:
        raise ValueError("--chunks takes one chunk file")
    return chunks_from_documents(documents_from_chunks(read_chunk_file(docs[0])))


def _print_accounting(result: "GeneratedTestset", n: int, output: Path, work_dir: Path) -> None:
    """What each synthesizer kept, tried and rejected, the notes, the judge's usage and the
    knowledge graph."""
    table = Table(title=f"{len(result)} of {n} questions → {escape(str(output))}")
    for column in ("synthesizer", "asked", "kept", "tried", "candidates", "rejected"):
        table.add_column(
            column, justify="left" if column in ("synthesizer", "rejected") else "right"
        )
    for name, account in result.accounting.synthesizers.items():
        rejected = ", ".join(f"{c} {r}" for r, c in account.rejected.items()) or "—"
        table.add_row(
            name,
            str(account.requested),
            str(account.produced),
            str(account.attempted),
            str(account.available),
            escape(rejected),
        )
    console.print(table)
    for note in result.accounting.notes:
        console.print(f"• {escape(note)}", highlight=False)
    usage, per_sample = result.total_usage, result.judge_calls_per_sample
    line = (
        f"judge, all sessions: {usage.calls} calls (+{usage.cached_calls} cached), "
        f"{usage.total_tokens:,} tokens"
    )
    if usage.cost:
        line += f", cost {usage.cost:.4f}"
    if per_sample is not None:
        line += f", {per_sample:.2f} calls per question"
    console.print(line, highlight=False)
    summary = result.graph.summary()
    console.print(
        f"graph: {summary['chunks']} chunks ({summary['analysed']} read), "
        f"{summary['entity_edges']} entity and {summary['similarity_edges']} similarity edges; "
        f"saved in {work_dir / 'graph.json'}",
        highlight=False,
    )


def failed_steps(result: "GeneratedTestset") -> tuple[int, int]:
    """(failed, total) judge-backed steps of a generation: chunks the judge could not read,
    and question attempts rejected for a judge error (not those the judge found wanting)."""
    chunks = list(result.graph.nodes.values())
    accounts = result.accounting.synthesizers.values()
    failed = sum(1 for node in chunks if node.error) + sum(
        a.rejected.get("judge error", 0) for a in accounts
    )
    return failed, len(chunks) + sum(a.attempted for a in accounts)


def _exit(result: "GeneratedTestset", n: int, policy: FailurePolicy) -> NoReturn:
    """Exit 3 when nothing was kept or too many steps failed, 1 when fewer questions than
    asked were kept; one line saying why (``exit 1: kept 12 of 40 questions``)."""
    outcome = Outcome()
    failed, total = failed_steps(result)
    checked = policy.check(failed, total, "judge steps (chunk readings, question attempts)")
    if checked is not None:
        outcome.add(*checked)
    if not len(result) and not policy.allow:
        outcome.add(ExitCode.RESULTS_FAILED, f"kept no question of the {n} asked for")
    elif len(result) < n:
        outcome.add(ExitCode.GATE_FAILED, f"kept {len(result)} of the {n} questions asked for")
    outcome.exit(f"kept all {n} questions asked for")


@app.command("generate")
@whole_paragraphs
@option_groups
def generate_command(
    docs: Annotated[
        list[Path],
        typer.Argument(
            metavar="DOCS_PATH...", help="Documents: files or folders (.txt .md .html .pdf .docx)."
        ),
    ],
    n: Annotated[int, typer.Option("-n", "--size", min=1, help="Questions to generate.")] = 50,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Test set file to write (JSONL).")
    ] = Path("testset.jsonl"),
    mix: Annotated[
        str,
        typer.Option(
            "--mix",
            show_default=False,
            help="Synthesizer weights: single, multi (bridge entity), compare, and the "
            "adversarial unanswerable (out_of_scope), false_premise (negation), calculation "
            "(aggregation), temporal (conditional), as NAME=WEIGHT separated by commas, e.g. "
            "single=0.4, unanswerable=0.2 (default: single=0.5, multi=0.3, compare=0.2).",
        ),
    ] = "single=0.5,multi=0.3,compare=0.2",
    personas: Annotated[
        int, typer.Option("--personas", min=0, help="Personas to write from the corpus.")
    ] = 3,
    persona: Annotated[
        list[str] | None,
        typer.Option("--persona", help='Your own persona, "Name: who they are" (repeatable).'),
    ] = None,
    styles: Annotated[
        str,
        typer.Option(
            "--styles",
            show_default=False,
            help="Query styles to rotate through (default: plain, colloquial, typos, web).",
        ),
    ] = "plain,colloquial,typos,web",
    lengths: Annotated[
        str, typer.Option("--lengths", help="Question lengths to rotate through.")
    ] = "short,medium,long",
    seed: Annotated[int, typer.Option("--seed", help="Seed for every random choice.")] = 0,
    language: Annotated[
        str | None,
        typer.Option("--language", help="en or zh for every question (default: each chunk's)."),
    ] = None,
    chunks: Annotated[
        bool,
        typer.Option(
            "--chunks",
            help="DOCS is a .jsonl/.json/.csv of your own chunks (id, text[, document_id]): "
            "they are used as they are and keep their ids.",
        ),
    ] = False,
    chunk_size: Annotated[int, typer.Option("--chunk-size", min=1, help="Tokens per chunk.")] = 400,
    chunk_overlap: Annotated[
        int | None,
        typer.Option(
            "--chunk-overlap", min=0, help="Tokens of overlap (default: 50, at most size / 8)."
        ),
    ] = None,
    graph: Annotated[
        Path | None,
        typer.Option("--graph", help="Reuse a saved knowledge graph (e.g. WORK/graph.json)."),
    ] = None,
    similarity: Annotated[
        float | None,
        typer.Option("--similarity", help="Least cosine for a similarity edge (default 0.8)."),
    ] = None,
    dedup: Annotated[
        float, typer.Option("--dedup", help="Drop questions at least this similar (cosine).")
    ] = 0.92,
    attempts: Annotated[
        int,
        typer.Option("--attempts", min=1, help="Most attempts per question a synthesizer makes."),
    ] = 4,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue the stopped generation of this output.")
    ] = False,
    judge: JudgeWithoutLogprobsGroup = JudgeOptions(),
    cache: CacheGroup = CacheOptions(),
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display.")] = False,
    failures: FailureGroup = FailurePolicy(),
    backend: BackendGroup = BackendOptions(),
) -> None:
    """Write test questions with reference answers from your documents, in their language.

    Single-hop questions come from one chunk, multi-hop ones from chunks that share an
    entity, comparison ones from similar chunks. Each is kept only if the judge finds its
    reference answer supported by its reference contexts and it is not a near-duplicate.
    Progress is saved in OUTPUT's work folder (testset.work/ for testset.jsonl); run again
    with --resume to continue a stopped generation.

    Exit code 0 when every question asked for was kept, 1 when fewer were, 2 for a usage or
    judge configuration error, 3 when no question was kept or more judge calls failed (chunk
    readings and question attempts) than --max-failed-share allows (default 0;
    --allow-failures accepts them), 4 when a file could not be read or written.
    """
    from ragmeter.dataset import DatasetError
    from ragmeter.judge import JudgeConfigError, JudgeError
    from ragmeter.runner import RayBackendError, make_progress
    from ragmeter.testset import DocumentLoadError, KnowledgeGraph, generate_testset

    options = GenerateOptions(
        n=n,
        mix=mix,
        personas=tuple(persona) if persona else personas,
        styles=_names(styles),
        lengths=_names(lengths),
        seed=seed,
        language=language,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        similarity=similarity,
        dedup=dedup,
        attempts=attempts,
    )
    work_dir = output.with_name(output.stem + ".work")
    try:
        options.check()
        sources = _sources(docs, chunks)
        loaded_graph = KnowledgeGraph.load(graph) if graph is not None else None
        built, where = judge.build(cache), backend.checked()
        from ragmeter.cli._defaults import say_defaults

        say_defaults(built, embeddings_used=True)  # the graph's similarity links embed
        result = generate_testset(
            sources,  # type: ignore[arg-type]  # paths or chunks, checked by generate_testset
            **options.arguments(),
            judge=built,
            link=options.link(loaded_graph),
            graph=loaded_graph,
            work_dir=work_dir,  # the progress, saved as it goes
            resume=resume,
            progress=make_progress(None if not quiet else False),
            backend=where,
        )
    except KeyboardInterrupt:
        interrupted(f"progress is saved in {work_dir}; continue with the same command and --resume")
    except JudgeError as error:
        if isinstance(error, JudgeConfigError):  # a rejected key, an unknown model: exit 2
            _fail(str(error))
        # The judge failed everywhere (down, overloaded): nothing could be generated.
        errors.print(f"[bold red]error:[/bold red] {escape(str(error))}", soft_wrap=True)
        outcome = Outcome()
        outcome.add(
            ExitCode.GATE_FAILED if failures.allow else ExitCode.RESULTS_FAILED,
            f"kept no question of the {n} asked for; the progress is kept in {work_dir}: "
            "run the same command with --resume once the judge answers",
        )
        outcome.exit("")
    except (
        DatasetError,
        DocumentLoadError,
        FileNotFoundError,
        FileExistsError,
        ValueError,
        ImportError,
        RayBackendError,
    ) as error:
        _fail(str(error))
    except OSError as error:  # disk full, read-only media: one line, progress kept, exit 4
        fail_io(
            error,
            kept=f"the generation stopped; its progress is kept in {work_dir}: fix the cause, "
            "then run the same command with --resume",
        )

    try:
        result.save(output)
    except OSError as error:
        fail_io(
            error,
            kept=f"the test set was not written; the generation is kept in {work_dir}: fix the "
            "cause, then run the same command with --resume (nothing is asked again)",
        )
    _print_accounting(result, n, output, work_dir)
    _exit(result, n, failures)
