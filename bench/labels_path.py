"""Issue 39's labels path on RGB zh dev: does it reproduce ``bench/meta_eval.py``'s figures?

Does what a user does, in a temporary folder: ``evaluate(samples, ["context_precision"],
language="zh")`` with the embedded default judge (shipped calibration, fresh judge cache),
the run kept in a run store (``Store.record``); the dev data's positive / negative passages
written as context-level labels in the label format (JSONL, labeller ``rgb-dev``); then the
CLI: ``ragmeter labels import``, ``ragmeter labels agreement RUN --json`` and ``ragmeter
calibrate fit RUN --name rgb-dev`` (from the store). Its figures are set beside meta_eval's
for the same queries, recomputed with meta_eval's own analysis from its raw verdicts
(``~/.cache/ragmeter/meta_eval_raw.json``), and each context's P(yes) is compared with the
one meta_eval recorded (mapped through the shipped calibration).

The samples are meta_eval's (``meta_eval.rgb_samples``: each query's first 2 positive and 2
negative passages, shuffled with seed 0). Reads ``../shared/data``; skips when it is absent.
The embedded judge takes about 6.5 s per query on 2 cores (60 queries: about 7 minutes).

Usage::

    python bench/labels_path.py --limit 3            # a quick look (partial figures)
    python bench/labels_path.py --write              # all 60 queries, RESULTS_labels_path.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import meta_eval

from ragmeter import evaluate
from ragmeter.align import write_labels
from ragmeter.store import Store, sample_key

ROOT = meta_eval.ROOT
RESULTS = ROOT / "bench" / "RESULTS_labels_path.md"
METRIC = "context_precision"
RUN_NAME = "rgb-dev"
LABELLER = "rgb-dev"


# -- the path, as a user runs it ---------------------------------------------------------------
def label_records(samples: list[dict[str, Any]], truth: list[list[int]]) -> list[dict[str, Any]]:
    """One context label per passage: useful (true) for RGB's positive passages, not useful
    (false) for its negative ones; ``created_at`` is left to the import."""
    return [
        {
            "sample_id": sample["id"],
            "sample_key": sample_key(sample),
            "metric": METRIC,
            "level": "context",
            "item": index,
            "value": bool(label),
            "labeller": LABELLER,
            "note": "RGB zh dev: " + ("positive" if label else "negative") + " passage",
        }
        for sample, labels in zip(samples, truth)
        for index, label in enumerate(labels)
    ]


def cli(folder: Path, *args: str) -> str:
    """``ragmeter ARGS`` run in ``folder`` (where ``.ragmeter/`` lands), its stdout; a
    failure ends the script with the command's own message."""
    done = subprocess.run(
        [sys.executable, "-m", "ragmeter", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "COLUMNS": "200"},
    )
    if done.returncode != 0:
        sys.exit(f"ragmeter {' '.join(args)} failed (exit {done.returncode}):\n{done.stderr}")
    return done.stdout


def run_path(limit: int | None, folder: Path, cache: Path | None) -> dict[str, Any]:
    """The run, the labels, their import, agreement and calibration; what each gave."""
    samples, truth = meta_eval.rgb_samples(limit)
    url = f"sqlite:///{folder / 'runs.db'}"
    os.environ["RAGMETER_CACHE"] = str(cache or folder / "cache.db")  # fresh unless --cache
    started = time.monotonic()
    result = evaluate(samples, [METRIC], language="zh", run_dir=folder / "run", progress=False)
    seconds = time.monotonic() - started
    Store(url).record(result, name=RUN_NAME, project_dir=folder)
    labels_file = write_labels(label_records(samples, truth), folder / "labels.jsonl")
    imported = cli(folder, "labels", "import", str(labels_file), "--store", url)
    agreement = json.loads(cli(folder, "labels", "agreement", RUN_NAME, "--json", "--store", url))
    fit_text = cli(folder, "calibrate", "fit", RUN_NAME, "--name", RUN_NAME, "--store", url)
    saved = folder / ".ragmeter" / "calibrations" / RUN_NAME / "v1.json"
    calibration = json.loads(saved.read_text(encoding="utf-8"))
    verdicts = []
    for sample in result.samples:
        contexts = sample.scores[METRIC].details.contexts
        verdicts.append(
            {
                "error": sample.scores[METRIC].error,
                "p": [c.probability for c in sorted(contexts, key=lambda c: c.rank)],
                "useful": [c.verdict for c in sorted(contexts, key=lambda c: c.rank)],
            }
        )
    return {
        "queries": len(samples),
        "seconds": seconds,
        "cache": "a fresh judge cache" if cache is None else f"the judge cache {cache}",
        "judge": result.config.get("judges", {}).get(METRIC),
        "imported": imported.strip().replace(str(labels_file), labels_file.name),
        "agreement": agreement,
        "calibrate_fit": fit_text,
        "calibration": calibration,
        "verdicts": verdicts,
    }


