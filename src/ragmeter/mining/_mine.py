"""``mine()``: pick the production questions worth labelling.

Real questions make the best test set, but a log holds thousands, many of them the same
question again. Mining keeps one of each group of near-duplicates, clusters the rest by
meaning and picks across the clusters in proportion to the traffic each stands for (every
cluster at least once when ``n`` allows), nearest to the cluster's centre first. Two shares
of the picks go to what a test set most needs: the questions a run scored worst and those
least like anything already in the golden set.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from ragmeter._record import attributes
from ragmeter.dataset import Dataset, Sample, load_dataset
from ragmeter.embed import normalize_rows
from ragmeter.mining._cluster import dedupe as remove_duplicates
from ragmeter.mining._cluster import kmeans, question_key
from ragmeter.mining._labels import TO_FILL, check_label_path, write_rows
from ragmeter.mining._scores import Standing, load_run, standings

if TYPE_CHECKING:
    from ragmeter.embed import Embeddings
    from ragmeter.results import EvaluationResult

Reason = Literal["worst_scored", "novel", "cluster"]
Keep = Literal["latest", "first"]
SOURCE = "production"
#: Metadata keys read as a sample's time, for keeping the most recent of near-duplicates.
TIME_KEYS: tuple[str, ...] = ("timestamp", "start_time", "started_at", "created_at", "time")
DEFAULT_DEDUPE = 0.95
DEFAULT_WORST_SHARE = 0.3
DEFAULT_NOVEL_SHARE = 0.2


@dataclass(frozen=True)
class Pick:
    """One mined question and why it was picked.

    ``row`` is its row in the samples file (1-based), ``cluster`` its cluster (0 the largest),
    ``score`` its standing in the run (mean over metrics, 0-1, 1 best; ``None`` without one),
    ``nearest_golden`` its highest cosine with a golden question, ``duplicates`` how many
    near-duplicates it stands for.
    """

    sample_id: str
    row: int
    reason: Reason
    cluster: int
    score: float | None
    nearest_golden: float | None
    duplicates: int


@dataclass
class MiningResult:
    """What :func:`mine` picked (``picks``, and the labelling rows in ``records``) and what it
    left out, counted."""

    records: list[dict[str, Any]] = field(repr=False)
    picks: list[Pick] = field(repr=False)
    n_samples: int
    n_without_question: int
    n_same_text: int
    n_similar: int
    n_in_golden: int
    n_candidates: int  # questions left to pick from once duplicates and golden ones are out
    cluster_sizes: list[int]  # samples each cluster stands for (duplicates included)
    n_scored: int
    mined_at: str
    kept: Keep
    notes: list[str] = field(default_factory=list)

    @property
    def n_duplicates(self) -> int:
        """Near-duplicates removed (same normalised text, or cosine at or above the
        threshold)."""
        return self.n_same_text + self.n_similar

    @property
    def counts(self) -> dict[str, int]:
        """Picks per reason."""
        counts = Counter(pick.reason for pick in self.picks)
        return {reason: counts[reason] for reason in get_args(Reason)}

    @property
    def clusters_covered(self) -> int:
        return len({pick.cluster for pick in self.picks})

    def save(self, path: str | Path) -> Path:
        """Write the labelling file: JSONL, JSON or CSV by the extension."""
        return write_rows(self.records, path)

    def summary(self) -> dict[str, Any]:
        funnel = ("n_samples", "n_without_question", "n_duplicates", "n_same_text", "n_similar")
        return {
            **attributes(self, *funnel, "n_in_golden", "n_candidates"),
            "n_clusters": len(self.cluster_sizes),
            **attributes(self, "cluster_sizes", "clusters_covered", "n_scored"),
            "picks": self.counts,
            "n_picked": len(self.picks),
            **attributes(self, "kept", "mined_at", "notes"),
        }


def _half_up(value: float) -> int:
    return math.floor(value + 0.5)


def _check_share(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be between 0 and 1, got {value}")


def _time_of(sample: Sample) -> float | None:
    for key in TIME_KEYS:
        value = sample.metadata.get(key)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            return float(value)
        if isinstance(value, str):
            try:
                moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.timezone.utc)
            return moment.timestamp()
    return None


def _label_id(sample: Sample, question: str) -> str:
    if sample.id is not None:
        return sample.id
    digest = hashlib.sha256(question.encode("utf-8")).hexdigest()[:12]
    return f"prod-{digest}"


def _record(
    sample: Sample,
    sample_id: str,
    question: str,
    pick: Pick,
    mined_at: str,
    standing: Standing | None,
) -> dict[str, Any]:
    """The labelling row of a pick: the sample, empty fields to fill, the provenance."""
    metadata = dict(sample.metadata)
    previous = metadata.get("source")
    if previous is not None and previous != SOURCE:
        metadata["trace_source"] = previous
    metadata.update(
        source=SOURCE,
        original_id=sample_id,
        mined_at=mined_at,
        mined_because=pick.reason,
        mined_cluster=pick.cluster,
        mined_duplicates=pick.duplicates,
    )
    if standing is not None:
        metadata["mined_score"] = round(standing.score, 4)
        metadata["mined_scores"] = standing.scores
    if pick.nearest_golden is not None:
        metadata["mined_nearest_golden"] = round(pick.nearest_golden, 4)
    return {
        "id": _label_id(sample, question),
        "user_input": question,
        "response": sample.response,
        "retrieved_contexts": sample.retrieved_contexts,
        "retrieved_context_ids": sample.retrieved_context_ids,
        **{name: ([] if isinstance(value, list) else value) for name, value in TO_FILL.items()},
        "metadata": metadata,
    }


def _embed(embeddings: Embeddings, texts: list[str]) -> np.ndarray:
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return normalize_rows(embeddings.embed_sync(texts, kind="query", scope="mining"))


def _runs(
    scores: EvaluationResult | str | Path | Sequence[EvaluationResult | str | Path],
) -> list[EvaluationResult]:
    items = (
        [scores] if isinstance(scores, str | Path) or not isinstance(scores, Sequence) else scores
    )
    return [load_run(item) if isinstance(item, str | Path) else item for item in items]


def _as_dataset(source: Any, what: str) -> Dataset:
    if isinstance(source, Dataset):
        return source
    dataset = load_dataset(source)
    if not len(dataset):
        raise ValueError(f"the {what} {source!r} holds no samples")
    return dataset


def _check_options(
    n: int,
    *,
    dedupe: float,
    worst_share: float,
    novel_share: float,
    both_shares: bool,
    clusters: int | None,
    keep: str,
    output: str | Path | None,
) -> None:
    """A ValueError for the first option of :func:`mine` out of its range (``both_shares``:
    scores and a golden set are both given, so the two shares must fit in one)."""
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if not 0.0 < dedupe <= 1.0:
        raise ValueError(f"dedupe must be a cosine above 0 and at most 1, got {dedupe}")
    _check_share("worst_share", worst_share)
    _check_share("novel_share", novel_share)
    if both_shares and worst_share + novel_share > 1.0:
        raise ValueError(
            f"worst_share + novel_share must be at most 1, got {worst_share} + {novel_share}"
        )
    if clusters is not None and clusters < 1:
        raise ValueError(f"clusters must be at least 1, got {clusters}")
    if keep not in ("latest", "first"):
        raise ValueError(f"keep must be 'latest' or 'first', got {keep!r}")
    if output is not None:
        check_label_path(output)


def _stamp(mined_at: dt.datetime | str | None) -> str:
    """When the mining happened, ISO 8601: ``mined_at``, or now (UTC, whole seconds)."""
    if isinstance(mined_at, dt.datetime):
        return mined_at.isoformat()
    if isinstance(mined_at, str):
        return mined_at
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def _against_golden(
    golden_set: Dataset,
    embeddings: Embeddings,
    ids: list[str],
    keys: list[str],
    vectors: np.ndarray,
    dedupe: float,
) -> tuple[list[float | None], set[int]]:
    """Each question's cosine to its nearest golden question (None when there is none to
    compare), and the questions already in the golden set: same id, same text, or a
    cosine of at least ``dedupe``."""
    nearest: list[float | None] = [None] * len(ids)
    in_golden: set[int] = set()
    golden_questions = [s.user_input for s in golden_set if s.user_input]
    golden_keys = {question_key(q) for q in golden_questions}
    golden_ids = set(golden_set.ids)
    if golden_questions and ids:
        similarity = vectors @ _embed(embeddings, golden_questions).T
        nearest = [float(v) for v in similarity.max(axis=1)]
    for j in range(len(ids)):
        near = nearest[j]
        if ids[j] in golden_ids or keys[j] in golden_keys or (near is not None and near >= dedupe):
            in_golden.add(j)
    return nearest, in_golden


def _clustered(
    vectors: np.ndarray, candidates: list[int], weight: dict[int, int], k: int, seed: int
) -> tuple[dict[int, int], list[int], list[list[int]]]:
    """The candidates in ``k`` k-means clusters, numbered by the traffic each stands for
    (``weight``: a question and its duplicates), the largest 0: each candidate's cluster,
    the clusters' sizes, and each cluster's members, the closest to its centre first."""
    points = vectors[candidates]
    labels, centroids = kmeans(points, k, seed)
    size = [sum(weight[candidates[i]] for i in np.flatnonzero(labels == c)) for c in range(k)]
    first = [int(np.flatnonzero(labels == c)[0]) for c in range(k)]
    by_size = sorted(range(k), key=lambda c: (-size[c], first[c]))  # cluster 0: the largest
    renumber = {c: new for new, c in enumerate(by_size)}
    cluster_of = {candidates[i]: renumber[int(labels[i])] for i in range(len(candidates))}
    closeness = np.einsum("ij,ij->i", points, centroids[labels])
    members: list[list[int]] = [[] for _ in range(k)]
    for i in sorted(range(len(candidates)), key=lambda i: (-float(closeness[i]), candidates[i])):
        members[cluster_of[candidates[i]]].append(candidates[i])
    return cluster_of, [size[c] for c in by_size], members


def _pick_by_cluster(
    picked: dict[int, Reason],
    total: int,
    members: list[list[int]],
    cluster_of: dict[int, int],
    sizes: list[int],
) -> None:
    """Add to ``picked`` until it holds ``total``: first every cluster once (the largest
    first) that has no pick yet, then in proportion to the traffic each cluster stands for
    (``sizes``), each cluster's members closest to its centre first."""
    k = len(members)
    counts = [0] * k
    for j in picked:
        counts[cluster_of[j]] += 1
    weight_total = sum(sizes)
    cursor = [0] * k  # members before it are picked

    def next_member(c: int) -> int | None:
        while cursor[c] < len(members[c]) and members[c][cursor[c]] in picked:
            cursor[c] += 1
        return members[c][cursor[c]] if cursor[c] < len(members[c]) else None

    for c in range(k):  # coverage: every cluster once, the largest first
        if len(picked) >= total:
            break
        member = next_member(c) if counts[c] == 0 else None
        if member is not None:
            picked[member] = "cluster"
            counts[c] += 1
    while len(picked) < total:  # then in proportion to the traffic each cluster stands for
        open_clusters = [c for c in range(k) if next_member(c) is not None]
        c = max(open_clusters, key=lambda c: (total * sizes[c] / weight_total - counts[c], -c))
        member = next_member(c)
        assert member is not None
        picked[member] = "cluster"
        counts[c] += 1


