"""Test-set generation: knowledge-graph build time at 1k / 10k chunks, and judge calls per
generated sample (issue 7).

**Corpus.** A seeded synthetic English corpus of :class:`~ragmeter.testset.Chunk` objects,
``--chunks-per-doc`` (10) chunks per document, each chunk 2-3 sentences. Every sentence names
one or two entities: capitalised made-up names (``Vorantel``, ``Kestrimo``) drawn with a
Zipf-like distribution (weight 1 / rank) from a vocabulary of ``--vocab-per-chunk`` (1.5)
names per chunk, so a few entities are shared by many chunks and most by few; each document
also has a main entity of its own that about half of its chunks repeat. Sentences start with
a word the scripted judge ignores ("The", "This", "It", "In") and never put two capitalised
words or a number after a name, so the judge's entities are exactly the names written (checked
on every chunk before timing). Embeddings are 384-dimensional: a topic vector (5 documents
per topic) + 0.3 x a document vector + 0.45 x noise, normalised (precomputed, looked up by
text through ``ScriptedEmbeddings(vectors=...)``; other texts, i.e. the questions, get its
default hash-seeded vectors). Chunks of one document then have a cosine of about 0.84 and
chunks of one topic about 0.77, so ``LinkSettings(similarity_threshold=0.7)`` (used
throughout) draws similarity edges within and across documents.

**Graph build.** ``asyncio.run(abuild_graph(chunks, judge=scripted_testset_judge(
record_calls=False), embeddings=ScriptedEmbeddings(dimension=384, vectors=...),
settings=LinkSettings(similarity_threshold=0.7)))`` with a fresh judge and embeddings (fresh
in-memory caches) per run, after one untimed warm-up build of 200 chunks. Timed: the whole
build; the ``graph.link()`` it ends with (``KnowledgeGraph.link`` wrapped with a timer); and
the built graph re-linked (``graph.link()`` again), with its two halves, entity edges
(``_entity_edges``, also once more with the cyclic GC off) and similarity edges
(``_similarity_edges``), timed apart (median of 5 each). Median of ``--repeats`` runs per
size of ``--sizes`` (all runs listed); ``--scaling-sizes`` (2k, 5k, 20k) get one build each,
to show how each step grows. Peak Python memory comes from a separate, untimed build under
``tracemalloc`` at each of ``--sizes`` (``--no-memory`` skips it).

**Similarity-edge recall.** Above ``ragmeter.testset._neighbours.EXACT_LIMIT`` (4,096) chunks
the similarity edges come from an inverted file, not from scoring every pair. At every size
built above it (``--no-recall`` skips this), the first build's graph is re-linked once more
with ``EXACT_LIMIT`` raised above the corpus size (module attribute patched, restored in a
``finally``): recall = share of the exact search's similarity edges (chunk pairs) that the
graph also has. ``_similarity_edges`` is timed both ways (5 runs each: median and fastest);
the inverted file's edges are checked to be those of the build.

**Judge calls per sample.** ``generate_testset(chunks, n=50, judge=..., embeddings=...,
personas=3, seed=0, link=LinkSettings(similarity_threshold=0.7))`` on the 1,000-chunk
corpus, then the same call again with ``graph=`` the saved graph file (the first run's graph,
``graph.save()``d) and a fresh judge, to show what a test set costs once the graph exists.

    .venv/bin/python bench/testset_bench.py --write              # ~3 min on 2 cores
    .venv/bin/python bench/testset_bench.py --sizes 1000 --scaling-sizes 2000 --repeats 1  # smoke
    .venv/bin/python bench/testset_bench.py --render-only --write  # the md from the saved json
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import functools
import gc
import hashlib
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
CACHE = BENCH / ".cache"  # gitignored
DEFAULT_JSON = CACHE / "testset_bench.json"
DEFAULT_MD = BENCH / "RESULTS_testset.md"
DIMENSION = 384
THRESHOLD = 0.7
DOCS_PER_TOPIC = 5
TOPIC_WEIGHTS = (1.0, 0.3, 0.45)  # topic, document, noise
LINEAR_UP_TO = 1.15  # growth exponent still read as "about linear"
STEP_REPEATS = 5  # re-runs of link() and of its two steps on each built graph
RECALL_REPEATS = 5  # timed runs of each similarity search in the recall check


# -- corpus -------------------------------------------------------------------------------------
def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


ONSETS = _words("b c d f g h k l m n p r s t v z br dr gr kr pr tr st sk sl fl pl th ch")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io")
CODAS = ("", "", "", "n", "r", "l", "s", "m", "nd", "rt")
NOUNS = _words(
    "report survey budget contract pipeline audit roadmap warehouse reactor harbour "
    "archive mission vaccine turbine network charter treaty festival campus orchard"
)
VERBS = _words("grew expanded stalled recovered doubled shrank improved changed")
VERBS2 = _words("connects compares supports funds reviews replaces")
VERBS3 = _words("notes explains argues records claims shows")
UNITS = _words("months weeks years quarters")


def entity_names(count: int, rng: np.random.Generator) -> list[str]:
    """``count`` distinct capitalised made-up names of 2-3 syllables."""
    names: dict[str, None] = {}
    while len(names) < count:
        syllables = int(rng.integers(2, 4))
        word = "".join(
            str(rng.choice(ONSETS)) + str(rng.choice(VOWELS)) + str(rng.choice(CODAS))
            for _ in range(syllables)
        )
        names[word.capitalize()] = None
    return list(names)


def sentence(rng: np.random.Generator, names: list[str], serial: int) -> str:
    """One sentence naming ``names`` (1 or 2), never two capitalised words in a row."""
    noun = str(rng.choice(NOUNS))
    if len(names) == 1:
        (a,) = names
        form = int(rng.integers(0, 2))
        if form == 0:
            return f"The {noun} of {a} {rng.choice(VERBS)} in year {serial}."
        return f"In that period the {noun} at {a} {rng.choice(VERBS)} by {serial % 97} percent."
    a, b = names
    form = int(rng.integers(0, 2))
    if form == 0:
        units = rng.choice(UNITS)
        return f"This {noun} {rng.choice(VERBS2)} {a} and {b} over {serial % 40 + 2} {units}."
    return f"It {rng.choice(VERBS3)} that {a} {rng.choice(VERBS)} the {noun} near {b}."


def make_corpus(
    n_chunks: int, *, chunks_per_doc: int, vocab_per_chunk: float, seed: int
) -> tuple[list[Any], np.ndarray, dict[str, Any]]:
    """Chunks, their embedding matrix (row i = chunk i) and a description of the corpus."""
    from ragmeter.testset import Chunk

    rng = np.random.default_rng(seed)
    vocab = entity_names(max(10, int(n_chunks * vocab_per_chunk)), rng)
    weights = 1.0 / np.arange(1, len(vocab) + 1)  # Zipf, exponent 1
    cdf = np.cumsum(weights / weights.sum())

    def draw(k: int) -> list[str]:
        picks = np.minimum(np.searchsorted(cdf, rng.random(k)), len(vocab) - 1)
        return [vocab[int(i)] for i in picks]

    n_docs = -(-n_chunks // chunks_per_doc)
    n_topics = max(1, -(-n_docs // DOCS_PER_TOPIC))
    topics = rng.standard_normal((n_topics, DIMENSION))
    chunks: list[Any] = []
    intended: list[list[str]] = []
    rows = []
    serial = 0
    for d in range(n_docs):
        doc_id = f"doc-{d:05d}"
        (main,) = draw(1)
        doc_vector = rng.standard_normal(DIMENSION)
        topic = topics[d // DOCS_PER_TOPIC]
        offset = 0
        for i in range(min(chunks_per_doc, n_chunks - len(chunks))):
            sentences = []
            named: list[str] = []
            for _ in range(int(rng.integers(2, 4))):
                k = int(rng.integers(1, 3))
                picks = draw(k)
                if not named and rng.random() < 0.5:
                    picks[0] = main
                if k == 2 and picks[0] == picks[1]:
                    picks = picks[:1]
                serial += 1
                sentences.append(sentence(rng, picks, 1900 + serial % 120))
                named.extend(picks)
            text = " ".join(sentences) + f" This is entry {len(chunks) + 1}."
            chunks.append(Chunk(f"{doc_id}-{i:02d}", doc_id, text, i, offset, offset + len(text)))
            offset += len(text) + 1
            intended.append(list(dict.fromkeys(named)))
            noise = rng.standard_normal(DIMENSION)
            vector = (
                TOPIC_WEIGHTS[0] * _unit(topic)
                + TOPIC_WEIGHTS[1] * _unit(doc_vector)
                + TOPIC_WEIGHTS[2] * _unit(noise)
            )
            rows.append(_unit(vector))
    _check_entities(chunks, intended)
    counts = Counter(name for names in intended for name in names)
    info = {
        "chunks": len(chunks),
        "documents": n_docs,
        "topics": n_topics,
        "vocabulary": len(vocab),
        "entities_used": len(counts),
        "entity_mentions_per_chunk": round(sum(counts.values()) / len(chunks), 2),
        "top_entity_chunks": counts.most_common(1)[0][1] if counts else 0,
        "entities_in_one_chunk": sum(1 for c in counts.values() if c == 1),
        "entities_in_over_50_chunks": sum(1 for c in counts.values() if c > 50),
        "mean_words_per_chunk": round(sum(len(c.text.split()) for c in chunks) / len(chunks), 1),
    }
    return chunks, np.asarray(rows, dtype=np.float32), info


def _unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def _check_entities(chunks: list[Any], intended: list[list[str]]) -> None:
    """The scripted judge must read exactly the names written."""
    from ragmeter.testing._testset import entities_in

    for chunk, names in zip(chunks, intended, strict=True):
        found = entities_in(chunk.text)
        if sorted(found) != sorted(names):
            raise SystemExit(f"corpus bug: {chunk.id} {chunk.text!r}: judge reads {found}")


def scripted_embeddings(chunks: list[Any], matrix: np.ndarray) -> Any:
    from ragmeter.testing import ScriptedEmbeddings

    index = {chunk.text: row for row, chunk in enumerate(chunks)}

    def vector(text: str) -> Any:
        row = index.get(text)
        if row is not None:
            return matrix[row]
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
        return np.random.default_rng(seed).standard_normal(DIMENSION)

    return ScriptedEmbeddings(vector, dimension=DIMENSION)


# -- graph build ------------------------------------------------------------------------------
def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed_link() -> list[float]:
    """Wrap ``KnowledgeGraph.link`` so each call appends its wall time to the returned list."""
    from ragmeter.testset import KnowledgeGraph

    durations: list[float] = []
    original = KnowledgeGraph.link
    if hasattr(original, "durations"):
        return original.durations  # type: ignore[no-any-return]

    @functools.wraps(original)
    def link(self: Any, settings: Any = None) -> Any:
        start = time.perf_counter()
        try:
            return original(self, settings)
        finally:
            durations.append(time.perf_counter() - start)

    link.durations = durations  # type: ignore[attr-defined]
    KnowledgeGraph.link = link  # type: ignore[method-assign]
    return durations


def similarity_recall(graph: Any) -> dict[str, Any]:
    """The graph's similarity edges against those of the exact search (every pair scored)."""
    from ragmeter.testset import _neighbours
    from ragmeter.testset._graph import _similarity_edges

    nodes, settings = graph.analysed, graph.settings
    built = {(e.source, e.target): e.score for e in graph.edges_of("similarity")}
    approximate_s, exact_s = [], []
    for _ in range(RECALL_REPEATS):
        t = time.perf_counter()
        approximate = _similarity_edges(nodes, settings)
        approximate_s.append(time.perf_counter() - t)
    found = {(e.source, e.target): e.score for e in approximate}
    if found != built:
        raise SystemExit("the inverted file gave other edges on re-linking than in the build")
    limit = _neighbours.EXACT_LIMIT
    _neighbours.EXACT_LIMIT = len(nodes) + 1
    try:
        for _ in range(RECALL_REPEATS):
            t = time.perf_counter()
            exact_edges = _similarity_edges(nodes, settings)
            exact_s.append(time.perf_counter() - t)
    finally:
        _neighbours.EXACT_LIMIT = limit
    exact = {(e.source, e.target): e.score for e in exact_edges}
    both = exact.keys() & found.keys()
    return {
        "exact_limit": limit,
        "list_size": _neighbours.LIST_SIZE,
        "probes": _neighbours.PROBES,
        "exact_edges": len(exact),
        "approximate_edges": len(found),
        "found": len(both),
        "recall": len(both) / len(exact) if exact else None,
        "approximate_only": len(found) - len(both),
        "max_score_difference": max((abs(exact[p] - found[p]) for p in both), default=0.0),
        "exact_s": statistics.median(exact_s),
        "approximate_s": statistics.median(approximate_s),
        "exact_runs_s": exact_s,
        "approximate_runs_s": approximate_s,
    }


