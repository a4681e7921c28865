"""The knowledge graph behind multi-hop questions: one node per chunk (summary, keyphrases,
entities, embedding) and edges between chunks that share an entity or say similar things.

Building it costs one judge call per chunk and one embedding per chunk, nothing more: edges
come from an inverted index of normalised entities (fuzzy-merged within blocks of names that
start alike) and from each chunk's nearest neighbours by cosine similarity (every pair
scored up to a few thousand chunks, an inverted file above: ``_neighbours.py``). No step
enumerates clusters or paths, so build time grows linearly with the number of chunks
(bench/testset_bench.py). Edges are recomputed from the nodes in seconds, so a saved graph
can be re-linked with other settings without asking the judge again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from rapidfuzz import fuzz

from ragmeter._services import check_regular_file
from ragmeter.embed import Embeddings, decode_vector, encode_vector
from ragmeter.judge import Judge, JudgeConfigError, JudgeError, Usage
from ragmeter.prompts import Language, detect_language
from ragmeter.steps import Facts, GenerationSteps
from ragmeter.testset._chunking import Chunk
from ragmeter.testset._neighbours import nearest_pairs
from ragmeter.testset._workdir import InFlight

if TYPE_CHECKING:
    from ragmeter.runner import WorkerPool

GRAPH_FORMAT = "ragmeter-knowledge-graph"
GRAPH_VERSION = 1
EdgeKind = Literal["entity", "similarity"]


@dataclass
class Node:
    """A chunk and what the judge read in it. ``error`` says why it could not be analysed."""

    id: str
    document_id: str
    text: str
    language: Language
    index: int = 0
    heading_path: tuple[str, ...] = ()
    summary: str = ""
    keyphrases: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    embedding: np.ndarray | None = field(default=None, repr=False)
    error: str | None = None

    @property
    def analysed(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(replace(self, embedding=None))
        data["embedding"] = None if self.embedding is None else encode_vector(self.embedding)
        data["text_sha256"] = text_hash(self.text)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Node:
        embedding = data.get("embedding")
        return cls(
            id=data["id"],
            document_id=data["document_id"],
            text=data["text"],
            language=data["language"],
            index=int(data.get("index", 0)),
            heading_path=tuple(data.get("heading_path", ())),
            summary=data.get("summary", ""),
            keyphrases=tuple(data.get("keyphrases", ())),
            entities=tuple(data.get("entities", ())),
            embedding=decode_vector(embedding) if embedding else None,
            error=data.get("error"),
        )


@dataclass(frozen=True)
class Edge:
    """Two chunks linked by the entities they share or by the similarity of their texts."""

    source: str
    target: str
    kind: EdgeKind
    shared: tuple[str, ...] = ()
    score: float = 0.0


@dataclass(frozen=True)
class LinkSettings:
    """How edges are drawn; changing these re-links a graph without judge calls.

    ``similarity_threshold`` is the least cosine similarity for a similarity edge and
    ``max_similar`` the most such edges per chunk. ``entity_match`` is the least rapidfuzz
    ratio (0-100) at which two entity names are taken as the same entity. An entity found
    in more than ``max_entity_chunks`` chunks (a product name on every page) links too much
    to make a useful bridge and is left out.
    """

    similarity_threshold: float = 0.8
    max_similar: int = 5
    entity_match: float = 90.0
    max_entity_chunks: int = 50


@dataclass
class KnowledgeGraph:
    nodes: dict[str, Node]
    edges: list[Edge] = field(default_factory=list)
    settings: LinkSettings = field(default_factory=LinkSettings)
    meta: dict[str, Any] = field(default_factory=dict)

    # -- reading ---------------------------------------------------------------------------
    @property
    def analysed(self) -> list[Node]:
        return [node for node in self.nodes.values() if node.analysed]

    def edges_of(self, kind: EdgeKind) -> list[Edge]:
        return [edge for edge in self.edges if edge.kind == kind]

    def summary(self) -> dict[str, int]:
        return {
            "chunks": len(self.nodes),
            "analysed": len(self.analysed),
            "entity_edges": len(self.edges_of("entity")),
            "similarity_edges": len(self.edges_of("similarity")),
        }

    # -- linking ---------------------------------------------------------------------------
    def link(self, settings: LinkSettings | None = None) -> KnowledgeGraph:
        """(Re)compute the edges from the nodes; returns ``self``."""
        self.settings = settings or self.settings
        nodes = self.analysed
        entity_edges, skipped = _entity_edges(nodes, self.settings)
        self.edges = entity_edges + _similarity_edges(nodes, self.settings)
        self.meta["entities_too_common"] = skipped
        return self

    # -- files -----------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write the graph as one JSON file (embeddings as base64 float32)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "format": GRAPH_FORMAT,
            "version": GRAPH_VERSION,
            "settings": asdict(self.settings),
            "meta": self.meta,
            "nodes": [node.to_dict() for node in self.nodes.values()],
            "edges": [asdict(edge) for edge in self.edges],
        }
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        temporary.replace(path)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> KnowledgeGraph:
        path = Path(path)
        check_regular_file(
            path,
            what="knowledge graph file",
            fix="give the graph.json that ragmeter generate saved in its work folder",
        )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: not a readable knowledge graph ({error})") from error
        if not isinstance(data, dict) or data.get("format") != GRAPH_FORMAT:
            raise ValueError(f"{path}: not a ragmeter knowledge graph file")
        if data.get("version") != GRAPH_VERSION:
            raise ValueError(
                f"{path}: graph format version {data.get('version')}, this ragmeter reads "
                f"{GRAPH_VERSION}; build it again"
            )
        nodes = [Node.from_dict(item) for item in data["nodes"]]
        return cls(
            nodes={node.id: node for node in nodes},
            edges=[
                Edge(e["source"], e["target"], e["kind"], tuple(e["shared"]), e["score"])
                for e in data["edges"]
            ],
            settings=LinkSettings(**data.get("settings", {})),
            meta=data.get("meta", {}),
        )


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# -- building ----------------------------------------------------------------------------------
#: Chunks analysed and embedded per window; a window is checkpointed as a whole.
WINDOW = 256


@dataclass
class BuildStats:
    usage: Usage = field(default_factory=Usage)
    prompt_versions: set[str] = field(default_factory=set)
    reused: int = 0


async def abuild_graph(
    chunks: Sequence[Chunk],
    *,
    judge: Judge,
    embeddings: Embeddings,
    language: Language | None = None,
    settings: LinkSettings | None = None,
    checkpoint: str | Path | None = None,
    on_progress: Callable[[int, Usage], None] | None = None,  # (chunks done, their usage)
    stats: BuildStats | None = None,
    workers: WorkerPool | None = None,
    in_flight: InFlight | None = None,
) -> KnowledgeGraph:
    """Analyse every chunk (one judge call each), embed it, and link the graph.

    With ``checkpoint`` (a JSONL file), each analysis is appended as soon as the judge
    answers and the embeddings window by window; nodes already there (same chunk id and
    text) are reused, so an interrupted build resumes where it stopped. A chunk the judge
    cannot read is kept with its ``error`` and left out of question writing; a judge that
    refuses its configuration stops the build.

    ``workers`` (:meth:`ragmeter.runner.RayBackend.start` with ``judge``) analyses the chunks
    on a Ray cluster's workers; the analyses come back here and are checkpointed as above.
    ``in_flight`` counts each analysis's calls until its checkpoint is written.
    """
    in_flight = in_flight if in_flight is not None else InFlight(None)
    stats = stats if stats is not None else BuildStats()
    done = _read_checkpoint(checkpoint) if checkpoint is not None else {}
    seen: set[str] = set()
    for chunk in chunks:
        if chunk.id in seen:
            raise ValueError(f"two chunks share the id {chunk.id!r}; chunk ids must be unique")
        seen.add(chunk.id)
    nodes: dict[str, Node] = {}
    pending: list[Chunk] = []
    for chunk in chunks:
        previous = done.get(chunk.id)
        if previous is not None and previous[0] == text_hash(chunk.text):
            nodes[chunk.id] = previous[1]
            stats.usage = stats.usage + previous[2]  # paid in an earlier run
            stats.reused += 1
        else:
            pending.append(chunk)
    if on_progress is not None and stats.reused:
        on_progress(stats.reused, Usage())

    async def analyse(chunk: Chunk) -> Node:
        with in_flight.item(f"chunk:{chunk.id}") as sample_id:
            if workers is None:
                node, facts = await _analyse(chunk, judge, language, sample_id)
            else:
                node, facts = await workers.call(
                    _analyse_on_worker, chunk, language, what=f"chunk {chunk.id!r}"
                )
            if facts is not None:
                stats.usage = stats.usage + facts.usage
                stats.prompt_versions |= facts.prompt_versions
            if checkpoint is not None:
                spent = facts.usage.to_dict() if facts is not None else {}
                _append_checkpoint(checkpoint, {**node.to_dict(), "usage": spent})
        if on_progress is not None:
            on_progress(1, facts.usage if facts is not None else Usage())
        return node

    for start in range(0, len(pending), WINDOW):
        for node in await asyncio.gather(
            *(analyse(chunk) for chunk in pending[start : start + WINDOW])
        ):
            nodes[node.id] = node
    unembedded = [node for node in nodes.values() if node.analysed and node.embedding is None]
    for start in range(0, len(unembedded), WINDOW):
        window = unembedded[start : start + WINDOW]
        vectors = await embeddings.embed(
            [node.text for node in window], kind="passage", scope="testset_graph"
        )
        for node, vector in zip(window, vectors, strict=True):
            node.embedding = vector
        if checkpoint is not None:
            encoded = {n.id: encode_vector(v) for n, v in zip(window, vectors, strict=True)}
            _append_checkpoint(checkpoint, {"embeddings": encoded})
    ordered = {chunk.id: nodes[chunk.id] for chunk in chunks}
    graph = KnowledgeGraph(ordered, settings=settings or LinkSettings())
    graph.meta.update(
        {
            "judge": judge.describe(),
            "embeddings": embeddings.describe(),
            "prompt_versions": sorted(stats.prompt_versions),
        }
    )
    return graph.link()


async def _analyse_on_worker(
    judge: Judge, chunk: Chunk, language: Language | None
) -> tuple[Node, Facts | None]:
    """:func:`_analyse` on a Ray worker, whose services are the run's judge."""
    return await _analyse(chunk, judge, language)


