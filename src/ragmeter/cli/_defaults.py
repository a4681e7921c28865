"""The line a command prints on stderr when its judge or embeddings are the defaults (the
embedded offline judge, the local e5 model): chosen because nothing was configured, which a
user (or a CI job meant to use a fake or paid judge) should not have to guess."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from rich.markup import escape

from ragmeter.cli._app import errors

if TYPE_CHECKING:
    from ragmeter.judge import Judge
    from ragmeter.metrics import Metric

JudgeT = TypeVar("JudgeT", bound="Judge | None")


def default_services(judge: Judge | None, *, embeddings_used: bool) -> str | None:
    """``"judge: ...; embeddings: ..."`` naming those of ``judge`` and the embeddings (when
    ``embeddings_used`` and none is configured) that are defaults; ``None`` when neither is."""
    parts = []
    # by name: importing LocalJudge would load the embedded judge's module for every run
    if judge is not None and type(judge).__name__ == "LocalJudge":
        name = str(judge.describe().get("model", "the bundled model"))
        parts.append(
            f"judge: embedded {name} (default: no RAGMETER_JUDGE_MODEL or --judge-* given)"
        )
    if embeddings_used:
        from ragmeter.embed import EmbeddingsConfig, LocalEmbeddings

        try:
            configured = EmbeddingsConfig.from_env() is not None
        except ValueError:  # a misconfiguration: the run itself says what is wrong
            configured = True
        if not configured:  # the model's short name (loaded on first use, not here)
            name = str(LocalEmbeddings().describe()["model"]).rsplit("/", 1)[-1]
            parts.append(f"embeddings: local {name} (default: no RAGMETER_EMBEDDINGS_MODEL)")
    return "; ".join(parts) or None


def announce_defaults(judge: JudgeT, metrics: Sequence[Metric]) -> JudgeT:
    """Print which default judge and embeddings a run of ``metrics`` uses, if any, on stderr;
    returns ``judge``."""
    from ragmeter.metrics import SampleMetric

    embeddings_used = any(
        isinstance(m, SampleMetric) and m.uses_embeddings and m.embeddings is None for m in metrics
    )
    say_defaults(judge, embeddings_used=embeddings_used)
    return judge


def say_defaults(judge: Judge | None, *, embeddings_used: bool) -> None:
    """Print :func:`default_services`' line on stderr, if there is one."""
    line = default_services(judge, embeddings_used=embeddings_used)
    if line is not None:
        errors.print(f"using {escape(line)}", highlight=False, soft_wrap=True)
