"""What a pipeline returned, checked and turned into sample fields.

A pipeline returns the response as a ``str``, or a mapping / object with any of
``response``, ``retrieved_contexts`` and ``retrieved_context_ids``, or what a LangChain or
LlamaIndex pipeline returns (read by :mod:`ragmeter.experiments._adapters`). Anything else
is a bug in the pipeline, reported with the sample id and the field so the user can find it,
and recorded as that sample's failure rather than raised (one bad sample must not lose the
pipeline calls already paid for).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ragmeter.dataset import Sample, check_sample
from ragmeter.experiments._adapters import UnusableValue, adapt, describe

#: The sample fields a pipeline produces; every other field comes from the dataset.
OUTPUT_FIELDS: tuple[str, ...] = ("response", "retrieved_contexts", "retrieved_context_ids")


class PipelineOutputError(ValueError):
    """The pipeline returned something that is not a response or retrieval result.

    Not retried: the same code returns the same wrong type again.
    """


@dataclass(frozen=True)
class Outputs:
    """The sample fields a pipeline returned; the other keys of a returned mapping (token
    counts, model name...), kept in the record as they may explain a result; and the sample
    to evaluate, its inputs with these fields."""

    fields: dict[str, Any]
    sample: Sample
    extra: dict[str, Any] = field(default_factory=dict)


def _text_list(value: Any, name: str, sample_id: str, *, ids: bool) -> list[Any]:
    allowed = (str, int) if ids else (str,)
    if (
        isinstance(value, (str, bytes))
        or not isinstance(value, Sequence)
        or not all(isinstance(item, allowed) and not isinstance(item, bool) for item in value)
    ):
        kind = "ids (str or int)" if ids else "strings"
        raise PipelineOutputError(
            f"sample {sample_id!r}: {name} must be a list of {kind} in rank order, "
            f"got {describe(value)}"
        )
    return list(value)


def read_outputs(value: Any, sample: Sample, sample_id: str) -> Outputs:
    """What the pipeline returned for ``sample``, type-checked and merged into it."""
    extra: dict[str, Any] = {}
    try:
        adapted = adapt(value)  # dicts, LangChain and LlamaIndex values
    except UnusableValue as error:
        raise PipelineOutputError(f"sample {sample_id!r}: {error}") from None
    if adapted is not None:
        found, extra = adapted.fields, adapted.extra
    elif isinstance(value, str):
        found = {"response": value}
    else:
        found = {k: getattr(value, k) for k in OUTPUT_FIELDS if getattr(value, k, None) is not None}
    if not found:
        got = (
            f"a {type(value).__name__} with keys {sorted(map(str, value))}"
            if isinstance(value, Mapping)
            else describe(value)
        )
        raise PipelineOutputError(
            f"sample {sample_id!r}: the pipeline returned {got}, which holds none of "
            f"{', '.join(OUTPUT_FIELDS)}; return the response as a str, or a dict or object "
            "with those fields (or a LangChain / LlamaIndex result: see docs/experiments.md)"
        )
    if "response" in found and not isinstance(found["response"], str):
        raise PipelineOutputError(
            f"sample {sample_id!r}: response must be a str, got {describe(found['response'])}"
        )
    for name in ("retrieved_contexts", "retrieved_context_ids"):
        if name in found:
            found[name] = _text_list(
                found[name], name, sample_id, ids=name == "retrieved_context_ids"
            )
    return Outputs(found, with_outputs(sample, found, sample_id), extra)


def without_outputs(sample: Sample) -> Sample:
    """The sample's inputs only. What the pipeline does not return is never taken from the
    dataset (a stale response there would be scored as the pipeline's)."""
    return sample.model_copy(update=dict.fromkeys(OUTPUT_FIELDS))


def with_outputs(sample: Sample, fields: Mapping[str, Any], sample_id: str) -> Sample:
    """The sample to evaluate: its inputs with what the pipeline returned (one id per
    context when both are returned)."""
    record = {**without_outputs(sample).to_record(), **fields}
    try:
        merged = Sample.model_validate(record)
    except ValidationError as error:  # the checks above make this rare; still name the sample
        raise PipelineOutputError(f"sample {sample_id!r}: {error}") from None
    for name, message, fix in check_sample(merged):
        if name in OUTPUT_FIELDS:
            raise PipelineOutputError(f"sample {sample_id!r}: {name}: {message} ({fix})")
    return merged
