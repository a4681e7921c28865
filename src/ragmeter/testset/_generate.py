"""Generating a test set: documents -> chunks -> knowledge graph -> questions, checked.

Every question is written by a synthesizer from graph candidates, in the chunks' language,
for a persona, in a query style and length; kept only when the judge finds its reference
answer supported by its reference contexts (every context needed), when it is in the
documents' language and when it is not a near-duplicate of a question already kept. The
accounting says, per synthesizer, how many were asked for, written, kept and rejected and
why, so a test set smaller than requested always says why.

With a work directory the build and every attempt are saved as they finish, and
``resume=True`` continues an interrupted run without asking the judge again for anything
recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter._services import run_sync
from ragmeter.embed import Embeddings
from ragmeter.judge import Judge, JudgeConfigError, JudgeError, Usage
from ragmeter.prompts import Language
from ragmeter.runner import ProgressReporter, QuietProgress, RayBackend
from ragmeter.steps import LENGTHS, STYLES, GenerationSteps, Length, Persona, Style
from ragmeter.testset._chunking import Chunk, chunk_documents
from ragmeter.testset._documents import Document, load_documents
from ragmeter.testset._graph import BuildStats, KnowledgeGraph, LinkSettings, abuild_graph
from ragmeter.testset._result import GeneratedTestset, SizeAccounting
from ragmeter.testset._synthesizers import (
    ALIASES,
    SYNTHESIZERS,
    SynthesizerName,
)
from ragmeter.testset._workdir import WORK_FORMAT, WorkDir
from ragmeter.testset._writer import Writer

if TYPE_CHECKING:
    from ragmeter.runner import WorkerPool

DEFAULT_MIX: dict[SynthesizerName, float] = {"single": 0.5, "multi": 0.3, "compare": 0.2}
#: Questions at least this similar (cosine of their embeddings) to a kept one are dropped.
DEFAULT_DEDUP_THRESHOLD = 0.92
#: Summaries shown to the judge when it writes personas.
PERSONA_SUMMARIES = 20
NEUTRAL_PERSONA = {
    "en": Persona("Reader", "someone looking for facts in these documents"),
    "zh": Persona("读者", "想在这些文档中查找事实的人"),
}


# -- settings ------------------------------------------------------------------------------------
def parse_mix(mix: str | Mapping[str, float] | None) -> dict[SynthesizerName, float]:
    """Synthesizer weights from ``"single=0.5,multi=0.3,compare=0.2"`` or a mapping,
    normalised to sum to 1.

    >>> parse_mix("single=2,compare=2")
    {'single': 0.5, 'compare': 0.5}
    """
    if mix is None:
        return dict(DEFAULT_MIX)
    if isinstance(mix, str):
        pairs: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in mix.split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"mix part {part!r} needs NAME=WEIGHT, e.g. single=0.5")
            try:
                pairs[key.strip()] = float(value)
            except ValueError:
                raise ValueError(f"mix weight {value!r} of {key!r} is not a number") from None
        mix = pairs
    weights: dict[SynthesizerName, float] = {}
    for name, weight in mix.items():
        canonical = ALIASES.get(str(name).strip().lower())
        if canonical is None:
            raise ValueError(
                f"unknown synthesizer {name!r} in the mix; use {', '.join(SYNTHESIZERS)}"
            )
        if not weight >= 0:
            raise ValueError(f"mix weight of {name!r} must be >= 0, got {weight}")
        weights[canonical] = weights.get(canonical, 0.0) + float(weight)
    total = sum(weights.values())
    if total <= 0:
        raise ValueError("the mix needs at least one synthesizer with a weight above 0")
    return {name: weight / total for name, weight in weights.items() if weight > 0}


# -- the generator ---------------------------------------------------------------------------------
DocumentsInput = (
    str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Sequence[Document] | Sequence[Chunk]
)


def as_chunks(
    documents: DocumentsInput, *, chunk_size: int = 400, chunk_overlap: int = 50
) -> list[Chunk]:
    """Chunks from paths (loaded and chunked), :class:`Document` objects (chunked) or
    :class:`Chunk` objects (used as they are, keeping their ids)."""
    if isinstance(documents, (str, os.PathLike)):
        documents = [documents]
    items = list(documents)
    chunks = [item for item in items if isinstance(item, Chunk)]
    if items and len(chunks) == len(items):
        return chunks
    texts = [item for item in items if isinstance(item, Document)]
    if items and len(texts) == len(items):
        return chunk_documents(texts, size=chunk_size, overlap=chunk_overlap)
    paths = [item for item in items if isinstance(item, (str, os.PathLike))]
    if len(paths) == len(items):
        loaded = load_documents(paths)
        return chunk_documents(loaded, size=chunk_size, overlap=chunk_overlap)
    raise TypeError("documents must be paths, Document objects or Chunk objects (not a mix)")


def chunks_from_documents(documents: Iterable[Document]) -> list[Chunk]:
    """The user's own chunks (e.g. from :func:`documents_from_chunks`) as chunks that keep
    their ids, so generated ``reference_context_ids`` match the user's retriever."""
    return [
        Chunk(
            id=d.id,
            document_id=str(d.metadata.get("document_id", d.id)),
            text=d.text,
            index=int(d.metadata.get("index", 0)),
            start=0,
            end=len(d.text),
        )
        for d in documents
    ]


