"""Issue 39's labels path on WikiEval dev: do preference labels reproduce meta_eval's figures?

meta_eval's WikiEval figures are pairwise preferences within a question: for each of the 20
dev questions, does the metric score the row people preferred above the other one (a level
score half, a failed row 0). This script does what a user does, in a temporary folder, per
aspect: ``evaluate(samples, [metric])`` with the embedded default judge (shipped
calibration), the run kept in a run store; the two blind readers' choices
(``../shared/data/wikieval/reread.json``) written as *preference* labels in the label format
(one per question: the row they preferred is ``better`` than the other; labeller
``wikieval-reread``); then the CLI: ``ragmeter labels import`` and ``ragmeter labels
agreement RUN --json``. Its figure is set beside

- meta_eval's own ``pairwise()`` of the same run's scores (the same protocol, meta_eval's
  code): the path must equal it exactly;
- the figure RESULTS_meta_eval.md recorded (re-read labels; faithfulness and context
  relevance "soft, shipped calibration", the score a user's run gives; answer relevancy "as
  run"): a fresh run of the same judge must reproduce it.

Reads ``../shared/data``; skips when it is absent. The embedded judge takes about 8 s a row
for faithfulness and 13 s for context relevance on 2 cores (all three aspects, 120 rows:
about 15 minutes with a fresh judge cache; ``--cache FILE`` keeps the answers for a rerun).

Usage::

    python bench/labels_path_wikieval.py --limit 3       # a quick look (partial figures)
    python bench/labels_path_wikieval.py --write         # RESULTS_labels_path_wikieval.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import meta_eval
from labels_path import cli

from ragmeter import evaluate
from ragmeter.align import write_labels
from ragmeter.store import Store, sample_key

ROOT = meta_eval.ROOT
RESULTS = ROOT / "bench" / "RESULTS_labels_path_wikieval.md"
LABELLER = "wikieval-reread"
#: meta_eval's row that a user's run should equal, per aspect.
RECORDED_ROW = {
    "faithfulness": "soft, shipped calibration",
    "answer_relevancy": "as run",
    "context_relevance": "soft, shipped calibration",
}


def pairs_with_preference(file: str, limit: int | None) -> list[tuple[dict, dict, int]]:
    """(the row labelled 1, the row labelled 0, 1 when the readers preferred the first) per
    question, in meta_eval's order."""
    pairs = meta_eval.read_pairs(file, None)
    preferred = meta_eval.load_rereading().get(file)
    if preferred is None:
        sys.exit(f"{meta_eval.REREADING} does not match {file}.csv")
    found = [(a, b, first) for (a, b), first in zip(pairs, preferred)]
    return found[:limit] if limit else found


def preference_records(
    metric: str, samples: list[dict[str, Any]], preferred: list[int]
) -> list[dict[str, Any]]:
    """One preference label per question: the preferred row is ``better`` than the other."""
    records = []
    for i, first in enumerate(preferred):
        better, worse = (samples[2 * i], samples[2 * i + 1])[:: 1 if first else -1]
        records.append(
            {
                "sample_id": better["id"],
                "sample_key": sample_key(better),
                "metric": metric,
                "level": "preference",
                "item": sample_key(worse),
                "value": "better",
                "labeller": LABELLER,
                "note": "two blind readers (reread.json)",
            }
        )
    return records


def run_aspect(aspect: str, limit: int | None, folder: Path) -> dict[str, Any]:
    """The run, the labels, their import and agreement; meta_eval's pairwise() of the same
    scores."""
    file, metric, build = meta_eval.WIKIEVAL[aspect]
    found = pairs_with_preference(file, limit)
    samples = []
    for i, (a, b, _) in enumerate(found):
        for row, which in ((a, "label1"), (b, "label0")):
            samples.append({"id": f"{file}-{i:02d}-{which}", **build(row)})
    url = f"sqlite:///{folder / 'runs.db'}"
    started = time.monotonic()
    result = evaluate(samples, [metric], run_dir=folder / f"run-{file}", progress=False)
    seconds = time.monotonic() - started
    name = f"wikieval-{file}"
    Store(url).record(result, name=name, project_dir=folder)
    labels_file = write_labels(
        preference_records(metric, samples, [p for _, _, p in found]),
        folder / f"labels-{file}.jsonl",
    )
    imported = cli(folder, "labels", "import", str(labels_file), "--store", url)
    agreement = json.loads(cli(folder, "labels", "agreement", name, "--json", "--store", url))
    scores = [s.scores[metric].score for s in result.samples]
    oriented = [
        (scores[2 * i], scores[2 * i + 1]) if first else (scores[2 * i + 1], scores[2 * i])
        for i, (_, _, first) in enumerate(found)
    ]
    return {
        "metric": metric,
        "rows": len(samples),
        "seconds": seconds,
        "judge": result.config.get("judges", {}).get(metric),
        "imported": imported.strip().replace(str(labels_file), labels_file.name),
        "agreement": agreement,
        "meta_eval_pairwise": meta_eval.pairwise(oriented),
    }


def recorded_figures() -> dict[str, float]:
    """RESULTS_meta_eval.md's re-read figure per aspect (the row in RECORDED_ROW)."""
    text = meta_eval.RESULTS.read_text(encoding="utf-8")
    found = {}
    for aspect, row in RECORDED_ROW.items():
        match = re.search(
            rf"^\| {aspect} \| re-read \| {re.escape(row)} \| ([0-9.]+) \|", text, re.M
        )
        if match:
            found[aspect] = float(match.group(1))
    return found