# -- meta_eval's figures for the same queries ------------------------------------------------
def meta_eval_figures(raw_path: Path, n: int) -> dict[str, Any]:
    """meta_eval's RGB usefulness figures on its first ``n`` queries (the path's queries),
    recomputed from its raw verdicts with its own analysis, and the shipped-calibrated
    P(yes) of each context as it recorded it."""
    report = json.loads(raw_path.read_text(encoding="utf-8"))
    queries = report["raw"]["rgb"]["queries"][:n]
    raw = {"to_gain": report["raw"]["to_gain"], "rgb": {"queries": queries}}
    analysis = meta_eval.analyse(raw, report["judge"])["rgb_zh"]
    shipped = report["judge"]["calibration"]["useful"]

    def calibrated(p: float) -> float:  # the run's P = sigmoid(gain - 1): its gain, shipped
        gain = meta_eval.logit(p) + 1.0 if raw["to_gain"] == "uncalibrated" else meta_eval.logit(p)
        return float(meta_eval.sigmoid(shipped["slope"] * gain + shipped["intercept"]))

    return {
        "command": report["command"],
        "date": report["date"],
        "commit": report["commit"],
        "judge": report["judge"],
        "analysis": analysis,
        "p_shipped": [[calibrated(p) for p in q["p"]] for q in queries],
        "labels": [q["labels"] for q in queries],
    }