async def agenerate_testset(
    documents: DocumentsInput,
    *,
    n: int = 50,
    mix: str | Mapping[str, float] | None = None,
    personas: int | Sequence[str | Persona] = 3,
    styles: Sequence[Style] = STYLES,
    lengths: Sequence[Length] = LENGTHS,
    seed: int = 0,
    judge: Judge | None = None,
    embeddings: Embeddings | None = None,
    language: Language | None = None,
    chunk_size: int = 400,
    chunk_overlap: int = 50,
    link: LinkSettings | None = None,
    graph: KnowledgeGraph | str | os.PathLike[str] | None = None,
    dedup_threshold: float = DEFAULT_DEDUP_THRESHOLD,
    attempts_per_question: int = 4,
    work_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    concurrency: int = 16,
    progress: ProgressReporter | None = None,
    backend: str | RayBackend = "local",
) -> GeneratedTestset:
    """Generate ``n`` test questions from ``documents``; see :func:`generate_testset`."""
    cluster = RayBackend.of(backend)  # a bad value is refused before anything runs
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    weights = parse_mix(mix)
    styles = _validated(styles, STYLES, "style")
    lengths = _validated(lengths, LENGTHS, "length")
    if attempts_per_question < 1:
        raise ValueError(f"attempts_per_question must be >= 1, got {attempts_per_question}")
    if not 0 < dedup_threshold <= 1:
        raise ValueError(f"dedup_threshold must be in (0, 1], got {dedup_threshold}")
    if judge is None:
        from ragmeter.judge import default_judge

        judge = default_judge()
    if embeddings is None:
        from ragmeter.embed import default_embeddings

        embeddings = default_embeddings()
    progress = progress or QuietProgress()
    work = WorkDir(Path(work_dir) if work_dir is not None else None)
    usage: dict[str, Usage] = {}
    versions: set[str] = set()

    # A Ray cluster's workers read the chunks and write and check the questions.
    workers = cluster.start(judge) if cluster is not None else None
    work.in_flight.ledger = judge.ledger
    flusher = asyncio.create_task(work.in_flight.write_as_it_grows())
    try:
        # 1. the graph
        graph = await _the_graph(
            documents,
            graph,
            link=link,
            chunk_size=chunk_size,
            chunk_overlap=chunk_overlap,
            judge=judge,
            embeddings=embeddings,
            language=language,
            work=work,
            resume=resume,
            progress=progress,
            workers=workers,
            usage=usage,
            versions=versions,
        )

        # 2. personas
        languages = {language} if language else {node.language for node in graph.analysed}
        corpus_language: Language = (
            language or Counter(node.language for node in graph.analysed).most_common(1)[0][0]
        )
        rng = random.Random(seed)
        chosen_personas, persona_note = await _personas(
            personas, graph, judge, corpus_language, work, usage, versions
        )

        # 3. questions
        writer = Writer(
            graph=graph,
            judge=judge,
            embeddings=embeddings,
            personas=chosen_personas,
            styles=list(styles),
            lengths=list(lengths),
            rng=rng,
            dedup_threshold=dedup_threshold,
            concurrency=concurrency,
            work=work,
            attempts_per_question=attempts_per_question,
            workers=workers,
        )
        accounting = SizeAccounting(requested=n)
        if persona_note:
            accounting.notes.append(persona_note)
        progress.start("writing questions", n)
        try:
            samples = await writer.run(n, weights, languages, accounting, progress)
        finally:
            progress.stop()
        usage["questions"] = writer.usage_writing
        usage["answerability"] = writer.usage_checking
        if work.interrupted.calls or work.interrupted.cached_calls:
            usage["interrupted"] = work.interrupted  # sent for work a kill stopped
        versions |= writer.prompt_versions
        result = GeneratedTestset(
            samples=samples,
            accounting=accounting,
            graph=graph,
            personas=chosen_personas,
            usage=usage,
            prompt_versions=sorted(versions),
            settings={
                "n": n,
                "mix": weights,
                "styles": list(styles),
                "lengths": list(lengths),
                "seed": seed,
                "language": language,
                "dedup_threshold": dedup_threshold,
                "attempts_per_question": attempts_per_question,
                "link": asdict(graph.settings),
                "judge": judge.describe(),
                "embeddings": embeddings.describe(),
            },
        )
        report_file = work.file("report.json")
        if report_file is not None:
            report_file.write_text(
                json.dumps(result.report(), ensure_ascii=False, indent=1, default=str),
                encoding="utf-8",
            )
        return result
    finally:
        flusher.cancel()
        await asyncio.gather(flusher, return_exceptions=True)
        work.in_flight.write()  # what an error or an interruption left in flight
        if workers is not None:
            await workers.close()


