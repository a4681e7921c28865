"""The judge options every judged command shares, and ``ragmeter judge check``."""

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter.cli._app import CommandGroup, _fail, app, console, errors
from ragmeter.cli._exit import ExitCode
from ragmeter.cli._groups import OptionGroup, option_groups

if TYPE_CHECKING:
    from ragmeter._services import Usage
    from ragmeter.judge import Judge
    from ragmeter.metrics import Metric

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
        help=(
            "openai, azure, gemini, openrouter, deepseek, qwen, moonshot, zhipu, siliconflow, "
            "volcengine, qianfan, ollama, vllm, llama.cpp, anthropic, or litellm (with the "
            "litellm extra: any LiteLLM model string as --judge-model)."
        ),
    ),
]
JudgeConfigOption = Annotated[
    Path | None, typer.Option("--judge-config", help="TOML or JSON file with a judge table.")
]
CacheOption = Annotated[
    Path | None, typer.Option("--cache", help="Judge cache file (default .ragmeter/cache.db).")
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not use the judge cache.")]
LogprobsOption = Annotated[
    bool, typer.Option("--logprobs", help="Ask for token probabilities (P(yes) verdicts).")
]
JudgeLanguageOption = Annotated[
    str | None,
    typer.Option("--language", help="Judge prompts in en or zh (default: per sample)."),
]
ConcurrencyOption = Annotated[
    int, typer.Option("--concurrency", help="Samples judged at once.", min=1)
]

_Command = TypeVar("_Command", bound=Callable[..., Any])


def whole_paragraphs(command: _Command) -> _Command:
    """Let ``--help`` wrap a command's docstring to the terminal: typer keeps the line breaks
    of the source inside every paragraph after the first, which cuts sentences mid-line."""
    if command.__doc__:
        paragraphs = inspect.cleandoc(command.__doc__).split("\n\n")
        command.__doc__ = "\n\n".join(
            p if p.startswith("\b") else " ".join(p.split("\n")) for p in paragraphs
        )
    return command


@dataclass(frozen=True)
class CacheOptions:
    """Where the judge's answers are cached (``--cache``, ``--no-cache``, ``--refresh-cache``)."""

    path: Path | None = None
    disabled: bool = False
    refresh: bool = False


@dataclass(frozen=True)
class JudgeOptions:
    """Which judge to call (the ``--judge-*`` options). Never the API key: it is read from
    the environment, also on resume. Nor the credentials of a base URL: the record has it
    redacted (``base_url_redacted``), and resuming such a run needs ``--judge-base-url``
    again."""

    model: str | None = None
    base_url: str | None = None
    provider: str | None = None
    config: Path | None = None
    logprobs: bool = False
    temperature: float | None = None
    #: ``base_url`` is a recorded one with its credentials left out: it cannot be called.
    base_url_redacted: bool = False

    def to_record(self) -> dict[str, Any]:
        """As a run records them (the ``judge`` of ``ragmeter eval``'s record)."""
        from ragmeter._services import redact_url

        shown = None if self.base_url is None else redact_url(self.base_url)
        record = asdict(self)
        del record["base_url_redacted"]
        record.update(base_url=shown, config=None if self.config is None else str(self.config))
        if self.base_url_redacted or shown != self.base_url:
            record["base_url_redacted"] = True
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "JudgeOptions":
        config = record.get("config")
        return cls(
            model=record.get("model"),
            base_url=record.get("base_url"),
            provider=record.get("provider"),
            config=Path(config) if config else None,
            logprobs=bool(record.get("logprobs")),
            temperature=record.get("temperature"),
            base_url_redacted=bool(record.get("base_url_redacted")),
        )

    def or_recorded(self, recorded: "JudgeOptions") -> "JudgeOptions":
        """These options, each one not given taken from ``recorded`` (a resumed run's)."""
        return JudgeOptions(
            model=self.model or recorded.model,
            base_url=self.base_url or recorded.base_url,
            provider=self.provider or recorded.provider,
            config=recorded.config if self.config is None else self.config,
            logprobs=self.logprobs or recorded.logprobs,
            temperature=recorded.temperature if self.temperature is None else self.temperature,
            base_url_redacted=self.base_url_redacted
            if self.base_url
            else recorded.base_url_redacted,
        )

    def build(self, cache: CacheOptions | None = None) -> "Judge":
        """The judge: from ``config``, else the environment, else the embedded offline one."""
        from ragmeter.judge import default_judge, judge_config, make_cache

        if self.base_url_redacted:
            raise ValueError(
                f"the judge base URL {self.base_url} was recorded without its credentials "
                "(runs never record them): give it again with --judge-base-url"
            )
        cache = cache or CacheOptions()
        config = judge_config(
            self.config, model=self.model, base_url=self.base_url, provider=self.provider
        )
        if config is not None and self.logprobs:
            config = config.model_copy(update={"logprobs": True})
        if config is not None and self.temperature is not None:
            config = config.model_copy(update={"temperature": self.temperature})
        return default_judge(
            config,
            cache=make_cache(cache.path, enabled=not cache.disabled, refresh=cache.refresh),
        )

    def build_if_needed(
        self, metrics: "Sequence[Metric]", cache: CacheOptions | None = None
    ) -> "Judge | None":
        """The judge (:meth:`build`), made only when some of ``metrics`` calls one."""
        from ragmeter.metrics import SampleMetric

        if any(isinstance(m, SampleMetric) and m.uses_judge for m in metrics):
            return self.build(cache)
        return None


#: The ``--judge-*`` options, without and with ``--logprobs``, and the cache options, each
#: taken by a command as one value (:mod:`ragmeter.cli._groups`).
_JUDGE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "judge_model": (JudgeModelOption, None),
    "judge_base_url": (JudgeBaseUrlOption, None),
    "judge_provider": (JudgeProviderOption, None),
    "judge_config": (JudgeConfigOption, None),
}
JudgeGroup = Annotated[
    JudgeOptions, OptionGroup(JudgeOptions, **_JUDGE_OPTIONS, logprobs=(LogprobsOption, False))
]
JudgeWithoutLogprobsGroup = Annotated[JudgeOptions, OptionGroup(JudgeOptions, **_JUDGE_OPTIONS)]
CacheGroup = Annotated[
    CacheOptions,
    OptionGroup(CacheOptions, cache=(CacheOption, None), no_cache=(NoCacheOption, False)),
]


