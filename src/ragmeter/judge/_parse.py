"""The one place judge output is parsed: tolerant JSON extraction, a repair of sloppy JSON
(before any paid re-ask), then schema validation."""

from __future__ import annotations

import copy
import functools
import json
import logging
import math
import re
import threading
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from ragmeter.judge._errors import JudgeOutputError
from ragmeter.judge._types import OutputT

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def _balanced_objects(text: str) -> list[str]:
    """Every top-level ``{...}`` or ``[...]`` span, respecting strings and escapes."""
    spans: list[str] = []
    depth, start, in_string, escaped = 0, -1, False, False
    closing = {"{": "}", "[": "]"}
    stack: list[str] = []
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"' and depth > 0:
            in_string = True
        elif char in closing:
            if depth == 0:
                start = index
            stack.append(closing[char])
            depth += 1
        elif depth > 0 and char == stack[-1]:
            stack.pop()
            depth -= 1
            if depth == 0:
                spans.append(text[start : index + 1])
    return spans


def extract_json(text: str) -> Any:
    """The JSON value in a model's answer: plain JSON, fenced, or embedded in prose.

    >>> extract_json('Sure! ```json\\n{"verdict": 1}\\n``` done')
    {'verdict': 1}
    >>> extract_json('The answer is {"claims": ["a {b}", "c"]}.')
    {'claims': ['a {b}', 'c']}
    """
    try:  # the common case, plain JSON: no scan of the text
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    candidates = [m.strip() for m in _FENCE.findall(text)]
    candidates += _balanced_objects(text)
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise JudgeOutputError("no JSON value found in the judge's answer", raw=text)


def parse_output(text: str, schema: type[OutputT], *, allow_repair: bool = True) -> OutputT:
    """Validate the judge's answer against ``schema``; raise :class:`JudgeOutputError` with a
    message a repair re-ask can quote.

    Strict JSON first. When that finds no value matching the schema, and ``allow_repair``,
    the answer's closed JSON spans are repaired (trailing commas, single quotes,
    True/False/None, comments, full-width ``：，“”``, raw newlines in strings) and validated
    the same way; an answer whose JSON is not closed (cut off) is never repaired. A repair
    is logged at debug level on ``ragmeter.judge`` and counted (:func:`repaired_answers`).

    >>> class Verdict(BaseModel):
    ...     verdict: int
    >>> parse_output('{"verdict": 1}', Verdict)
    Verdict(verdict=1)
    >>> parse_output("{'verdict': 1,}", Verdict)
    Verdict(verdict=1)
    """
    try:
        value = extract_json(text)
    except JudgeOutputError:
        if not allow_repair:
            raise
        return _repaired(text, schema, strict_error=None)
    try:
        return _validate(value, text, schema)
    except JudgeOutputError as error:
        if not allow_repair:
            raise
        return _repaired(text, schema, strict_error=error)


def _one_field(value: Any, schema: type[BaseModel]) -> Any:
    if isinstance(value, list) and len(schema.model_fields) == 1:
        # Small models often answer with the bare list for a one-field object.
        return {next(iter(schema.model_fields)): value}
    return value


def _schema_error(error: ValidationError, text: str) -> JudgeOutputError:
    problems = "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'answer'}: {e['msg']}" for e in error.errors()[:5]
    )
    return JudgeOutputError(f"answer does not match the schema: {problems}", raw=text)


def _validate(value: Any, text: str, schema: type[OutputT]) -> OutputT:
    try:
        return schema.model_validate(_one_field(value, schema))
    except ValidationError as error:
        raise _schema_error(error, text) from None


# -- repair of sloppy JSON ----------------------------------------------------------------

logger = logging.getLogger("ragmeter.judge")

_repairs_lock = threading.Lock()
_repairs = 0


def repaired_answers() -> int:
    """How many judge answers this process has parsed only after repairing their JSON (each
    one a re-ask saved)."""
    with _repairs_lock:
        return _repairs


def _count_repair() -> None:
    global _repairs
    with _repairs_lock:
        _repairs += 1


_FULL_WIDTH = {"：": ":", "，": ","}
#: After these (outside strings), a single quote opens a string; before these it closes one.
_BEFORE_VALUE = "{[,:"
_AFTER_VALUE = ",:]}/，："


def _next_significant(text: str, index: int) -> str:
    """The first non-space character at or after ``index`` (``""`` at the end)."""
    while index < len(text) and text[index].isspace():
        index += 1
    return text[index] if index < len(text) else ""