async def _the_graph(
    documents: DocumentsInput,
    graph: KnowledgeGraph | str | os.PathLike[str] | None,
    *,
    link: LinkSettings | None,
    chunk_size: int,
    chunk_overlap: int,
    judge: Judge,
    embeddings: Embeddings,
    language: Language | None,
    work: WorkDir,
    resume: bool,
    progress: ProgressReporter,
    workers: WorkerPool | None,
    usage: dict[str, Usage],
    versions: set[str],
) -> KnowledgeGraph:
    """The knowledge graph questions are written from: ``graph`` (loaded when a path, linked
    anew with ``link`` when given), else built from ``documents``' chunks and saved in the
    work directory, which is prepared for this corpus here. The build's usage goes into
    ``usage["graph"]``, the prompt versions used into ``versions``."""
    if isinstance(graph, (str, os.PathLike)):
        graph = KnowledgeGraph.load(graph)
    if graph is not None and link is not None:
        graph.link(link)
    if graph is None:
        chunks = as_chunks(documents, chunk_size=chunk_size, chunk_overlap=chunk_overlap)
        if not chunks:
            raise ValueError("no text to generate questions from: the documents are empty")
    else:
        chunks = []
    texts = (
        [(c.id, c.text) for c in chunks]
        if graph is None
        else [(node.id, node.text) for node in graph.nodes.values()]
    )
    listed = "\n".join(f"{i}\t{t}" for i, t in texts)
    corpus = hashlib.sha256(listed.encode("utf-8")).hexdigest()
    work.prepare(
        {
            "format": WORK_FORMAT,
            "corpus": corpus,
            "judge": judge.identity,
            "embeddings": embeddings.identity,
            "language": language,
        },
        resume,
    )
    if graph is None:
        stats = BuildStats()
        progress.start("reading chunks", len(chunks))
        try:
            graph = await abuild_graph(
                chunks,
                judge=judge,
                embeddings=embeddings,
                language=language,
                settings=link,
                checkpoint=work.file("nodes.jsonl"),
                in_flight=work.in_flight,
                on_progress=lambda done, used: progress.advance(done, usage=used),
                stats=stats,
                workers=workers,
            )
        finally:
            progress.stop()
        usage["graph"] = stats.usage
        versions |= stats.prompt_versions
        graph_file = work.file("graph.json")
        if graph_file is not None:
            graph.save(graph_file)
    versions |= set(graph.meta.get("prompt_versions", []))
    if not graph.analysed:
        errors = Counter(node.error for node in graph.nodes.values())
        raise JudgeError(
            f"the judge could not read any of the {len(graph.nodes)} chunks; most common "
            f"error: {errors.most_common(1)[0][0]}"
        )
    return graph