def mine(
    samples: Any,
    n: int = 100,
    *,
    scores: EvaluationResult | str | Path | Sequence[EvaluationResult | str | Path] | None = None,
    golden: Any = None,
    embeddings: Embeddings | None = None,
    dedupe: float = DEFAULT_DEDUPE,
    clusters: int | None = None,
    worst_share: float = DEFAULT_WORST_SHARE,
    novel_share: float = DEFAULT_NOVEL_SHARE,
    seed: int = 0,
    keep: Keep = "latest",
    mined_at: dt.datetime | str | None = None,
    output: str | Path | None = None,
) -> MiningResult:
    """Pick up to ``n`` production questions to label (see the module's docstring).

    ``samples``: production samples (a path or anything :func:`ragmeter.load_dataset` takes).
    ``scores``: a run of those samples (an :class:`EvaluationResult`, a run directory, or a
    run id or name in the run store), or several (a monitor's windows; where they share an
    id the last wins), joined by sample id: ``worst_share`` of the picks go to the
    lowest-scored. ``golden``: the current golden set: ``novel_share`` of the picks go to
    the questions least similar to any of it, and questions already in it (same id, same
    text, or cosine >= ``dedupe``) are left out. ``keep``: of near-duplicates, the most
    recent (a ``timestamp``-like metadata key) or the first in the file. ``clusters``:
    k-means' k, by default the square root of the candidates, at most the picks left for
    clusters. ``output``: where to write the labelling file (.jsonl, .json or .csv).
    """
    _check_options(
        n,
        dedupe=dedupe,
        worst_share=worst_share,
        novel_share=novel_share,
        both_shares=scores is not None and golden is not None,
        clusters=clusters,
        keep=keep,
        output=output,
    )
    stamp = _stamp(mined_at)

    dataset = _as_dataset(samples, "samples")
    golden_set = None if golden is None else _as_dataset(golden, "golden set")
    runs = [] if scores is None else _runs(scores)
    if embeddings is None:
        from ragmeter.embed import default_embeddings

        embeddings = default_embeddings()
    notes: list[str] = []

    positions = [
        i for i, s in enumerate(dataset) if s.user_input is not None and s.user_input.strip()
    ]
    questions = [str(dataset[i].user_input) for i in positions]
    ids = [dataset.ids[i] for i in positions]
    keys = [question_key(q) for q in questions]
    by_id = {k: v for run in runs for k, v in standings(run).items()}
    if runs and questions and not any(i in by_id for i in ids):
        raise ValueError(
            f"the run(s) given as scores have no score for any of the samples (ids such as "
            f"{', '.join(repr(i) for i in ids[:3])}): give a run of these samples "
            "(ragmeter eval samples.jsonl -o RUN_DIR), joined by sample id"
        )
    vectors = _embed(embeddings, questions)

    nearest: list[float | None] = [None] * len(questions)
    in_golden: set[int] = set()
    if golden_set is not None:
        nearest, in_golden = _against_golden(golden_set, embeddings, ids, keys, vectors, dedupe)

    times = [_time_of(dataset[i]) for i in positions]
    if keep == "latest" and questions and all(t is None for t in times):
        notes.append("no sample has a time (metadata 'timestamp'): kept the first of each group")
    order = sorted(
        (j for j in range(len(questions)) if j not in in_golden),
        key=lambda j: (
            (0, -(times[j] or 0.0), j) if keep == "latest" and times[j] is not None else (1, 0, j)
        ),
    )
    found = remove_duplicates(keys, vectors, order, dedupe)
    weight = dict.fromkeys(found.kept, 1)
    for owner in found.duplicate_of.values():
        weight[owner] += 1
    candidates = sorted(found.kept)

    standing = {j: by_id[ids[j]] for j in candidates if ids[j] in by_id}

    result = MiningResult(
        records=[],
        picks=[],
        n_samples=len(dataset),
        n_without_question=len(dataset) - len(positions),
        n_same_text=found.same_text,
        n_similar=found.similar,
        n_in_golden=len(in_golden),
        n_candidates=len(candidates),
        cluster_sizes=[],
        n_scored=len(standing),
        mined_at=stamp,
        kept=keep if keep == "first" or any(t is not None for t in times) else "first",
        notes=notes,
    )
    if not candidates:
        notes.append("no question left to pick")
        if output is not None:
            result.save(output)
        return result

    total = min(n, len(candidates))
    if total < n:
        notes.append(f"{n} asked for, {total} distinct questions to pick from: all picked")
    worst_quota = min(_half_up(total * worst_share), len(standing)) if runs else 0
    novel_quota = (
        min(_half_up(total * novel_share), total - worst_quota) if golden_set is not None else 0
    )
    slots = total - worst_quota - novel_quota
    k = clusters or max(1, min(slots or total, _half_up(math.sqrt(len(candidates)))))
    if k > len(candidates):
        notes.append(f"{k} clusters asked, {len(candidates)} candidates: {len(candidates)} used")
        k = len(candidates)

    cluster_of, result.cluster_sizes, members = _clustered(vectors, candidates, weight, k, seed)

    picked: dict[int, Reason] = {}  # in the order picked
    for j in sorted(standing, key=lambda j: (standing[j].score, j))[:worst_quota]:
        picked[j] = "worst_scored"
    unpicked = [j for j in candidates if j not in picked]
    for j in sorted(unpicked, key=lambda j: (nearest[j] or 0.0, j))[:novel_quota]:
        picked[j] = "novel"
    _pick_by_cluster(picked, total, members, cluster_of, result.cluster_sizes)

    for j, reason in picked.items():
        sample = dataset[positions[j]]
        pick = Pick(
            sample_id=ids[j],
            row=dataset.rows[positions[j]],
            reason=reason,
            cluster=cluster_of[j],
            score=standing[j].score if j in standing else None,
            nearest_golden=nearest[j],
            duplicates=weight[j] - 1,
        )
        result.picks.append(pick)
        result.records.append(_record(sample, ids[j], questions[j], pick, stamp, standing.get(j)))
    if output is not None:
        result.save(output)
    return result


def describe(result: MiningResult) -> list[str]:
    """The lines ``ragmeter mine`` prints about a mining."""
    lines = [
        f"read {result.n_samples} samples: {result.n_without_question} without a question, "
        f"{result.n_duplicates} near-duplicates removed ({result.n_same_text} same text, "
        f"{result.n_similar} by cosine)"
        + (f", {result.n_in_golden} already in the golden set" if result.n_in_golden else ""),
        f"{result.n_candidates} distinct questions in {len(result.cluster_sizes)} clusters"
        + (
            f" (sizes {', '.join(map(str, result.cluster_sizes[:12]))}"
            + (", …" if len(result.cluster_sizes) > 12 else "")
            + ")"
            if result.cluster_sizes
            else ""
        ),
    ]
    counts = result.counts
    lines.append(
        f"picked {len(result.picks)}: {counts['cluster']} by cluster, "
        f"{counts['worst_scored']} worst-scored, {counts['novel']} novel; "
        f"{result.clusters_covered} of {len(result.cluster_sizes)} clusters covered"
    )
    return lines + [f"note: {note}" for note in result.notes]
