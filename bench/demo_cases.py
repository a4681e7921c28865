"""Do the demo run's per-sample results read as the demo's case names promise?

`make demo` scores examples/demo.jsonl, whose samples name their case in ``metadata.case``
(grounded, hallucinated, off_topic, missed_retrieval, noisy_retrieval). From the results file
that run wrote, this prints the mean ``ok`` score per metric and case with scored/total counts
(n/a, failed and not_started samples stay in the total and are named), and the checks of
issue 35: mean targets per case (a case with no scored sample does not meet its target),
generated questions that copy the sample's question (<= 5%), verdicts that contradict their own
probability and faithfulness scores that contradict their claims (0 of each). Stdlib only.

    .venv/bin/python bench/demo_cases.py [--results PATH] [--write] [--check]

--results: another run's results.jsonl (default runs/demo/results.jsonl); --write: also write
bench/RESULTS_demo.md; --check: exit 1 when a target is not met.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import unicodedata
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_RESULTS = ROOT / "runs" / "demo" / "results.jsonl"
#: (metric, case, "<=" or ">=", bound): the mean score targets of issue 35.
TARGETS = [
    ("answer_relevancy", "off_topic", "<=", 0.6),
    ("answer_relevancy", "grounded", ">=", 0.8),
    ("context_recall", "missed_retrieval", "<=", 0.3),
    ("context_recall", "grounded", ">=", 0.9),
    ("faithfulness", "hallucinated", "<=", 0.5),
    ("faithfulness", "grounded", ">=", 0.9),
]
MAX_COPIED_SHARE = 0.05
#: A results line (or one metric's result in it), as JSON reads it.
Record = dict[str, Any]
#: How the cells name a status other than ok.
SHOWN = {"not_applicable": "n/a", "ok": "ok without score"}


class Check(NamedTuple):
    name: str
    measured: str
    target: str
    met: bool


def case_of(record: Record) -> str:
    return (record["sample"].get("metadata") or {}).get("case") or "(no case)"


def by_metric_and_case(records: list[Record]) -> dict[str, dict[str, list[Record]]]:
    """metric -> case -> its per-sample results, in the order metrics and cases first appear."""
    table: dict[str, dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        for metric, result in record["metrics"].items():
            table[metric][case_of(record)].append(result)
    return table


def mean_and_counts(results: list[Record]) -> tuple[float | None, str]:
    """The mean ok score, and "scored/total" then the rest by status: (0.9, "3/4; 1 n/a")."""
    scored = [r["status"] == "ok" and r.get("score") is not None for r in results]
    scores = [r["score"] for r, ok in zip(results, scored) if ok]
    rest = Counter(SHOWN.get(r["status"], r["status"]) for r, ok in zip(results, scored) if not ok)
    counts = f"{len(scores)}/{len(results)}" + "".join(f"; {n} {s}" for s, n in rest.items())
    return (sum(scores) / len(scores) if scores else None), counts


def normalise(text: str) -> str:
    """NFKC, casefolded, without whitespace or punctuation."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


def copied_questions(records: list[Record]) -> tuple[int, int]:
    """(answer_relevancy's generated questions equal to the sample's question, all of them),
    counting those the metric kept and those it left out (``details.left_out``)."""
    copied = total = 0
    for record in records:
        details = record["metrics"].get("answer_relevancy", {}).get("details") or {}
        question = normalise(record["sample"]["user_input"])
        written = list(details.get("questions") or [])
        written += [item.get("text", "") for item in details.get("left_out") or []]
        for generated in written:
            total += 1
            copied += normalise(generated) == question
    return copied, total


def verdict_contradictions(records: list[Record]) -> tuple[int, int]:
    """(claims and contexts, of any metric, whose verdict disagrees with probability >= 0.5;
    all those that carry both)."""
    wrong = checked = 0
    for record in records:
        for result in record["metrics"].values():
            details = result.get("details") or {}
            pairs = [(c.get("supported"), c.get("p_supported")) for c in details.get("claims", [])]
            pairs += [(c.get("useful"), c.get("p_useful")) for c in details.get("contexts", [])]
            for verdict, p in pairs:
                if verdict is not None and p is not None:
                    checked += 1
                    wrong += bool(verdict) != (p >= 0.5)
    return wrong, checked


def faithfulness_contradictions(records: list[Record]) -> tuple[int, int]:
    """(faithfulness scores >= 0.5 with no supported claim or < 0.5 with every claim
    supported; scored samples with claims)."""
    wrong = checked = 0
    for record in records:
        result = record["metrics"].get("faithfulness", {})
        claims = (result.get("details") or {}).get("claims") or []
        if result.get("status") == "ok" and result.get("score") is not None and claims:
            checked += 1
            supported = sum(bool(c.get("supported")) for c in claims)
            high = result["score"] >= 0.5
            wrong += (high and supported == 0) or (not high and supported == len(claims))
    return wrong, checked