def _level(entry: dict[str, Any]) -> dict[str, Any]:
    (metric,) = entry["agreement"]["metrics"]
    level: dict[str, Any] = metric["levels"]["preference"]
    return level


def render(
    results: dict[str, dict[str, Any]], limit: int | None, load: str, cache: Path | None
) -> str:
    recorded = recorded_figures()
    header = meta_eval.RESULTS.read_text(encoding="utf-8").splitlines()
    recorded_when = next((line[8:] for line in header if line.startswith("- Date:")), "?")
    lines = ["# The labels path on WikiEval dev: preference labels against meta_eval", ""]
    if limit is not None:
        lines += [
            f"**PARTIAL: `--limit {limit}` ({limit} of 20 questions per aspect); the figures "
            "below are not the full dev split's.**",
            "",
        ]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.strip()
    commit += " with uncommitted changes" if dirty else ""
    lines += [
        f"- Command: `python bench/labels_path_wikieval.py {' '.join(sys.argv[1:])}`",
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; ragmeter commit {commit}",
        f"- Machine: {os.cpu_count()} CPUs, {platform.platform()}, load {load}",
        "- Labels: `../shared/data/wikieval/reread.json` (two blind readers, 60 of 60 dev pairs "
        "agreed), one preference label per question, imported with `ragmeter labels import`",
        f"- Recorded: RESULTS_meta_eval.md ({recorded_when})",
        "- Judge cache: "
        + (
            "a fresh one (run seconds are the judge's)"
            if cache is None
            else f"`{cache.name}` (answers it holds are reused: run seconds may be the cache's)"
        ),
        "",
        "| aspect | rows | run seconds | `labels agreement` (preference) | 95% CI | compared "
        "| not compared | metric ties | meta_eval `pairwise()`, same run | same? | recorded "
        "(RESULTS_meta_eval.md row) | same? |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---|---|---|",
    ]
    for aspect, entry in results.items():
        level = _level(entry)
        figure = level["agreement"]["preference_agreement"]
        ci = figure.get("ci")
        ours = figure["value"]
        theirs = entry["meta_eval_pairwise"]
        ties = theirs["ties"]
        same = "yes" if abs(ours - theirs["agreement"]) < 1e-9 else "no"
        was = None if limit is not None else recorded.get(aspect)  # of all 20 questions
        same_recorded = (
            "—" if was is None else "yes" if abs(ours - was) < 5e-4 else f"no ({ours - was:+.3f})"
        )
        recorded_cell = "—" if was is None else f"{was:.3f} ({RECORDED_ROW[aspect]})"
        lines.append(
            f"| {aspect} | {entry['rows']} | {entry['seconds']:.0f} | {ours:.3f} | "
            + ("—" if not ci else f"{ci['low']:.2f} – {ci['high']:.2f}")
            + f" | {level['n_compared']} | {len(level['unscored'])} | {ties} | "
            f"{theirs['agreement']:.3f} | {same} | {recorded_cell} | {same_recorded} |"
        )
    lines += [
        "",
        "*not compared*: pairs the run did not score both rows of, or people called a tie "
        "(listed by `labels agreement`, none hidden); meta_eval counts a failed row's pair "
        "as 0, so the two figures are equal only when this is 0. *metric ties*: pairs the "
        "metric scored level, half a point in both.",
        "",
        "Why calibration is not reproduced here: meta_eval's WikiEval 'cross-validated' rows "
        "fit the verdict calibration on weak labels (every claim of the preferred row yes, of "
        "the other no). People gave no verdict per claim or per context sentence, only which "
        "row is better, so `ragmeter calibrate fit`, which fits P(yes) to people's verdicts, "
        "has nothing of theirs to fit on; importing the weak labels as claim labels would pass "
        "them off as people's. The RGB path (RESULTS_labels_path.md) reproduces the "
        "cross-validated calibration on real per-context labels.",
        "",
    ]
    for aspect, entry in results.items():
        level = _level(entry)
        lines.append(f"- {aspect}: {entry['imported']}")
        for d in level["disagreements"][:5]:
            lines.append(f"  - {d['id']}: people {d['human']}; metric {d['metric']}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="questions per aspect")
    parser.add_argument("--aspects", default="faithfulness,answer_relevancy,context_relevance")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--cache", type=Path, default=None, help="judge cache (default: fresh)")
    args = parser.parse_args()
    if not meta_eval.REREADING.exists():
        print(f"skipped: {meta_eval.DATA} is absent (the dev data is not in the repository)")
        return
    load = f"{os.getloadavg()[0]:.2f}"
    results = {}
    with tempfile.TemporaryDirectory(prefix="labels_path_wikieval_") as temporary:
        folder = Path(temporary)
        os.environ["RAGMETER_CACHE"] = str(args.cache or folder / "cache.db")
        for aspect in args.aspects.split(","):
            results[aspect] = run_aspect(aspect, args.limit, folder)
            print(f"{aspect}: {results[aspect]['seconds']:.0f} s", flush=True)
    load = f"{load} before, {os.getloadavg()[0]:.2f} after"
    text = render(results, args.limit, load, args.cache)
    print(text)
    if args.write:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
