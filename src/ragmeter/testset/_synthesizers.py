"""What each synthesizer can write about: candidates drawn from the knowledge graph.

A candidate is the chunks a question is written from and its focus (a keyphrase, or the
entity that bridges two chunks). Each synthesizer lists all of its candidates in a seeded,
document-interleaved order, and says in words why there are few when there are; the
generator then takes them in order until its quota is met.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

from ragmeter._text import numbers_in
from ragmeter.prompts import Language
from ragmeter.steps import QuestionKind
from ragmeter.testset._graph import Edge, KnowledgeGraph, Node, entity_key, overlapping
from ragmeter.testset._temporal import temporal_phrases

SynthesizerName = Literal[
    "single", "multi", "compare", "unanswerable", "false_premise", "calculation", "temporal"
]
SYNTHESIZERS: tuple[SynthesizerName, ...] = (
    "single",
    "multi",
    "compare",
    "unanswerable",
    "false_premise",
    "calculation",
    "temporal",
)
KIND: dict[SynthesizerName, QuestionKind] = {
    "single": "single_hop",
    "multi": "multi_hop",
    "compare": "comparison",
    "unanswerable": "unanswerable",
    "false_premise": "false_premise",
    "calculation": "calculation",
    "temporal": "temporal",
}
ALIASES: dict[str, SynthesizerName] = {
    **{name: name for name in SYNTHESIZERS},
    "single_hop": "single",
    "multi_hop": "multi",
    "comparison": "compare",
    "abstract": "compare",
    "out_of_scope": "unanswerable",
    "negation": "false_premise",
    "aggregation": "calculation",
    "conditional": "temporal",
}
#: Different focuses (keyphrases, then entities) one chunk may get single-hop questions on.
FOCUSES_PER_CHUNK = 3


@dataclass(frozen=True)
class Candidate:
    synthesizer: SynthesizerName
    chunk_ids: tuple[str, ...]
    focus: str
    language: Language

    @property
    def key(self) -> str:
        return f"{self.synthesizer}|{'+'.join(self.chunk_ids)}|{self.focus}"

    @property
    def sample_id(self) -> str:
        """A stable id for the sample written from this candidate."""
        return "gen-" + hashlib.sha256(self.key.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Supply:
    """A synthesizer's candidates and, for the accounting, why they are as many as they are."""

    candidates: list[Candidate]
    why: str


def candidates_for(
    name: SynthesizerName, graph: KnowledgeGraph, rng: random.Random, languages: set[Language]
) -> Supply:
    """All candidates of synthesizer ``name`` in chunks of ``languages``."""
    nodes = [node for node in graph.analysed if node.language in languages]
    if name == "single":
        return _single_hop(nodes, rng)
    if name == "multi":
        return _multi_hop(graph, nodes, rng)
    if name == "compare":
        return _comparison(graph, nodes, rng)
    if name in ("unanswerable", "false_premise"):
        return _one_per_chunk(name, nodes, rng)
    if name == "calculation":
        return _calculation(graph, nodes, rng)
    return _temporal(nodes, rng)


def _interleave(groups: Sequence[Sequence[Candidate]]) -> list[Candidate]:
    """Round robin over groups, so the first candidates come from different groups."""
    out: list[Candidate] = []
    longest = max((len(group) for group in groups), default=0)
    for i in range(longest):
        out.extend(group[i] for group in groups if i < len(group))
    return out


def _single_hop(nodes: Sequence[Node], rng: random.Random) -> Supply:
    by_document: dict[str, list[Node]] = defaultdict(list)
    for node in nodes:
        by_document[node.document_id].append(node)
    documents = list(by_document)
    rng.shuffle(documents)
    levels: list[list[Candidate]] = []
    for level in range(FOCUSES_PER_CHUNK):
        groups = []
        for document in documents:
            group = []
            for node in by_document[document]:
                focuses = _focuses(node)
                if level < len(focuses):
                    group.append(Candidate("single", (node.id,), focuses[level], node.language))
            rng.shuffle(group)
            groups.append(group)
        levels.append(_interleave(groups))
    candidates = [c for level in levels for c in level]
    why = f"{len(nodes)} analysed chunk(s), up to {FOCUSES_PER_CHUNK} focuses each"
    return Supply(candidates, why)


def _by_document(
    name: SynthesizerName, nodes: Sequence[Node], rng: random.Random, focus_of: Any
) -> list[Candidate]:
    """One candidate per chunk with a focus (``focus_of(node)``, ``None`` to skip it),
    documents interleaved."""
    by_document: dict[str, list[Candidate]] = defaultdict(list)
    for node in nodes:
        focus = focus_of(node)
        if focus:
            by_document[node.document_id].append(Candidate(name, (node.id,), focus, node.language))
    groups = [by_document[d] for d in sorted(by_document)]
    rng.shuffle(groups)
    for group in groups:
        rng.shuffle(group)
    return _interleave(groups)


def _one_per_chunk(name: SynthesizerName, nodes: Sequence[Node], rng: random.Random) -> Supply:
    """Unanswerable and false-premise questions: one per chunk, about its first focus."""
    candidates = _by_document(name, nodes, rng, lambda node: next(iter(_focuses(node)), None))
    return Supply(candidates, f"{len(candidates)} analysed chunk(s) with a focus, one each")