def build_once(
    chunks: list[Any], matrix: np.ndarray, *, trace: bool = False, recall: bool = False
) -> dict[str, Any]:
    from ragmeter.testing import scripted_testset_judge
    from ragmeter.testset import LinkSettings, abuild_graph
    from ragmeter.testset._graph import _entity_edges, _similarity_edges

    settings = LinkSettings(similarity_threshold=THRESHOLD)
    judge = scripted_testset_judge(record_calls=False)
    embeddings = scripted_embeddings(chunks, matrix)
    links = _timed_link()
    gc.collect()
    if trace:
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
    cpu = _cpu_s()
    start = time.perf_counter()
    links.clear()
    graph = asyncio.run(abuild_graph(chunks, judge=judge, embeddings=embeddings, settings=settings))
    wall = time.perf_counter() - start
    cpu = _cpu_s() - cpu
    out: dict[str, Any] = {"n": len(chunks)}
    if trace:
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        out.update(traced_peak_bytes=peak - base, traced_retained_bytes=current - base)
        return out
    build_link = links[-1]
    summary = graph.summary()
    relink, entity_s, entity_nogc_s, similarity_s = [], [], [], []
    for _ in range(STEP_REPEATS):
        t = time.perf_counter()
        graph.link()
        relink.append(time.perf_counter() - t)
        t = time.perf_counter()
        _entity_edges(graph.analysed, graph.settings)
        entity_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        _similarity_edges(graph.analysed, graph.settings)
        similarity_s.append(time.perf_counter() - t)
        gc.collect()
        gc.disable()  # the entity step again without CPython's cyclic GC passes
        try:
            t = time.perf_counter()
            _entity_edges(graph.analysed, graph.settings)
            entity_nogc_s.append(time.perf_counter() - t)
        finally:
            gc.enable()
    if graph.summary() != summary:
        raise SystemExit(f"re-linking changed the graph: {summary} -> {graph.summary()}")
    keys = {e for node in graph.analysed for e in node.entities}
    out.update(
        wall_s=wall,
        cpu_s=cpu,
        link_in_build_s=build_link,
        analyse_embed_s=wall - build_link,
        relink_s=statistics.median(relink),
        entity_edges_s=statistics.median(entity_s),
        entity_edges_nogc_s=statistics.median(entity_nogc_s),
        similarity_edges_s=statistics.median(similarity_s),
        judge_calls=judge.n_calls,
        texts_embedded=len(embeddings.calls),
        distinct_entities=len(keys),
        entities_too_common=graph.meta.get("entities_too_common"),
        load_after=os.getloadavg()[0],
        **summary,
    )
    if recall:
        out["recall"] = similarity_recall(graph)
    return out