def verdict_match(path: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """Context by context: the path's P(yes) against meta_eval's under the shipped
    calibration, and whether the verdicts (P >= 0.5) agree."""
    gaps, differ, n = [], 0, 0
    for ours, theirs in zip(path["verdicts"], meta["p_shipped"]):
        for p, q, useful in zip(ours["p"], theirs, ours["useful"]):
            n += 1
            if p is None:
                differ += 1
                continue
            gaps.append(abs(p - q))
            differ += useful != (q >= 0.5)
    return {"contexts": n, "verdicts_differ": differ, "max_p_gap": max(gaps, default=math.nan)}


# -- report ----------------------------------------------------------------------------------
def _context_level(agreement: dict[str, Any]) -> dict[str, Any]:
    found = [m for m in agreement["metrics"] if m.get("metric") == METRIC]
    if not found or "context" not in found[0]["levels"]:
        sys.exit(f"labels agreement --json has no {METRIC} context level: {agreement}"[:800])
    level: dict[str, Any] = found[0]["levels"]["context"]
    return level


def _stat(level: dict[str, Any], name: str) -> tuple[float, list[float] | None, int]:
    figure = level["agreement"][name]
    ci = figure.get("ci")
    return figure["value"], None if ci is None else [ci["low"], ci["high"]], figure["n"]


def _ci(ci: Any) -> str:
    return f"{ci[0]:.2f} – {ci[1]:.2f}" if ci else "—"


def render(path: dict[str, Any], meta: dict[str, Any], limit: int | None) -> str:
    level = _context_level(path["agreement"])
    accuracy, accuracy_ci, n = _stat(level, "accuracy")
    kappa, kappa_ci, _ = _stat(level, "cohen_kappa")
    task = path["calibration"]["cv"]["tasks"]["useful"]
    before, after = task["before"], task["after"]
    a = meta["analysis"]
    match = verdict_match(path, meta)
    partial = limit is not None
    lines = [
        "# The labels path on RGB zh dev: does it reproduce meta_eval?",
        "",
    ]
    if partial:
        lines += [
            f"**PARTIAL: `--limit {limit}` ({path['queries']} of 60 queries); the figures below "
            "are not the full dev split's.**",
            "",
        ]
    lines += [
        f"- Command: `python bench/labels_path.py {' '.join(sys.argv[1:])}`",
        f"- Date: {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; ragmeter commit "
        + subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip(),
        f"- Machine: {os.cpu_count()} CPUs, {platform.platform()}",
        f"- The path's run: {path['queries']} queries, {4 * path['queries']} contexts, "
        f"{path['seconds']:.0f} s ({path['seconds'] / max(1, path['queries']):.1f} s per query, "
        f"{path['cache']})",
        f"- meta_eval's figures: its raw verdicts from `{meta['command']}` ({meta['date']}, "
        f"commit {meta['commit']}), first {path['queries']} queries, its own `analyse`",
        f"- Import: {path['imported']}",
        "",
        "## Side by side (context usefulness, positive passages useful, negative not)",
        "",
        "| labels path | accuracy | meta_eval (RESULTS_meta_eval.md row) | accuracy | same? |",
        "|---|---:|---|---:|---|",
    ]

    def row(ours_name: str, ours: float, theirs_name: str, theirs: float) -> None:
        same = "yes" if abs(ours - theirs) < 5e-4 else f"no ({ours - theirs:+.3f})"
        lines.append(f"| {ours_name} | {ours:.3f} | {theirs_name} | {theirs:.3f} | {same} |")

    shipped, cv = a["shipped"]["accuracy"], a["cv"]["accuracy"]
    row("`labels agreement`, context level", accuracy, "shipped calibration", shipped)
    row("`labels agreement`, context level", accuracy, "as run", a["as_run"]["accuracy"])
    row("`calibrate fit`, accuracy before", before["accuracy"], "shipped calibration", shipped)
    row("`calibrate fit`, accuracy after", after["accuracy"], "cross-validated calibration", cv)
    lines += [
        "",
        f"95% CIs: labels agreement accuracy {_ci(accuracy_ci)} ({n} labels), calibrate fit "
        f"before {_ci(before.get('accuracy_ci'))}, after {_ci(after.get('accuracy_ci'))}; "
        f"meta_eval shipped {_ci(a['shipped']['ci95'])}, cross-validated {_ci(a['cv']['ci95'])}, "
        f"as run {_ci(a['as_run']['ci95'])}.",
        "",
        f"Cohen's kappa (labels agreement, context level): {kappa:.3f} [{_ci(kappa_ci)}]. "
        f"calibrate fit: {task['n']} verdicts in {task['groups']} groups, {task['folds']} folds; "
        f"log-loss {before['log_loss']:.3f} → {after['log_loss']:.3f}, Brier "
        f"{before['brier']:.3f} → {after['brier']:.3f}.",
        "",
        f"Context by context: {match['contexts']} contexts, {match['verdicts_differ']} verdicts "
        f"differ from meta_eval's under the shipped calibration, largest P(yes) gap "
        f"{match['max_p_gap']:.2e}.",
        "",
        *same_judge(path["judge"], meta["judge"]),
        *explanation(meta["judge"]["calibration"]["useful"]),
    ]
    return "\n".join(lines)


def same_judge(ours: dict[str, Any] | None, theirs: dict[str, Any]) -> list[str]:
    """Whether the path's run and meta_eval's ran the same judge (model, its hash, runtime,
    verdict method, the shipped calibration): else their figures need not agree."""
    keys = ("kind", "model", "sha256", "runtime", "verdict_method", "calibration")
    differ = [k for k in keys if (ours or {}).get(k) != theirs.get(k)]
    if not differ:
        return [f"Same judge in both runs ({', '.join(keys)} equal).", ""]
    return [f"**The judges differ in: {', '.join(differ)}**; the figures need not agree.", ""]


def explanation(shipped: dict[str, Any]) -> list[str]:
    """Which of meta_eval's figures the path should equal, and why WikiEval is not done."""
    slope, intercept = shipped["slope"], shipped["intercept"]
    return [
        "## Which of meta_eval's figures the path should equal",
        "",
        "- meta_eval's *as run* (0.925 on all 60 queries in RESULTS_meta_eval.md) is **not** "
        "what a user's run gives. To recover each verdict's likelihood gain exactly, "
        "`meta_eval.py` empties the "
        "embedded judge's calibration before it runs (`judge.model = "
        "dataclasses.replace(judge.model, calibration={})`), so its run's P(yes) is "
        "sigmoid(gain - 1) and a passage is useful when its gain is at least 1. Its *as run* "
        "row scores those uncalibrated verdicts.",
        f"- *shipped* (0.954 there) applies the calibration in the model table (`useful/zh`: slope "
        f"{slope}, intercept {intercept}, so useful from gain {-intercept / slope:.3f}) to the "
        "same gains afterwards. The default judge of `evaluate()` applies exactly that "
        "calibration, so the path's verdicts, and `labels agreement`'s accuracy, and `calibrate "
        "fit`'s *accuracy before* (the judge's P as the run recorded it), should equal "
        "*shipped*; the table and the context-by-context line above say whether they do.",
        "- *cross-validated calibration* (0.946 there): meta_eval refits Platt on the gains, "
        "5 folds by query (query i in fold i mod 5). `calibrate fit` refits Platt on logit(P) "
        "of the "
        "calibrated P, which is linear in the gain (the same model family), 5 folds over "
        "sample_key groups in order of first appearance (the labels come back in import "
        "order, which is query order): the same folds, the same held-out verdicts, so its "
        "*accuracy after* should equal meta_eval's cross-validated figure. (The two fits "
        "regularise the slope on different scales, so a verdict within a hair of P = 0.5 "
        "could differ.) With fewer than 5 queries (`--limit`) `calibrate fit` "
        "uses one fold per query and meta_eval leaves its empty folds empty: the same again.",
        "- The 95% CIs: `labels agreement` and `calibrate fit` resample verdicts with "
        "`ragmeter._bootstrap` (percentile, 2000 resamples), meta_eval with its own "
        "`bootstrap_ci` (numpy, seed 0, 2000): the same method, other random draws, so the "
        "bounds may differ in the second decimal.",
        "- RESULTS_meta_eval.md's row *as run* (now labelled *as run, without calibration*) "
        'means "as meta_eval ran the judge, uncalibrated", not "as a user\'s run gives": a '
        "reader who compares a run of their own with it should read *shipped*.",
        "",
        "## WikiEval",
        "",
        "meta_eval's WikiEval figures are preferences within a question (which of two rows is "
        "the better one), not labels of one sample, claim or context: the path measures them "
        "with preference labels, in `bench/labels_path_wikieval.py` "
        "(RESULTS_labels_path_wikieval.md).",
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="RGB queries (default all 60)")
    parser.add_argument("--raw", type=Path, default=meta_eval.RAW, help="meta_eval's raw json")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--cache", type=Path, default=None, help="judge cache (default: a fresh one)"
    )
    args = parser.parse_args()
    if meta_eval.recorded_verdicts(args.raw) is None:
        return
    with tempfile.TemporaryDirectory(prefix="labels_path_") as temporary:
        path = run_path(args.limit, Path(temporary), args.cache)
    meta = meta_eval_figures(args.raw, path["queries"])
    text = render(path, meta, args.limit)
    print(path["calibrate_fit"])
    print(text)
    if args.write:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