judge_app = typer.Typer(
    help="Check the judge configuration.", no_args_is_help=True, cls=CommandGroup
)
app.add_typer(judge_app, name="judge")


@judge_app.command("check")
@whole_paragraphs
@option_groups
def judge_check(given: JudgeGroup = JudgeOptions()) -> None:
    """Ask the configured judge five known-answer questions; end with PASS or FAIL.

    Two yes/no questions in English and two in Chinese (one yes, one no each), and one
    claims list through a ragmeter step schema, which exercises the structured-output mode.
    Token probabilities (P(yes)) are always asked for, and reported when the endpoint
    returns them; with --logprobs, an endpoint that does not is a failure. Per check: the
    answer against the known one, P(yes), latency and tokens. Nothing is cached.

    Exit 0 on PASS; 1 on FAIL (a wrong known answer, an answer that does not fit the
    schema, an endpoint that does not answer); 2 when the configuration is wrong (a
    rejected key, a wrong model or URL).

    The API key is read from RAGMETER_JUDGE_API_KEY (or OPENAI_API_KEY, for the endpoint
    OPENAI_BASE_URL names only; with --judge-config, from the variable its api_key_env
    names), never from the command line.
    """
    import statistics

    from ragmeter._services import redact_secrets
    from ragmeter.judge import JudgeError

    options = replace(given, logprobs=True)
    try:
        judge, results, logprobs_rejected = _check_judge(options, logprobs_required=given.logprobs)
    except (JudgeError, ValueError, ImportError, OSError) as error:
        _fail(str(error))
    mode = _structured_mode(judge)
    table = Table(show_header=False)
    for key, value in judge.describe().items():
        table.add_row(escape(str(key)), escape(str(value)))
    table.add_row("structured output used", escape(mode))
    answered = [r for r in results if r.check.verdict is not None and r.failure in (None, "answer")]
    with_p = [r for r in answered if r.p_yes is not None]
    if logprobs_rejected:
        logprobs_word, logprobs_row = "logprobs no", "refused by the judge: checked without them"
    elif with_p:
        logprobs_word = "logprobs yes"
        logprobs_row = f"returned: P(yes) for {len(with_p)} of {len(answered)} verdicts"
    else:
        logprobs_word, logprobs_row = "logprobs no", "not returned (verdicts are 0/1 only)"
    table.add_row("logprobs", logprobs_row)
    console.print(table)

    checks = Table("check", "question", "expected", "answer", "P(yes)", "latency", "tokens", "")
    for result in results:
        usage = result.usage
        latency = tokens = "—"
        if usage is not None and usage.calls:
            latency = f"{usage.latency_s:.2f} s"
            if usage.calls > 1:
                latency += f" ({usage.calls} requests)"
            tokens = f"{usage.prompt_tokens} in, {usage.completion_tokens} out"
        checks.add_row(
            result.check.name,
            escape(result.check.question),
            escape(result.check.expected),
            escape(result.answer),
            "—" if result.p_yes is None else f"{result.p_yes:.3f}",
            latency,
            tokens,
            "[green]right[/green]" if result.right else "[bold red]WRONG[/bold red]",
        )
    console.print(checks)

    latencies = [r.usage.latency_s for r in results if r.usage is not None and r.usage.calls]
    median = f"{statistics.median(latencies):.2g} s median" if latencies else "no answer"
    n_right = sum(r.right for r in results)
    line = (
        f"the judge answered {n_right} of {len(_CHECKS)} checks right "
        f"({mode}, {logprobs_word}, {median})"
    )
    problems = [f"{r.check.name}: {r.problem}" for r in results if not r.right]
    problems += [f"{check.name}: not run" for check in _CHECKS[len(results) :]]
    advice = _advice(results, mode)
    if given.logprobs and not with_p:
        problems.append("--logprobs: the endpoint returned no token probabilities")
        advice.append(
            "Drop --logprobs (verdicts are then 0/1), or use an endpoint that returns them."
        )
    if not problems:
        console.print(f"[green]PASS: {escape(line)}[/green]", highlight=False, soft_wrap=True)
        return
    text = redact_secrets(f"FAIL: {line}; {'; '.join(problems)}. To do: {' '.join(advice)}")
    errors.print(f"[bold red]{escape(text)}[/bold red]", highlight=False, soft_wrap=True)
    raise typer.Exit(int(ExitCode.GATE_FAILED))