def run_builds(args: argparse.Namespace) -> dict[str, Any]:
    corpus_args = {
        "chunks_per_doc": args.chunks_per_doc,
        "vocab_per_chunk": args.vocab_per_chunk,
        "seed": args.seed,
    }
    from ragmeter.testset._neighbours import EXACT_LIMIT

    warm_chunks, warm_matrix, _ = make_corpus(200, **corpus_args)
    build_once(warm_chunks, warm_matrix)  # imports, schemas, first calls: not counted
    sizes: dict[str, Any] = {}
    for n in sorted(set(args.sizes) | set(args.scaling_sizes)):
        main = n in args.sizes
        chunks, matrix, info = make_corpus(n, **corpus_args)
        runs = []
        for r in range(args.repeats if main else 1):
            load = os.getloadavg()[0]
            recall = r == 0 and n > EXACT_LIMIT and not args.no_recall
            result = build_once(chunks, matrix, recall=recall)
            result["load_before"] = load
            runs.append(result)
            print(
                f"  {n:,} chunks, run {r + 1}: {result['wall_s']:.2f} s "
                f"(link {result['link_in_build_s']:.2f} s), {result['judge_calls']} judge calls, "
                f"{result['entity_edges']} entity / {result['similarity_edges']} similarity edges",
                flush=True,
            )
            if recall:
                rc = result["recall"]
                print(
                    f"  {n:,} chunks, similarity recall {rc['recall']:.4f} "
                    f"({rc['found']:,} of {rc['exact_edges']:,} exact edges; "
                    f"{rc['approximate_edges']:,} approximate), "
                    f"exact {rc['exact_s']:.3f} s, inverted file {rc['approximate_s']:.3f} s",
                    flush=True,
                )
        memory = None
        if main and not args.no_memory:
            memory = build_once(chunks, matrix, trace=True)
            print(f"  {n:,} chunks, tracemalloc peak {memory['traced_peak_bytes'] / 2**20:.1f} MiB")
        sizes[str(n)] = {"corpus": info, "runs": runs, "memory": memory, "main": main}
        del chunks, matrix
        gc.collect()
    return sizes