def _sloppy_spans(text: str) -> tuple[list[str], bool]:
    """Every top-level ``{...}`` / ``[...]`` span of a sloppy answer, with the full-width
    ``：``, ``，`` and ``“”`` that structure it and its single-quoted strings made ASCII JSON
    (what strings hold is kept as it is); and whether the answer ends inside an unclosed
    span (it was cut off).

    Strings are delimited by ``"``, by ``“``...``”`` and by single quotes where a value can
    start and end; ``//`` and ``/* */`` comments are skipped over (left for the repair to
    drop).

    >>> _sloppy_spans('答案：{“claims”：[“北京，中国”，"b"]} ok')
    (['{"claims":["北京，中国","b"]}'], False)
    >>> _sloppy_spans("{'claims': ['it's \\"ok\\"']} {'claims': ['a',")
    (['{"claims": ["it\\'s \\\\"ok\\\\""]}'], True)
    """
    spans: list[str] = []
    out: list[str] = []
    stack: list[str] = []
    closing = {"{": "}", "[": "]"}
    quote = ""  # the kind of string we are in: '"', "“" or "'"; "" outside strings
    escaped = False
    previous = ""  # the last significant character outside strings
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if not stack:
            if char in closing:
                out, previous = [char], char
                stack.append(closing[char])
            continue
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                if quote == "'" and text[index : index + 1] == "'":
                    out.append("'")  # \' is no JSON escape
                    index += 1
                    continue
                escaped = True
            elif (
                (quote == '"' and char == '"')
                or (quote == "“" and char in '”"')
                # "" (the end of the answer) is in every string: a quote there closes too
                or (quote == "'" and char == "'" and _next_significant(text, index) in _AFTER_VALUE)
            ):
                out.append('"')
                quote, previous = "", char
                continue
            elif char == '"':  # in a single-quoted string
                out.append('\\"')
                continue
            out.append(char)
            continue
        if char == "/" and index < len(text) and text[index] in "/*":
            end = text.find("\n" if text[index] == "/" else "*/", index + 1)
            end = len(text) if end < 0 else end + (1 if text[index] == "/" else 2)
            out.append(text[index - 1 : end])
            index = end
            continue
        if char in '"“”':
            quote = "“" if char in "“”" else '"'
            out.append('"')
        elif char == "'" and previous in _BEFORE_VALUE:
            quote = "'"
            out.append('"')
        elif char in closing:
            stack.append(closing[char])
            out.append(char)
        elif char == stack[-1]:
            stack.pop()
            out.append(char)
            if not stack:
                spans.append("".join(out))
        else:
            out.append(_FULL_WIDTH.get(char, char))
        if not char.isspace():
            previous = _FULL_WIDTH.get(char, char)
    return spans, bool(stack)


def _repaired(
    text: str, schema: type[OutputT], *, strict_error: JudgeOutputError | None
) -> OutputT:
    """The first closed JSON span of ``text`` that validates once repaired; else the strict
    parse's error (or the repaired value's schema error, or why there is nothing to repair)."""
    spans, cut_off = _sloppy_spans(text)
    names = set(schema.model_fields) | {
        field.alias for field in schema.model_fields.values() if field.alias
    }
    # A bare list stands for a one-field object only when it is the whole answer: in prose,
    # "[1]" or "[see above]" would repair to a list too.
    whole = _FENCE.sub(lambda match: match.group(1), text).strip()
    schema_error: JudgeOutputError | None = None
    import json_repair  # loaded on the first answer that needs repairing

    for span in spans:
        if span.startswith("[") and not (len(spans) == 1 and whole[:1] + whole[-1:] == "[]"):
            continue
        try:
            repaired = json_repair.loads(span)
        except (ValueError, TypeError, IndexError, RecursionError):
            continue
        if not isinstance(repaired, dict if span.startswith("{") else list):
            continue  # "{x}" repairs to ["x}"]: not what the answer meant
        value = _one_field(repaired, schema)
        if not isinstance(value, dict) or not names & set(value):
            continue  # not an answer to this schema: prose in braces, an example object
        try:
            output = schema.model_validate(value)
        except ValidationError as error:
            schema_error = schema_error or _schema_error(error, text)
            continue
        _count_repair()
        logger.debug(
            "judge answer for %s parsed after repairing its JSON (no re-ask)", schema.__name__
        )
        return output
    if strict_error is not None:
        raise strict_error
    if schema_error is not None:
        raise schema_error
    if cut_off:
        raise JudgeOutputError("the JSON in the judge's answer is not closed (cut off?)", raw=text)
    raise JudgeOutputError("no JSON value found in the judge's answer", raw=text)


def schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to endpoints and included in cache keys (a fresh copy)."""
    return copy.deepcopy(_schema_of(schema))


def schema_for_key(schema: type[BaseModel]) -> Mapping[str, Any]:
    """The same JSON schema, shared and not to be modified: for cache keys, which only read
    it (a copy per call was 8% of a run's time with a scripted judge)."""
    return _schema_of(schema)


@functools.lru_cache(maxsize=256)
def _schema_of(schema: type[BaseModel]) -> dict[str, Any]:
    # Generating it costs about a millisecond; every call of a step asks for the same one.
    return schema.model_json_schema()


_YES = {"1", "yes", "true", "是"}
_NO = {"0", "no", "false", "否"}


def verdict_probabilities(logprobs: list[dict[str, Any]] | None) -> list[float] | None:
    """P(yes) for each binary verdict token in an answer, from OpenAI-style ``logprobs.content``.

    A verdict token is one whose text (stripped, lower case) is 0/1, yes/no or true/false;
    its P(yes) is the yes-mass over the yes+no mass among the top alternatives.

    >>> import math
    >>> content = [{"token": '{"verdicts": [', "top_logprobs": []},
    ...            {"token": "1", "top_logprobs": [{"token": "1", "logprob": math.log(0.8)},
    ...                                            {"token": "0", "logprob": math.log(0.2)}]}]
    >>> [round(p, 3) for p in verdict_probabilities(content)]
    [0.8]
    """
    if not logprobs:
        return None
    probabilities: list[float] = []
    for entry in logprobs:
        token = str(entry.get("token", "")).strip().strip('"').lower()
        if token not in _YES and token not in _NO:
            continue
        alternatives = entry.get("top_logprobs") or [entry]
        yes = no = 0.0
        for alternative in alternatives:
            text = str(alternative.get("token", "")).strip().strip('"').lower()
            mass = math.exp(float(alternative.get("logprob", -math.inf)))
            if text in _YES:
                yes += mass
            elif text in _NO:
                no += mass
        if yes + no > 0:
            probabilities.append(yes / (yes + no))
        else:
            probabilities.append(1.0 if token in _YES else 0.0)
    return probabilities or None


def enum_distribution(
    logprobs: list[dict[str, Any]] | None, schema: dict[str, Any]
) -> dict[str, float] | None:
    """P(value) over the allowed values of the schema's first enumerated field (a label or
    a rubric score), from the top alternatives at the token where that value starts.

    ``None`` without token probabilities, without an enumerated field, or when the values
    cannot be told apart by their first token.

    >>> import math
    >>> schema = {"properties": {"reason": {"type": "string"}, "score": {"enum": [1, 2, 3]}}}
    >>> content = [{"token": '{"reason": "ok", "score": ', "top_logprobs": []},
    ...            {"token": "3", "top_logprobs": [{"token": "3", "logprob": math.log(0.6)},
    ...                                            {"token": "2", "logprob": math.log(0.3)}]}]
    >>> {k: round(v, 3) for k, v in enum_distribution(content, schema).items()}
    {'1': 0.0, '2': 0.333, '3': 0.667}
    """
    if not logprobs:
        return None
    field, values = next(
        (
            (name, [str(v) for v in spec["enum"]])
            for name, spec in (schema.get("properties") or {}).items()
            if isinstance(spec, dict) and spec.get("enum")
        ),
        (None, []),
    )
    if field is None:
        return None
    seen = ""
    for entry in logprobs:
        token = str(entry.get("token", ""))
        before = seen
        seen += token
        if f'"{field}"' not in before or not token.strip().strip('"'):
            continue
        start = token.strip().strip('"')
        if not any(v.startswith(start) for v in values):
            continue
        mass = dict.fromkeys(values, 0.0)
        for alternative in entry.get("top_logprobs") or [entry]:
            text = str(alternative.get("token", "")).strip().strip('"')
            matches = [v for v in values if text and v.startswith(text)]
            if len(matches) > 1:
                return None  # "pass" and "partial" both start with "pa"
            if matches:
                mass[matches[0]] += math.exp(float(alternative.get("logprob", -math.inf)))
        total = sum(mass.values())
        return {v: m / total for v, m in mass.items()} if total > 0 else None
    return None


def schema_instruction(schema: dict[str, Any]) -> str:
    """The instruction that carries the output schema when the endpoint does not enforce it."""
    return (
        "Answer with one JSON object only, no prose and no code fences, valid against this "
        f"JSON schema:\n{json.dumps(schema, ensure_ascii=False)}"
    )


def repair_request(
    conversation: list[dict[str, str]], answer: str, error: Exception, schema: dict[str, Any]
) -> list[dict[str, str]]:
    """The one repair re-ask: the conversation, the invalid answer, and what was wrong."""
    return [
        *conversation,
        {"role": "assistant", "content": answer},
        {
            "role": "user",
            "content": f"That answer is invalid ({error}). " + schema_instruction(schema),
        },
    ]
