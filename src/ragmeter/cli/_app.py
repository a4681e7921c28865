"""The ``ragmeter`` command line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragmeter._version import __version__
from ragmeter.dataset import DatasetError, InvalidRow
from ragmeter.judge import Judge
from ragmeter.metrics import SPECS, Direction, UnknownMetricError, resolve_metrics
from ragmeter.results import EvaluationResult
from ragmeter.runner import evaluate

app = typer.Typer(
    name="ragmeter",
    help="Evaluate RAG systems: is it good, where does it fail, did a change help?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
errors = Console(stderr=True)

EXIT_USAGE = 2


def _version(value: bool) -> None:
    if value:
        console.print(f"ragmeter {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Evaluate RAG systems: is it good, where does it fail, did a change help?"""


def _parse_column_map(pairs: list[str]) -> dict[str, str]:
    mapping = {}
    for pair in pairs:
        source, sep, target = pair.partition("=")
        if not sep or not source or not target:
            raise typer.BadParameter(
                f"expected YOUR_NAME=ragmeter_name, got {pair!r}", param_hint="--column-map"
            )
        mapping[source.strip()] = target.strip()
    return mapping


def _print_problems(rows: list[InvalidRow]) -> None:
    for invalid in rows:
        for problem in invalid.problems:
            errors.print(f"  - {problem}", highlight=False, markup=False, soft_wrap=True)


def _fail(message: str, rows: list[InvalidRow] | None = None) -> NoReturn:
    errors.print(f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True)
    _print_problems(rows or [])
    raise typer.Exit(EXIT_USAGE)