@dataclass(frozen=True)
class _Check:
    """One known-answer check of ``judge check``: a yes/no question (``verdict``), or, with
    ``verdict`` ``None``, the text to split into claims (the structured-output check)."""

    name: str
    system: str
    question: str
    verdict: Literal[0, 1] | None = None

    @property
    def expected(self) -> str:
        if self.verdict is None:
            return "claims naming Paris"
        return "yes (1)" if self.verdict else "no (0)"


_EN_SYSTEM = "You verify facts. Answer 1 for yes and 0 for no."
_ZH_SYSTEM = "你负责核实事实。是则回答 1，否则回答 0。"
_CHECKS = (
    _Check("en yes", _EN_SYSTEM, "Is Paris the capital of France?", 1),
    _Check("en no", _EN_SYSTEM, "Is the Pacific the smallest ocean?", 0),
    _Check("zh yes", _ZH_SYSTEM, "北京是中国的首都吗？", 1),
    _Check("zh no", _ZH_SYSTEM, "太阳从西边升起吗？", 0),
    _Check(
        "structured",
        "Split the text into short, self-contained factual claims, each a full sentence.",
        "Paris is the capital of France. It has about two million inhabitants.",
    ),
)


@dataclass
class _CheckResult:
    check: _Check
    answer: str = "—"
    right: bool = False
    p_yes: float | None = None
    usage: "Usage | None" = None
    #: Why the check failed, in words (``None`` when it is right).
    problem: str | None = None
    #: What failed: "answer" (a wrong known answer), "output" (no answer fitting the
    #: schema), "endpoint" (no answer at all: the checks after it are not run).
    failure: str | None = None