async def _analyse(
    chunk: Chunk, judge: Judge, language: Language | None, sample_id: str | None = None
) -> tuple[Node, Facts | None]:
    node_language = language or detect_language(chunk.text)
    node = Node(
        id=chunk.id,
        document_id=chunk.document_id,
        text=chunk.text,
        language=node_language,
        index=chunk.index,
        heading_path=chunk.heading_path,
    )
    steps = GenerationSteps(judge, language=node_language, sample_id=sample_id)
    try:
        analysis, facts = await steps.analyse_chunk(chunk.text)
    except JudgeConfigError:
        raise
    except JudgeError as error:
        node.error = f"{type(error).__name__}: {error}"
        return node, None
    node.summary = analysis.summary
    node.keyphrases = analysis.keyphrases
    node.entities = analysis.entities
    return node, facts


def _read_checkpoint(path: str | Path) -> dict[str, tuple[str, Node, Usage]]:
    """Analysed nodes by chunk id, with the hash of the text they were read from and what
    reading it cost, and with the embeddings recorded after them."""
    path = Path(path)
    if not path.exists():
        return {}
    done: dict[str, tuple[str, Node, Usage]] = {}
    vectors: dict[str, Any] = {}
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            try:
                data = json.loads(line)
                if "embeddings" in data:
                    vectors.update(data["embeddings"])
                    continue
                node = Node.from_dict(data)
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
                continue  # a line cut short by a kill: that chunk is analysed again
            if node.analysed:
                usage = Usage(**data["usage"]) if data.get("usage") else Usage()
                done[node.id] = (data.get("text_sha256", ""), node, usage)
    for node_id, value in vectors.items():
        if node_id in done:
            done[node_id][1].embedding = decode_vector(value)
    return done


