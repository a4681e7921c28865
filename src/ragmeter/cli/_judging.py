"""The judge options every judged command shares, and ``ragmeter judge check``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragmeter._services import redact_url
from ragmeter.cli._app import _fail, app, console
from ragmeter.judge import Judge

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
CacheOption = Annotated[
    Path | None, typer.Option("--cache", help="Judge cache file (default .ragmeter/cache.db).")
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Do not use the judge cache.")]
LogprobsOption = Annotated[
    bool, typer.Option("--logprobs", help="Ask for token probabilities (P(yes) verdicts).")
]


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
        shown = None if self.base_url is None else redact_url(self.base_url)
        record = {
            "model": self.model,
            "base_url": shown,
            "provider": self.provider,
            "config": None if self.config is None else str(self.config),
            "logprobs": self.logprobs,
            "temperature": self.temperature,
        }
        if self.base_url_redacted or shown != self.base_url:
            record["base_url_redacted"] = True
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> JudgeOptions:
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

    def or_recorded(self, recorded: JudgeOptions) -> JudgeOptions:
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

    def build(self, cache: CacheOptions | None = None) -> Judge:
        """The judge: from ``config``, else the environment, else the embedded offline one."""
        from ragmeter.judge import JudgeConfig, default_judge, make_cache

        if self.base_url_redacted:
            raise ValueError(
                f"the judge base URL {self.base_url} was recorded without its credentials "
                "(runs never record them): give it again with --judge-base-url"
            )
        cache = cache or CacheOptions()
        config: JudgeConfig | None
        if self.config is not None:
            config = JudgeConfig.from_file(self.config, model=self.model, base_url=self.base_url)
        else:
            config = JudgeConfig.from_env(
                model=self.model, base_url=self.base_url, provider=self.provider
            )
        if config is not None and self.logprobs:
            config = config.model_copy(update={"logprobs": True})
        if config is not None and self.temperature is not None:
            config = config.model_copy(update={"temperature": self.temperature})
        return default_judge(
            config,
            cache=make_cache(cache.path, enabled=not cache.disabled, refresh=cache.refresh),
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

    The API key is read from RAGMETER_JUDGE_API_KEY (or OPENAI_API_KEY, for the endpoint
    OPENAI_BASE_URL names only; with --judge-config, from the variable its api_key_env
    names), never from the command line.
    """
    from ragmeter.judge import BinaryVerdict, JudgeError, Message

    options = JudgeOptions(judge_model, judge_base_url, judge_provider, judge_config, logprobs)
    try:
        judge = options.build(CacheOptions(disabled=True))
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