def _calculation(graph: KnowledgeGraph, nodes: Sequence[Node], rng: random.Random) -> Supply:
    """Chunk pairs (linked by an entity or by similarity) that both hold numbers first, then
    single chunks with at least two numbers."""
    usable = {node.id: node for node in nodes if numbers_in(node.text)}
    pairs: dict[tuple[str, str], Candidate] = {}
    for edge, a, b in _linked(graph.edges, usable):
        key = (a.id, b.id) if a.id < b.id else (b.id, a.id)
        focus = edge.shared[0] if edge.shared else _shared_topic(a, b)
        pairs.setdefault(key, Candidate("calculation", key, focus, a.language))
    multi = [pairs[key] for key in sorted(pairs)]
    rng.shuffle(multi)
    single = _by_document(
        "calculation",
        [node for node in usable.values() if len(numbers_in(node.text)) >= 2],
        rng,
        lambda node: next(iter(_focuses(node)), None),
    )
    why = (
        f"{len(usable)} chunk(s) hold numbers: {len(multi)} linked pair(s) and "
        f"{len(single)} chunk(s) with two numbers or more"
    )
    return Supply(multi + single, why)


def _temporal(nodes: Sequence[Node], rng: random.Random) -> Supply:
    """Chunks with a date, version, period or condition; the focus is the first one."""
    candidates = _by_document(
        "temporal", nodes, rng, lambda node: next(iter(temporal_phrases(node.text)), None)
    )
    return Supply(candidates, f"{len(candidates)} chunk(s) mention a date, version or condition")


def _linked(edges: Iterable[Edge], usable: Mapping[str, Node]) -> Iterator[tuple[Edge, Node, Node]]:
    """The edges between two ``usable`` chunks of one language, with the two chunks."""
    for edge in edges:
        a, b = usable.get(edge.source), usable.get(edge.target)
        if a is not None and b is not None and a.language == b.language:
            yield edge, a, b


def _focuses(node: Node) -> list[str]:
    seen: dict[str, str] = {}
    for item in (*node.keyphrases, *node.entities):
        key = entity_key(item)
        if key and key not in seen:
            seen[key] = item
    focuses = list(seen.values())[:FOCUSES_PER_CHUNK]
    return focuses or ([node.summary] if node.summary else [])


def _multi_hop(graph: KnowledgeGraph, nodes: Sequence[Node], rng: random.Random) -> Supply:
    usable = {node.id: node for node in nodes}
    cross: list[Candidate] = []
    within: list[Candidate] = []
    members: dict[str, set[str]] = defaultdict(set)
    for edge, a, b in _linked(graph.edges_of("entity"), usable):
        candidate = Candidate("multi", (a.id, b.id), edge.shared[0], a.language)
        (cross if a.document_id != b.document_id else within).append(candidate)
        for name in edge.shared:
            members[name] |= {a.id, b.id}
    triples = []
    for name, ids in sorted(members.items()):
        ordered = sorted(ids)
        rng.shuffle(ordered)
        for trio in combinations(ordered[:8], 3):
            chosen = [usable[i] for i in trio]
            if len({n.language for n in chosen}) == 1 and not any(
                overlapping(x, y) for x, y in combinations(chosen, 2)
            ):
                triples.append(Candidate("multi", trio, name, chosen[0].language))
                break
    for group in (cross, within, triples):
        rng.shuffle(group)
    candidates = _interleave([cross, triples]) + within
    pairs = len(cross) + len(within)
    if not pairs:
        with_entities = sum(1 for node in nodes if node.entities)
        why = f"no two chunks share an entity ({with_entities} chunk(s) have entities)"
    else:
        why = f"only {pairs} chunk pair(s) share an entity"
        if triples:
            why += f" and {len(triples)} entity(ies) link three chunks"
    return Supply(candidates, why)


def _comparison(graph: KnowledgeGraph, nodes: Sequence[Node], rng: random.Random) -> Supply:
    usable = {node.id: node for node in nodes}
    cross: list[Candidate] = []
    within: list[Candidate] = []
    for _, a, b in _linked(graph.edges_of("similarity"), usable):
        candidate = Candidate("compare", (a.id, b.id), _shared_topic(a, b), a.language)
        (cross if a.document_id != b.document_id else within).append(candidate)
    rng.shuffle(cross)
    rng.shuffle(within)
    pairs = len(cross) + len(within)
    threshold = graph.settings.similarity_threshold
    why = (
        f"{'only ' + str(pairs) if pairs else 'no'} chunk pair(s) similar enough to compare "
        f"(cosine >= {threshold:g}; a lower LinkSettings.similarity_threshold finds more)"
    )
    return Supply(cross + within, why)


def _shared_topic(a: Node, b: Node) -> str:
    keys_b = {entity_key(k): k for k in (*b.keyphrases, *b.entities)}
    for item in (*a.keyphrases, *a.entities):
        if entity_key(item) in keys_b:
            return item
    first_a = (a.keyphrases or a.entities or (a.summary,))[0]
    first_b = (b.keyphrases or b.entities or (b.summary,))[0]
    return f"{first_a} / {first_b}"
