"""``ragmeter eval``'s cheap first pass: ``--limit``/``--sample`` (a subset the run records,
so ``--resume`` picks the same one), ``--dry-run`` (what the run would ask its judge) and
``--max-cost`` (what a run stopped by its budget says)."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._app import console

if TYPE_CHECKING:
    from ragmeter.results import EvaluationResult
    from ragmeter.runner import RunEstimate

LimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit", min=1, help="Score only the first N valid samples (a cheap first pass)."
    ),
]
SampleOption = Annotated[
    int | None,
    typer.Option(
        "--sample",
        min=1,
        help="Score N samples drawn at random (the same N for the same --seed), in file order.",
    ),
]
SeedOption = Annotated[int | None, typer.Option("--seed", help="The seed of --sample (default 0).")]
StratifyOption = Annotated[
    str | None,
    typer.Option(
        "--stratify",
        help="With --sample: draw from each value of this metadata tag its share (at least one).",
    ),
]
DryRunOption = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Print the judge calls, tokens and cost the run would make, then exit 0 without "
        "calling the judge or writing a run (cached answers are not calls).",
    ),
]
MaxCostOption = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        help="Stop starting samples before the run's cost (all sessions of the run directory) "
        "would pass this amount, in the judge's currency; exit 3, resumable. The judge needs a "
        "price.",
    ),
]


@dataclass(frozen=True)
class SubsetOptions:
    """Which samples ``ragmeter eval`` scores (``--limit``, ``--sample``, ``--seed``,
    ``--stratify``); recorded with the run only when given."""

    limit: int | None = None
    sample: int | None = None
    seed: int | None = None
    stratify: str | None = None

    def to_record(self) -> dict[str, Any]:
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "SubsetOptions":
        return cls(**{f.name: record.get(f.name) for f in fields(cls)})

    def or_recorded(self, recorded: "SubsetOptions") -> "SubsetOptions":
        """These options, each one not given taken from ``recorded`` (a resumed run's)."""
        return replace(recorded, **{k: v for k, v in asdict(self).items() if v is not None})

    def arguments(self) -> dict[str, Any]:
        """As ``evaluate()`` / ``estimate()`` take them."""
        if self.limit is not None and self.sample is not None:
            raise typer.BadParameter("give --limit or --sample, not both", param_hint="--limit")
        if self.stratify is not None and self.sample is None:
            raise typer.BadParameter("--stratify needs --sample N", param_hint="--stratify")
        return {**asdict(self), "seed": self.seed or 0}


def _money(amount: float, currency: str | None) -> str:
    return f"{amount:.4f} {currency}" if currency else f"{amount:.4f}"


def print_estimate(found: "RunEstimate", *, max_cost: float | None = None) -> None:
    """The dry run's answer: per step and in total, then what it rests on."""
    cost = found.priced and found.total.calls > 0
    table = Table(title="judge calls the run would make (dry run: nothing was called)")
    # "reused": answers the run would not pay for (in the judge cache, or asked twice within
    # a sample, e.g. the same verdict for two metrics)
    for column in ("step", "calls", "reused", "prompt tokens", "completion tokens"):
        table.add_column(column, justify="left" if column == "step" else "right")
    if cost:
        table.add_column("cost", justify="right")
    rows = [*sorted(found.by_step.items()), ("total", found.total)]
    for step, used in rows:
        cells = [
            escape(step),
            f"{used.calls:,}",
            f"{used.cached_calls:,}",
            f"{used.prompt_tokens:,}",
            f"{used.completion_tokens:,}",
        ]
        if cost:
            cells.append(_money(used.cost, found.currency))
        table.add_row(*cells, style="bold" if step == "total" else None)
    console.print(table)
    console.print(
        f"samples: {found.n_to_judge} of {found.n_samples} to judge; reused: answers in the "
        "judge cache or shared within a sample (not calls); tokens estimated without a tokenizer",
        highlight=False,
    )
    models = sorted({str(j.get("model") or j.get("kind") or "?") for j in found.judges.values()})
    if models:
        console.print(f"judge: {escape(', '.join(models))}", highlight=False)
    if found.seconds is not None:
        console.print(
            f"embedded judge time: about {found.seconds / 60:.1f} min of model time at its "
            "measured speed (free: no cost)",
            highlight=False,
        )
    elif found.total.calls and not found.priced:
        console.print(
            escape(
                "cost: unknown (the judge has no price: give one in its config file, [judge.price])"
            ),
            highlight=False,
        )
    if max_cost is not None and cost:
        verdict = "within" if found.total.cost <= max_cost else "over"
        console.print(f"--max-cost {max_cost:g}: the estimate is {verdict} it", highlight=False)
    for note in found.notes:
        console.print(f"note: {escape(note)}", highlight=False)


def budget_stopped(result: "EvaluationResult", run_dir: Path) -> str | None:
    """When ``--max-cost`` stopped the run: what was spent of it, how much was judged and how
    to go on (the reason for exit 3); else ``None``."""
    budget = result.config.get("budget") or {}
    if not budget.get("stopped"):
        return None
    currency = budget.get("currency")
    spent = _money(float(budget.get("spent") or 0.0), currency)
    limit = _money(float(budget.get("max_cost") or 0.0), currency)
    next_cost = budget.get("next_sample_estimate")
    after = (
        f" (the next sample was estimated at {_money(float(next_cost), currency)})"
        if next_cost is not None
        else ""
    )
    return (
        f"--max-cost stopped the run: spent {spent} of a budget of {limit}; "
        f"{budget.get('samples_judged')} of {budget.get('samples')} samples judged{after}; "
        f"the others are not started. Continue with ragmeter eval --resume "
        f"{run_dir} --max-cost HIGHER (what was spent counts)"
    )