# -- judge calls per sample -----------------------------------------------------------------------
def _usage(result: Any) -> dict[str, dict[str, Any]]:
    return {phase: usage.to_dict() for phase, usage in result.usage.items()}


def run_generation(args: argparse.Namespace) -> dict[str, Any]:
    from ragmeter.testing import scripted_testset_judge
    from ragmeter.testset import LinkSettings, generate_testset

    chunks, matrix, info = make_corpus(
        args.gen_chunks,
        chunks_per_doc=args.chunks_per_doc,
        vocab_per_chunk=args.vocab_per_chunk,
        seed=args.seed,
    )
    out: dict[str, Any] = {"corpus": info, "n": args.gen_n}
    with tempfile.TemporaryDirectory() as tmp:
        graph_file = Path(tmp) / "graph.json"
        for label in ("fresh", "saved_graph"):
            judge = scripted_testset_judge(record_calls=False)
            embeddings = scripted_embeddings(chunks, matrix)
            options: dict[str, Any] = {
                "n": args.gen_n,
                "judge": judge,
                "embeddings": embeddings,
                "personas": 3,
                "seed": 0,
                "link": LinkSettings(similarity_threshold=THRESHOLD),
            }
            if label == "saved_graph":
                options["graph"] = graph_file
            start = time.perf_counter()
            result = generate_testset(chunks, **options)
            wall = time.perf_counter() - start
            if label == "fresh":
                result.graph.save(graph_file)
            usage = _usage(result)
            after_graph = sum(
                usage.get(p, {}).get("calls", 0) for p in ("personas", "questions", "answerability")
            )
            kept = len(result.samples)
            out[label] = {
                "wall_s": wall,
                "samples": kept,
                "accounting": result.accounting.to_dict(),
                "usage": usage,
                "judge_calls_per_sample": result.judge_calls_per_sample,
                "judge_calls_counted_by_judge": judge.n_calls,
                "calls_after_graph": after_graph,
                "calls_per_sample_after_graph": after_graph / kept if kept else None,
                "graph": result.graph.summary(),
                "by_synthesizer": dict(Counter(s.synthesizer for s in result.samples)),
                "texts_embedded": len(embeddings.calls),
            }
            print(
                f"  generate ({label}): {kept} samples, {judge.n_calls} judge calls, {wall:.2f} s",
                flush=True,
            )
    return out