def generate_testset(documents: DocumentsInput, **options: Any) -> GeneratedTestset:
    """Generate a test set from your own documents, in their language.

    ``documents`` are paths (files or folders: .txt, .md, .html, .pdf, .docx),
    :class:`Document` objects, or your own :class:`Chunk` objects (their ids are kept, so
    ``reference_context_ids`` match your retriever's ids). ``n`` questions are split over the
    synthesizers by ``mix`` (``"single=0.5,multi=0.3,compare=0.2"``): single-hop (one chunk,
    one fact), multi-hop (chunks bridged by a shared entity) and comparison (facts of similar
    chunks combined), and on request the adversarial ``unanswerable`` (no chunk answers it;
    the reference abstains), ``false_premise`` (the passage contradicts its assumption),
    ``calculation`` (arithmetic over the chunks' numbers, checked in Python) and
    ``temporal`` (dates, versions, conditions), each kept only when its own check passes.
    Every sample gets a ``difficulty`` tag (easy, medium, hard; see
    :mod:`ragmeter.testset._difficulty`). ``personas`` is a number to write from the corpus,
    or your own list. Each question gets a persona, a style (plain, colloquial, typos, web)
    and a length (short, medium, long) in a seeded rotation.

    A question is kept when the judge finds its reference answer supported by its reference
    contexts (each needed), it is in the documents' language and it is not a near-duplicate
    (embedding cosine >= ``dedup_threshold``) of one kept. ``result.accounting`` says how
    many were asked for, kept and rejected per synthesizer and why; a synthesizer short of
    candidates hands its shortfall to the others, and the notes say so. A synthesizer stops
    after ``attempts_per_question`` attempts per question it owes (a weak judge whose
    multi-hop answers keep failing the check does not burn through every candidate).

    ``work_dir`` keeps the graph (``graph.json``) and every attempt; ``resume=True``
    continues an interrupted run. ``graph=`` reuses a saved graph (no judge call to read
    chunks), ``link=`` re-links it with other :class:`LinkSettings`.

    ``backend="ray"`` (or a :class:`ragmeter.runner.RayBackend`) reads the chunks (one judge
    call each, the part that grows with the corpus) and writes and checks the questions on a
    Ray cluster's workers, under the judge's limits for the whole cluster and with its cache
    shared (docs/scale.md); the personas, the deduplication (embeddings) and the bookkeeping
    stay here.
    """

    async def run() -> GeneratedTestset:
        judge = options.get("judge")
        embeddings = options.get("embeddings")
        try:
            return await agenerate_testset(documents, **options)
        finally:
            if judge is not None:
                await judge.release_loop_resources()
            if embeddings is not None:
                await embeddings.release_loop_resources()

    return run_sync(run())


def _validated(values: Sequence[Any], allowed: Sequence[Any], what: str) -> list[Any]:
    values = list(dict.fromkeys(values))
    unknown = [v for v in values if v not in allowed]
    if unknown or not values:
        raise ValueError(f"unknown {what}(s) {unknown or '(none given)'}; use {list(allowed)}")
    return values


async def _personas(
    personas: int | Sequence[str | Persona],
    graph: KnowledgeGraph,
    judge: Judge,
    language: Language,
    work: WorkDir,
    usage: dict[str, Usage],
    versions: set[str],
) -> tuple[list[Persona], str]:
    """The personas and a note on them; what writing them cost goes into
    ``usage["personas"]``, the prompt versions used into ``versions``."""
    usage["personas"] = Usage()
    if not isinstance(personas, int):
        given = [p if isinstance(p, Persona) else _parse_persona(str(p)) for p in personas]
        return (given or [NEUTRAL_PERSONA[language]]), ""
    if personas < 1:
        return [NEUTRAL_PERSONA[language]], ""
    saved = work.file("personas.json")
    if saved is not None and saved.exists():
        recorded = json.loads(saved.read_text(encoding="utf-8"))
        if isinstance(recorded, dict) and recorded.get("asked") == personas:
            usage["personas"] = Usage(**recorded.get("usage", {}))
            return [Persona(**r) for r in recorded["personas"]], ""
    nodes = [node for node in graph.analysed if node.language == language and node.summary]
    step = max(1, len(nodes) // PERSONA_SUMMARIES)
    summaries = [node.summary for node in nodes[::step]][:PERSONA_SUMMARIES]
    note = ""
    with work.in_flight.item("personas") as sample_id:
        try:
            steps = GenerationSteps(judge, language=language, sample_id=sample_id)
            written, facts = await steps.personas(summaries, personas)
            usage["personas"] = facts.usage
            versions |= facts.prompt_versions
        except JudgeConfigError:
            raise
        except JudgeError as error:
            written = []
            note = f"personas could not be written ({error}); a neutral reader asks every question"
        if written and len(written) < personas:
            note = f"the judge wrote {len(written)} of {personas} personas"
        chosen = written or [NEUTRAL_PERSONA[language]]
        if saved is not None:
            record = {
                "asked": personas,
                "personas": [asdict(p) for p in chosen],
                "usage": usage["personas"].to_dict(),
            }
            saved.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return chosen, note


def _parse_persona(text: str) -> Persona:
    name, sep, description = text.partition(":")
    return Persona(name.strip(), description.strip()) if sep else Persona(text.strip())