def _check_judge(
    options: JudgeOptions, *, logprobs_required: bool
) -> "tuple[Judge, list[_CheckResult], bool]":
    """The judge and its check results, and whether it refused token probabilities (then
    the checks ran again without them)."""
    import asyncio

    from ragmeter.judge import JudgeConfigError

    try:
        judge = options.build(CacheOptions(disabled=True))
        return judge, asyncio.run(_run_checks(judge)), False
    except (JudgeConfigError, ValueError):
        if logprobs_required:
            raise
    # A judge may refuse logprobs (Anthropic's, when it is made; an endpoint, with HTTP
    # 400): once more without them. A wrong key, model or URL is refused again, and
    # reported as a configuration error.
    judge = replace(options, logprobs=False).build(CacheOptions(disabled=True))
    return judge, asyncio.run(_run_checks(judge)), True


async def _run_checks(judge: "Judge") -> list[_CheckResult]:
    results: list[_CheckResult] = []
    try:
        for check in _CHECKS:
            results.append(await _run_one(judge, check))
            if results[-1].failure == "endpoint":
                break
    finally:
        await judge.release_loop_resources()
    return results


async def _run_one(judge: "Judge", check: _Check) -> _CheckResult:
    from ragmeter.judge import (
        BinaryVerdict,
        JudgeConfigError,
        JudgeError,
        JudgeOutputError,
        Message,
    )
    from ragmeter.steps import schema_for

    result = _CheckResult(check)
    messages = [Message("system", check.system), Message("user", check.question)]
    schema = (
        BinaryVerdict if check.verdict is not None else schema_for("response_analysis", ("claims",))
    )
    try:
        judgment = await judge.generate(messages, schema, prompt_version="judge-check@2")
    except JudgeConfigError:
        raise
    except JudgeError as error:
        output = isinstance(error, JudgeOutputError)
        result.usage, result.failure = error.usage, "output" if output else "endpoint"
        result.problem = f"no answer{' fitting the schema' if output else ''} ({error})"
        return result
    result.usage = judgment.usage
    if check.verdict is not None:
        verdict = getattr(judgment.output, "verdict", None)
        result.answer = "yes (1)" if verdict == 1 else "no (0)"
        result.right = verdict == check.verdict
        result.p_yes = judgment.probabilities[0] if judgment.probabilities else None
    else:
        claims = [c.strip() for c in getattr(judgment.output, "claims", []) if c.strip()]
        naming = sum("paris" in claim.lower() for claim in claims)
        result.answer = f"{len(claims)} claims, {naming} naming Paris"
        result.right = naming > 0
    if not result.right:
        result.failure = "answer"
        result.problem = f"answered {result.answer}, expected {check.expected}"
    return result


def _structured_mode(judge: "Judge") -> str:
    """The structured-output mode the judge used: an endpoint's (after any fallback),
    ``grammar`` for the embedded judge."""
    mode = getattr(judge, "structured_output_mode", None)
    if isinstance(mode, str):
        return mode
    return "grammar" if judge.describe().get("kind") == "local" else "n/a"


def _advice(results: list[_CheckResult], mode: str) -> list[str]:
    """What to do about each kind of failure met."""
    failures = {r.failure for r in results}
    advice = []
    if "endpoint" in failures:
        advice.append("Check that the endpoint is running and reachable, then run again.")
    if "output" in failures:
        advice.append(
            f"Its answers do not fit the schema under {mode}: set structured_output "
            '("json_object" or "text") in a --judge-config file, or use a model that follows '
            "JSON schemas."
        )
    if "answer" in failures:
        advice.append(
            "A judge that gets known answers wrong scores wrongly: use a larger or better model."
        )
    return advice