# -- report -------------------------------------------------------------------------------------
def _git(*argv: str, cwd: Path = ROOT) -> str:
    try:
        return subprocess.run(
            ["git", *argv], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from importlib import metadata

    import ragmeter

    # the checkout ragmeter is imported from (this one's src/, or another through PYTHONPATH)
    source = Path(ragmeter.__file__).resolve().parents[1]
    versions = {}
    for dist in ("ragmeter", "numpy", "rapidfuzz", "pydantic"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": cpu,
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "versions": versions,
        "commit": _git("rev-parse", "--short", "HEAD", cwd=source),
        "dirty": bool(_git("status", "--porcelain", "--", ".", cwd=source)),
        "source": str(source),
        "blas_threads_env": {
            k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
        },
    }


def _mib(value: float | None) -> str:
    return "—" if value is None else f"{value / 2**20:.1f}"


def _med(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _step(entry: dict[str, Any], key: str) -> float:
    return _med(entry["runs"], key)


def _exponent(n0: int, t0: float, n1: int, t1: float) -> float:
    """k in time ~ n^k between two sizes (1: linear, 2: quadratic)."""
    return math.log(t1 / t0) / math.log(n1 / n0)


def render(data: dict[str, Any]) -> str:
    meta = data["meta"]
    lines: list[str] = []
    add = lines.append
    add("# Test-set generation: graph build time and judge calls per sample (issue 7)")
    add("")
    add(
        "Produced by `bench/testset_bench.py` (method in its docstring); scripted judge "
        "(`ragmeter.testing.scripted_testset_judge(record_calls=False)`) and scripted "
        "384-dimensional embeddings, so the figures are ragmeter's own work, no model time. "
        "Rerun to refresh; do not edit by hand."
    )
    add("")
    add("```sh")
    add(".venv/bin/python bench/testset_bench.py --write   # measure, save json, write this file")
    add(".venv/bin/python bench/testset_bench.py --render-only --write   # this file from the json")
    add("```")
    add("")
    add(f"- Date: {meta['date']}; command: `{meta['command']}`")
    add(
        f"- Machine: {meta['machine']['nproc']} CPUs (nproc), {meta['machine']['cpu']}, "
        f"{meta['machine']['os']}; 1-min load average before {meta['load_before']:.2f}, "
        f"after {meta['load_after']:.2f} (the machine is shared: other jobs may have run)"
    )
    versions = ", ".join(f"{k} {v}" for k, v in meta["machine"]["versions"].items())
    dirty = " (with uncommitted changes in src/)" if meta["machine"]["dirty"] else ""
    source = meta["machine"].get("source")
    where = (
        f", imported from a clean checkout of it (`PYTHONPATH={source}`)"
        if source and Path(source) != ROOT / "src" and not meta["machine"]["dirty"]
        else ""
    )
    add(
        f"- Python: {meta['machine']['python']}; {versions}; ragmeter commit "
        f"`{meta['machine']['commit']}`{dirty}{where}"
    )
    add("")
    builds = data.get("builds")
    if builds:
        lines += render_builds(builds, meta)
    gen = data.get("generation")
    if gen:
        lines += render_generation(gen)
    return "\n".join(lines).rstrip() + "\n"


def render_builds(builds: dict[str, Any], meta: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    add = lines.append
    every = sorted(builds, key=int)
    main = [n for n in every if builds[n].get("main", True)]
    add("## Knowledge-graph build time")
    add("")
    add(
        f"`abuild_graph` on the synthetic corpus, `LinkSettings(similarity_threshold={THRESHOLD})`"
        f" (other settings default: `max_similar=5`, `entity_match=90`, "
        f"`max_entity_chunks=50`); median of {meta['repeats']} run(s) per size after a "
        "200-chunk warm-up build; every run's wall time in the last column. The similarity "
        "edges are searched exactly up to `_neighbours.EXACT_LIMIT` chunks and through an "
        "inverted file above (next to last section)."
    )
    add("")
    add("Corpus (every size the script built):")
    add("")
    add(
        "| chunks | documents | topics | vocabulary | names used | entity mentions per chunk | "
        "chunks naming the commonest entity | names in 1 chunk | names in > 50 chunks | "
        "words per chunk |"
    )
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in every:
        c = builds[n]["corpus"]
        add(
            f"| {int(n):,} | {c['documents']:,} | {c['topics']:,} | {c['vocabulary']:,} | "
            f"{c['entities_used']:,} | {c['entity_mentions_per_chunk']} | "
            f"{c['top_entity_chunks']:,} | {c['entities_in_one_chunk']:,} | "
            f"{c['entities_in_over_50_chunks']:,} | {c['mean_words_per_chunk']} |"
        )
    add("")
    add(
        "| chunks | **build s** | s per 1,000 chunks | analyse + embed s | link in build s | "
        "re-link s | entity edges s | similarity edges s | CPU s | judge calls | "
        "entity edges | similarity edges | entities too common | tracemalloc peak MiB | "
        "graph held MiB | every run's build s |"
    )
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for n in main:
        entry = builds[n]
        runs = entry["runs"]
        memory = entry.get("memory") or {}
        first = runs[0]
        wall = _step(entry, "wall_s")
        add(
            f"| {int(n):,} | **{wall:.2f}** | {wall / (int(n) / 1000):.3f} | "
            f"{_step(entry, 'analyse_embed_s'):.2f} | {_step(entry, 'link_in_build_s'):.3f} | "
            f"{_step(entry, 'relink_s'):.3f} | {_step(entry, 'entity_edges_s'):.3f} | "
            f"{_step(entry, 'similarity_edges_s'):.3f} | {_step(entry, 'cpu_s'):.2f} | "
            f"{first['judge_calls']:,} | {first['entity_edges']:,} | "
            f"{first['similarity_edges']:,} | {first['entities_too_common']:,} | "
            f"{_mib(memory.get('traced_peak_bytes'))} | "
            f"{_mib(memory.get('traced_retained_bytes'))} | "
            + ", ".join(f"{r['wall_s']:.2f}" for r in runs)
            + " |"
        )
    add("")
    add(
        "*Analyse + embed* = build minus the `link()` the build ends with (one judge call and "
        "one embedded text per chunk); *re-link* = `graph.link()` on the built graph again, "
        f"median of {meta.get('step_repeats', 3)}, and its two steps timed apart "
        f"(`_entity_edges`, `_similarity_edges`, median of {meta.get('step_repeats', 3)} "
        "each). CPU s = user + system time of the process during the build. Peak "
        "memory: a separate build under `tracemalloc` (Python allocations, numpy arrays "
        "included), the peak during the build and what the graph still holds afterwards, both "
        "above the memory in use before it; the judge's and the embeddings' in-memory caches "
        "are part of both."
    )
    add("")
    if len(main) >= 2:
        lo, hi = builds[main[0]], builds[main[-1]]
        n0, n1 = int(main[0]), int(main[-1])
        factor = n1 / n0

        def growth(key: str) -> str:
            return f"x{_step(hi, key) / _step(lo, key):.2f}"

        add(
            f"**Growth from {n0:,} to {n1:,} chunks ({factor:.0f}x the chunks; linear = "
            f"x{factor:.0f}):** build {growth('wall_s')} ({_step(lo, 'wall_s') / n0 * 1000:.3f} "
            f"then {_step(hi, 'wall_s') / n1 * 1000:.3f} s per 1,000 chunks); analyse + embed "
            f"{growth('analyse_embed_s')}; re-link {growth('relink_s')}, of which the "
            f"entity-edge step {growth('entity_edges_s')} (with the cyclic GC off "
            f"{growth('entity_edges_nogc_s')}) and the similarity-edge step "
            f"{growth('similarity_edges_s')}. `link()` is "
            f"{_step(lo, 'link_in_build_s') / _step(lo, 'wall_s'):.0%} of the build at "
            f"{n0:,} chunks and {_step(hi, 'link_in_build_s') / _step(hi, 'wall_s'):.0%} at "
            f"{n1:,}."
        )
        add("")
    if len(every) >= 2:
        add(
            "Growth of each step over every size built (sizes outside the main table: one "
            f"build each; steps: median of {meta.get('step_repeats', 3)} re-runs on that "
            "build):"
        )
        add("")
        add(
            "| chunks | builds | build s | analyse + embed s | per 1,000 chunks | entity-edge "
            "step s | same, GC off | per 1,000 chunks (GC off) | similarity-edge step s | "
            "per 1,000 chunks | entity edges | similarity edges |"
        )
        add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for n in every:
            entry = builds[n]
            k = int(n) / 1000
            add(
                f"| {int(n):,} | {len(entry['runs'])} | {_step(entry, 'wall_s'):.2f} | "
                f"{_step(entry, 'analyse_embed_s'):.2f} | "
                f"{_step(entry, 'analyse_embed_s') / k:.3f} | "
                f"{_step(entry, 'entity_edges_s'):.3f} | "
                f"{_step(entry, 'entity_edges_nogc_s'):.3f} | "
                f"{_step(entry, 'entity_edges_nogc_s') / k:.4f} | "
                f"{_step(entry, 'similarity_edges_s'):.3f} | "
                f"{_step(entry, 'similarity_edges_s') / k:.4f} | "
                f"{entry['runs'][0]['entity_edges']:,} | "
                f"{entry['runs'][0]['similarity_edges']:,} |"
            )
        add("")
        lo, hi = builds[every[0]], builds[every[-1]]
        n0, n1 = int(every[0]), int(every[-1])

        def k(key: str) -> str:
            return f"{_exponent(n0, _step(lo, key), n1, _step(hi, key)):.2f}"

        add(
            f"Exponent k in time ~ chunks^k from {n0:,} to {n1:,} chunks (1 = linear, "
            f"2 = quadratic): build {k('wall_s')}, analyse + embed {k('analyse_embed_s')}, "
            f"entity-edge step {k('entity_edges_s')} ({k('entity_edges_nogc_s')} with the GC "
            f"off), similarity-edge step {k('similarity_edges_s')}."
        )
        add("")
        steps = {
            "analyse + embed": "analyse_embed_s",
            "entity-edge step (GC off)": "entity_edges_nogc_s",
            "similarity-edge step": "similarity_edges_s",
        }
        faster = [
            name
            for name, key in steps.items()
            if _exponent(n0, _step(lo, key), n1, _step(hi, key)) > LINEAR_UP_TO
        ]
        add(
            f"Reading (k above {LINEAR_UP_TO} counted as faster than linear): "
            + (
                "every step grows about linearly."
                if not faster
                else "faster than linear: " + ", ".join(faster) + "; the other steps grow "
                "about linearly."
            )
        )
        add("")
        above = [n for n in every if "recall" in builds[n]["runs"][0]]
        if above and len(above) >= 2:
            limit = builds[above[0]]["runs"][0]["recall"]["exact_limit"]
            a, b = builds[above[0]], builds[above[-1]]
            m0, m1 = int(above[0]), int(above[-1])
            key = "similarity_edges_s"
            k_above = _exponent(m0, _step(a, key), m1, _step(b, key))
            add(
                f"The similarity-edge step changes method between the sizes: every pair is "
                f"scored up to {limit:,} chunks, an inverted file is searched above. From "
                f"{m0:,} to {m1:,} chunks (inverted file at both) its exponent is {k_above:.2f}."
            )
            add("")
    lines += render_recall(builds)
    return lines


def render_recall(builds: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    add = lines.append
    every = sorted(builds, key=int)
    measured = [n for n in every if "recall" in builds[n]["runs"][0]]
    if not measured:
        return lines
    first = builds[measured[0]]["runs"][0]["recall"]
    limit = first["exact_limit"]
    add("## Similarity edges: inverted file against the exact search")
    add("")
    add(
        f"Up to {limit:,} chunks `_similarity_edges` scores every pair (exact); above, it "
        f"searches an inverted file (k-means lists of about {first['list_size']} vectors, "
        f"{first['probes']} lists probed per vector). At each size built above {limit:,}, the "
        "first build's graph was re-linked with `_neighbours.EXACT_LIMIT` raised above the "
        "corpus size to get the exact edges. *Recall* = share of the exact similarity edges "
        "(chunk pairs) that the built graph also has; *inverted file only* = its edges the "
        "exact search does not draw (a chunk whose true neighbour was missed takes its next "
        f"best instead). Step times: `_similarity_edges`, {RECALL_REPEATS} runs each, median "
        "(fastest in brackets; the fastest is the least disturbed by other jobs on the machine)."
    )
    add("")
    add(
        "| chunks | exact edges | inverted-file edges | in both | **recall** | inverted file "
        "only | largest score difference (pairs in both) | exact step s | inverted-file step s "
        "| exact / inverted file (medians) |"
    )
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in measured:
        r = builds[n]["runs"][0]["recall"]
        recall = "—" if r["recall"] is None else f"{r['recall']:.4f}"
        add(
            f"| {int(n):,} | {r['exact_edges']:,} | {r['approximate_edges']:,} | "
            f"{r['found']:,} | **{recall}** | {r['approximate_only']:,} | "
            f"{r['max_score_difference']:.1e} | {r['exact_s']:.3f} "
            f"({min(r.get('exact_runs_s', [r['exact_s']])):.3f}) | {r['approximate_s']:.3f} "
            f"({min(r.get('approximate_runs_s', [r['approximate_s']])):.3f}) | "
            f"x{r['exact_s'] / r['approximate_s']:.1f} |"
        )
    add("")
    if len(measured) >= 2:
        n0, n1 = int(measured[0]), int(measured[-1])
        lo = builds[measured[0]]["runs"][0]["recall"]
        hi = builds[measured[-1]]["runs"][0]["recall"]
        add(
            f"Exponent k in time ~ chunks^k from {n0:,} to {n1:,} chunks (medians): "
            f"inverted-file step {_exponent(n0, lo['approximate_s'], n1, hi['approximate_s']):.2f}"
            f", exact step {_exponent(n0, lo['exact_s'], n1, hi['exact_s']):.2f}."
        )
        add("")
    return lines


def render_generation(gen: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    add = lines.append
    add("## Judge calls per generated sample")
    add("")
    add(
        f"`generate_testset(chunks, n={gen['n']}, judge=scripted_testset_judge("
        "record_calls=False), embeddings=..., personas=3, seed=0, "
        f"link=LinkSettings(similarity_threshold={THRESHOLD}))` on the "
        f"{gen['corpus']['chunks']:,}-chunk corpus (*fresh*: the graph is built in the call), "
        "then the same call with `graph=` the first run's graph saved to a file and a fresh "
        "judge (*saved graph*). Judge calls are uncached calls (`Usage.calls`); the judge's own "
        "call counter agrees in both rows."
    )
    add("")
    add(
        "| run | samples kept | graph calls | personas calls | questions calls | "
        "answerability calls | all calls | **`judge_calls_per_sample`** | calls per sample "
        "without the graph | judge's own count | wall s |"
    )
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, name in (("fresh", "fresh (builds the graph)"), ("saved_graph", "saved graph")):
        r = gen.get(label)
        if not r:
            continue
        u = r["usage"]

        def calls(phase: str, u: dict[str, Any] = u) -> str:
            return f"{u[phase]['calls']:,}" if phase in u else "— (none)"

        total = sum(v["calls"] for v in u.values())
        per = r["judge_calls_per_sample"]
        after = r["calls_per_sample_after_graph"]
        add(
            f"| {name} | {r['samples']} | {calls('graph')} | {calls('personas')} | "
            f"{calls('questions')} | {calls('answerability')} | {total:,} | "
            f"**{per:.2f}** | {after:.2f} | {r['judge_calls_counted_by_judge']:,} | "
            f"{r['wall_s']:.2f} |"
            if per is not None and after is not None
            else f"| {name} | 0 | | | | | {total:,} | — | — | — | {r['wall_s']:.2f} |"
        )
    add("")
    add(
        "Graph-building calls are one per chunk and are paid once: every further test set "
        "generated from the saved graph (`graph=`) costs only the personas, questions and "
        "answerability calls (the *saved graph* row)."
    )
    add("")
    fresh = gen.get("fresh")
    if fresh and "answerability" in fresh["usage"] and "questions" in fresh["usage"]:
        attempted = sum(a["attempted"] for a in fresh["accounting"]["synthesizers"].values())
        if attempted:
            add(
                f"Per attempted question ({attempted} attempts, fresh run): "
                f"{fresh['usage']['questions']['calls'] / attempted:.2f} questions call(s) and "
                f"{fresh['usage']['answerability']['calls'] / attempted:.2f} answerability "
                "call(s)."
            )
            add("")
    if fresh:
        acc = fresh["accounting"]
        add(
            f"Size accounting (`result.accounting.to_dict()`, fresh run): requested "
            f"{acc['requested']}, produced {acc['produced']}."
        )
        add("")
        add(
            "| synthesizer | requested | planned | candidates available | attempted | kept | "
            "rejected (by reason) | gave | took |"
        )
        add("|---|---:|---:|---:|---:|---:|---|---|---|")
        for name, a in acc["synthesizers"].items():
            rejected = ", ".join(f"{v} {k}" for k, v in a["rejected"].items()) or "0"
            gave = ", ".join(f"{v} to {k}" for k, v in a["gave"].items()) or "—"
            took = ", ".join(f"{v} from {k}" for k, v in a["took"].items()) or "—"
            add(
                f"| {name} | {a['requested']} | {a['planned']} | {a['available']:,} | "
                f"{a['attempted']} | {a['produced']} | {rejected} | {gave} | {took} |"
            )
        add("")
        if acc["notes"]:
            add("Notes from the accounting:")
            add("")
            for note in acc["notes"]:
                add(f"- {note}")
            add("")
        saved = gen.get("saved_graph")
        if saved:
            same = saved["accounting"] == acc
            add(
                "The saved-graph run's accounting is "
                + ("identical." if same else "different: " + json.dumps(saved["accounting"]))
            )
            add("")
        add(
            f"Graph of the fresh run: {fresh['graph']['chunks']:,} chunks, "
            f"{fresh['graph']['entity_edges']:,} entity edges, "
            f"{fresh['graph']['similarity_edges']:,} similarity edges. Texts embedded: "
            f"{fresh['texts_embedded']:,} (chunks and the questions' near-duplicate check)."
        )
        add("")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="chunk counts for the build timing")
    parser.add_argument("--repeats", type=int, default=3, help="timed builds per size")
    parser.add_argument(
        "--scaling-sizes",
        default="2000,5000,20000",
        help="more chunk counts, one build each, for the growth of each step",
    )
    parser.add_argument("--chunks-per-doc", type=int, default=10)
    parser.add_argument("--vocab-per-chunk", type=float, default=1.5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--gen-chunks", type=int, default=1000, help="corpus for generate_testset")
    parser.add_argument("--gen-n", type=int, default=50, help="questions asked for")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc builds")
    parser.add_argument(
        "--no-recall", action="store_true", help="skip the exact search above EXACT_LIMIT"
    )
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--no-generate", action="store_true")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--write", action="store_true", help=f"write {DEFAULT_MD.name}")
    parser.add_argument("--out", type=Path, default=DEFAULT_MD)
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    args.scaling_sizes = [int(s) for s in args.scaling_sizes.split(",") if s.strip()]
    if not args.render_only:
        data: dict[str, Any] = {}
        load_before = os.getloadavg()[0]
        if not args.no_build:
            print(f"graph build: {args.sizes} chunks, {args.repeats} run(s) each", flush=True)
            data["builds"] = run_builds(args)
        if not args.no_generate:
            print(f"generate_testset: n={args.gen_n} on {args.gen_chunks:,} chunks", flush=True)
            data["generation"] = run_generation(args)
        data["meta"] = {
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "command": "python " + " ".join(["bench/testset_bench.py", *sys.argv[1:]]),
            "machine": machine(),
            "repeats": args.repeats,
            "step_repeats": STEP_REPEATS,
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=1))
    data = json.loads(args.json.read_text())
    text = render(data)
    print(text)
    if args.write:
        args.out.write_text(text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