def _format(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def summary_table(result: EvaluationResult) -> Table:
    table = Table(title=f"{len(result)} samples", title_justify="left")
    table.add_column("metric", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column("median", justify="right")
    table.add_column("coverage", justify="right")
    table.add_column("n/a", justify="right")
    table.add_column("failed", justify="right")
    table.add_column("better", justify="center")
    for name, agg in result.aggregates.items():
        table.add_row(
            name,
            _format(agg.mean),
            _format(agg.median),
            f"{agg.n_ok}/{agg.n_total}",
            str(agg.n_not_applicable),
            f"[red]{agg.n_failed}[/red]" if agg.n_failed else "0",
            "↑" if agg.direction is Direction.HIGHER_IS_BETTER else "↓",
        )
    return table


@app.command("eval")
def eval_command(
    data: Annotated[Path, typer.Argument(help="Dataset file: .jsonl, .json, .csv or .parquet.")],
    metrics: Annotated[
        str,
        typer.Option(
            "--metrics", "-m", help="Comma-separated metric names, e.g. precision@5,ndcg@10,mrr."
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Run directory for results (default runs/NAME-TIME)."),
    ] = None,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Evaluate the valid rows and list the others.")
    ] = False,
    column_map: Annotated[
        list[str] | None,
        typer.Option("--column-map", help="Rename a column: YOUR_NAME=ragmeter_name (repeatable)."),
    ] = None,
    format: Annotated[
        str | None,
        typer.Option("--format", help="jsonl, json, csv or parquet (default: from extension)."),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print only the summary table.")
    ] = False,
    judge_model: JudgeModelOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    judge_provider: JudgeProviderOption = None,
    judge_config: JudgeConfigOption = None,
    logprobs: LogprobsOption = False,
    language: Annotated[
        str | None,
        typer.Option("--language", help="Judge prompts in en or zh (default: per sample)."),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Samples judged at once.", min=1)
    ] = 16,
    cache: Annotated[
        Path | None, typer.Option("--cache", help="Judge cache file (default .ragmeter/cache.db).")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not use the judge cache.")
    ] = False,
    refresh_cache: Annotated[
        bool, typer.Option("--refresh-cache", help="Ignore cached answers; store new ones.")
    ] = False,
) -> None:
    """Score a dataset with the given metrics and write per-sample results.

    LLM metrics use the judge given by the --judge-* options, else the RAGMETER_JUDGE_* (or
    OPENAI_*) environment, else the embedded offline judge. The API key is read from the
    environment only.
    """
    from ragmeter.judge import JudgeError
    from ragmeter.metrics.llm import JudgedMetric

    try:
        resolved = resolve_metrics(metrics)
        judge = None
        if any(isinstance(m, JudgedMetric) and m.uses_judge for m in resolved):
            judge = _judge_from_options(
                judge_model,
                judge_base_url,
                judge_provider,
                judge_config,
                logprobs,
                cache=cache,
                no_cache=no_cache,
                refresh_cache=refresh_cache,
            )
        if language not in (None, "en", "zh"):
            raise ValueError(f"--language must be en or zh, got {language!r}")
        result = evaluate(
            data,
            resolved,
            column_map=_parse_column_map(column_map or []),
            skip_invalid=skip_invalid,
            format=format,
            judge=judge,
            language=language,  # type: ignore[arg-type]
            concurrency=concurrency,
        )
    except (
        UnknownMetricError,
        DatasetError,
        FileNotFoundError,
        ValueError,
        ImportError,
        JudgeError,
    ) as error:
        _fail(str(error))
    if not len(result):
        _fail(f"no valid row to evaluate in {data}", result.skipped)

    run_dir = output or Path("runs") / f"{data.stem}-{dt.datetime.now():%Y%m%d-%H%M%S}"
    result.save(run_dir)
    console.print(summary_table(result))
    judge_error = result.config.get("judge_error")
    if judge_error:
        _fail(
            f"the judge refused its configuration, so the judged metrics were not computed "
            f"(results so far are in {run_dir}): {judge_error}"
        )
    if result.skipped:
        errors.print(f"[yellow]skipped {len(result.skipped)} invalid row(s):[/yellow]")
        _print_problems(result.skipped)
    if not quiet:
        console.print(f"per-sample results: {run_dir / 'results.jsonl'}", highlight=False)


@app.command("metrics")
def metrics_command() -> None:
    """List every metric with the fields it needs and which direction is better."""
    table = Table()
    table.add_column("metric", no_wrap=True)
    table.add_column("family")
    table.add_column("needs")
    table.add_column("better", justify="center")
    table.add_column("description")
    for spec in SPECS:
        metric = spec.example()
        name = spec.name + (
            "@K" if spec.cutoff == "required" else "[@K]" if spec.cutoff == "optional" else ""
        )
        needs = ", ".join(" or ".join(options) for options in metric.requires)
        arrow = "↑" if metric.direction is Direction.HIGHER_IS_BETTER else "↓"
        aliases = f" (also {', '.join(spec.aliases)})" if spec.aliases else ""
        table.add_row(escape(name), spec.family, needs, arrow, escape(spec.summary + aliases))
    console.print(table)


JudgeModelOption = Annotated[
    str | None, typer.Option("--judge-model", help="Judge model (else RAGMETER_JUDGE_MODEL).")
]
JudgeBaseUrlOption = Annotated[
    str | None,
    typer.Option("--judge-base-url", help="OpenAI-compatible API root, e.g. http://host/v1."),
]
JudgeProviderOption = Annotated[
    str | None,
    typer.Option(
        "--judge-provider",
        help="openai, deepseek, qwen, moonshot, zhipu, ollama, vllm or llama.cpp.",
    ),
]
JudgeConfigOption = Annotated[
    Path | None, typer.Option("--judge-config", help="TOML or JSON file with a judge table.")
]
LogprobsOption = Annotated[
    bool, typer.Option("--logprobs", help="Ask for token probabilities (P(yes) verdicts).")
]


def _judge_from_options(
    model: str | None,
    base_url: str | None,
    provider: str | None,
    config_file: Path | None,
    logprobs: bool,
    *,
    cache: Path | None = None,
    no_cache: bool = False,
    refresh_cache: bool = False,
) -> Judge:
    from ragmeter.judge import JudgeConfig
    from ragmeter.judge._default import default_judge, make_cache

    if config_file is not None:
        config = JudgeConfig.from_file(config_file, model=model, base_url=base_url)
    else:
        config = JudgeConfig.from_env(model=model, base_url=base_url, provider=provider)
    if config is not None and logprobs:
        config = config.model_copy(update={"logprobs": True})
    return default_judge(
        config, cache=make_cache(cache, enabled=not no_cache, refresh=refresh_cache)
    )


judge_app = typer.Typer(help="Check the judge configuration.", no_args_is_help=True)
app.add_typer(judge_app, name="judge")


@judge_app.command("check")
def judge_check(
    judge_model: JudgeModelOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    judge_provider: JudgeProviderOption = None,
    judge_config: JudgeConfigOption = None,
    logprobs: LogprobsOption = False,
) -> None:
    """Send one tiny verdict request to the configured judge and report how it went.

    The API key is read from RAGMETER_JUDGE_API_KEY (or OPENAI_API_KEY), never from the
    command line.
    """
    import asyncio

    from ragmeter.judge import BinaryVerdict, JudgeError, Message

    try:
        judge = _judge_from_options(
            judge_model, judge_base_url, judge_provider, judge_config, logprobs, no_cache=True
        )
        question = [
            Message("system", "You verify facts. Answer 1 for yes and 0 for no."),
            Message("user", "Is Paris the capital of France?"),
        ]
        judgment = asyncio.run(
            judge.generate(question, BinaryVerdict, prompt_version="judge-check@1")
        )
    except (JudgeError, ValueError, ImportError, OSError) as error:
        _fail(str(error))
    table = Table(show_header=False)
    for key, value in judge.describe().items():
        table.add_row(escape(str(key)), escape(str(value)))
    usage = judgment.usage
    mode = getattr(judge, "structured_output_mode", None)
    if mode is not None:
        table.add_row("structured output used", mode)
    table.add_row("verdict (expected 1)", str(judgment.output.verdict))
    table.add_row(
        "P(yes)", "—" if judgment.probabilities is None else f"{judgment.probabilities[0]:.3f}"
    )
    table.add_row("latency", f"{usage.latency_s:.2f} s over {usage.calls} request(s)")
    table.add_row("tokens", f"{usage.prompt_tokens} in, {usage.completion_tokens} out")
    console.print(table)


def main() -> None:
    app()