def _append_checkpoint(path: str | Path, record: dict[str, Any]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


# -- edges -------------------------------------------------------------------------------------
def entity_key(name: str) -> str:
    """The form entity names are matched in: width, case, spacing, punctuation and a leading
    English article aside.

    >>> entity_key("The Pixel-8 "), entity_key("ＰＩＸＥＬ ８"), entity_key("《民法典》")
    ('pixel8', 'pixel8', '民法典')
    """
    text = unicodedata.normalize("NFKC", name).casefold().strip()
    if text.startswith("the "):
        text = text[4:]
    return "".join(ch for ch in text if ch.isalnum())


#: Names compared pairwise only within a block of names sharing their first characters;
#: a block larger than this is matched exactly (keeps fuzzy matching linear).
MAX_FUZZY_BLOCK = 200


def _canonical_keys(keys: Iterable[str], threshold: float) -> dict[str, str]:
    """Map each entity key to a representative, merging keys within ``threshold`` of each
    other (rapidfuzz ratio) among keys that start with the same two characters."""
    blocks: dict[str, list[str]] = defaultdict(list)
    for key in sorted(set(keys)):
        blocks[key[:2]].append(key)
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.get(key, key) != key:
            key = parent[key]
        return key

    for block in blocks.values():
        if len(block) > MAX_FUZZY_BLOCK:
            continue
        for i, a in enumerate(block):
            for b in block[i + 1 :]:
                if min(len(a), len(b)) >= 4 and fuzz.ratio(a, b) >= threshold:
                    root_a, root_b = find(a), find(b)
                    if root_a != root_b:
                        parent[max(root_a, root_b)] = min(root_a, root_b)
    return {key: find(key) for block in blocks.values() for key in block}


def overlapping(a: Node, b: Node) -> bool:
    """Neighbouring chunks of one document share their overlap text: not two hops."""
    return a.document_id == b.document_id and abs(a.index - b.index) <= 1


def _entity_edges(nodes: Sequence[Node], settings: LinkSettings) -> tuple[list[Edge], int]:
    surface: dict[str, str] = {}
    keyed: list[list[str]] = []
    for node in nodes:
        keys = []
        for name in node.entities:
            key = entity_key(name)
            if len(key) >= 2:
                surface.setdefault(key, name)
                keys.append(key)
        keyed.append(keys)
    canonical = _canonical_keys(surface, settings.entity_match)
    postings: dict[str, list[int]] = defaultdict(list)
    for position, keys in enumerate(keyed):
        for root in dict.fromkeys(canonical[key] for key in keys):
            postings[root].append(position)
    shared: dict[tuple[int, int], list[str]] = defaultdict(list)
    too_common = 0
    for root, positions in postings.items():
        if len(positions) > settings.max_entity_chunks:
            too_common += 1
            continue
        for i, a in enumerate(positions):
            for b in positions[i + 1 :]:
                if not overlapping(nodes[a], nodes[b]):
                    shared[(a, b)].append(surface[root])
    edges = [
        Edge(nodes[a].id, nodes[b].id, "entity", tuple(names), float(len(names)))
        for (a, b), names in sorted(shared.items())
    ]
    return edges, too_common


def _similarity_edges(nodes: Sequence[Node], settings: LinkSettings) -> list[Edge]:
    embedded = [(node, node.embedding) for node in nodes if node.embedding is not None]
    usable = [node for node, _ in embedded]
    if len(usable) < 2:
        return []
    _, groups = np.unique([node.document_id for node in usable], return_inverse=True)
    pairs = nearest_pairs(
        np.stack([vector for _, vector in embedded]),
        threshold=settings.similarity_threshold,
        k=settings.max_similar,
        groups=groups,
        positions=np.array([node.index for node in usable]),
    )
    return [
        Edge(usable[a].id, usable[b].id, "similarity", (), round(float(score), 6))
        for a, b, score in zip(
            pairs.first.tolist(), pairs.second.tolist(), pairs.score.tolist(), strict=True
        )
    ]