def checks(records: list[Record]) -> list[Check]:
    """Every target of issue 35, met or not."""
    table, out = by_metric_and_case(records), []
    for metric, case, op, bound in TARGETS:
        mean, counts = mean_and_counts(table.get(metric, {}).get(case, []))
        if mean is None:
            measured, met = f"no scored sample ({counts})", False
        else:
            measured, met = f"{mean:.3f} ({counts})", mean <= bound if op == "<=" else mean >= bound
        out.append(Check(f"{metric} mean, {case}", measured, f"{op} {bound}", met))
    copied, total = copied_questions(records)
    share = f"{copied / total:.1%}" if total else "no generated questions"
    met = total == 0 or copied / total <= MAX_COPIED_SHARE
    name = "generated questions equal to the question"
    out.append(Check(name, f"{copied}/{total} ({share})", f"<= {MAX_COPIED_SHARE:.0%}", met))
    for name, (wrong, checked) in [
        ("verdicts contradicting their probability", verdict_contradictions(records)),
        ("faithfulness scores contradicting their claims", faithfulness_contradictions(records)),
    ]:
        out.append(Check(name, f"{wrong}/{checked}", "0", wrong == 0))
    return out


def render_cases(records: list[Record]) -> str:
    """Markdown: a row per metric, a column per case, "mean (scored/total; not scored)"."""
    cases = list(dict.fromkeys(case_of(r) for r in records))
    lines = ["| metric | " + " | ".join(cases) + " |", "|---" * (len(cases) + 1) + "|"]
    for metric, by_case in by_metric_and_case(records).items():
        row = []
        for case in cases:
            mean, counts = mean_and_counts(by_case.get(case, []))
            row.append(("—" if mean is None else f"{mean:.3f}") + f" ({counts})")
        lines.append(f"| {metric} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def render_checks(results: list[Check]) -> str:
    lines = ["| check | measured | target | |", "|---|---|---|---|"]
    for c in results:
        lines.append(f"| {c.name} | {c.measured} | {c.target} | {'met' if c.met else 'NOT met'} |")
    return "\n".join(lines)


def judge_description(results: Path) -> str | None:
    """The judge named in run.json or summary.json next to the results, if there is one."""
    for path in (results.parent / "run.json", results.parent / "summary.json"):
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        judges = data.get("judges") or (data.get("config") or {}).get("judges") or {}
        by_judge: dict[str, list[str]] = defaultdict(list)
        for metric, j in judges.items():
            verdicts = j.get("verdict_method") and f"{j['verdict_method']} verdicts"
            how = ", ".join(str(x) for x in (j.get("runtime"), verdicts) if x)
            name = f"{j.get('kind')} `{j.get('model')}`" + (f" ({how})" if how else "")
            by_judge[name].append(metric)
        if by_judge:
            return "; ".join(f"{judge} for {', '.join(ms)}" for judge, ms in by_judge.items())
    return None


def write_results(argv: list[str], results: Path, body: str) -> Path:
    """bench/RESULTS_demo.md: how and where it was produced, then the tables."""
    git = ["git", "rev-parse", "--short", "HEAD"]
    head = subprocess.run(git, cwd=ROOT, capture_output=True, text=True).stdout.strip()
    judge = judge_description(results)
    shown = results.relative_to(ROOT) if results.is_relative_to(ROOT) else results
    lines = [
        "# Demo cases: do the per-sample results read as the case names promise?\n",
        f"- Command: `{shlex.join(['.venv/bin/python', 'bench/demo_cases.py', *argv])}`",
        f"- Date (UTC): {datetime.now(timezone.utc):%Y-%m-%d %H:%M}, commit {head or '?'}",
        f"- Results: `{shown}`; 1-minute load average {os.getloadavg()[0]:.2f}",
        *([f"- Judge: {judge}"] if judge else []),
        "",
        body,
    ]
    out = ROOT / "bench" / "RESULTS_demo.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="results.jsonl")
    parser.add_argument("--write", action="store_true", help="write bench/RESULTS_demo.md")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is not met")
    args = parser.parse_args(argv)
    try:
        with args.results.open(encoding="utf-8") as f:
            records = [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        print(f"demo_cases: no results file at {args.results}: run `make demo`", file=sys.stderr)
        return 2
    results = checks(records)
    body = f"## Mean ok score per case (scored/total)\n\n{render_cases(records)}\n\n"
    body += f"## Checks (issue 35)\n\n{render_checks(results)}\n"
    print(body, end="")
    if args.write:
        print(f"\nwrote {write_results(argv, args.results.resolve(), body)}")
    return 1 if args.check and not all(c.met for c in results) else 0


if __name__ == "__main__":
    sys.exit(main())
