"""The one structured-output loop of every endpoint judge (OpenAI-compatible, Anthropic,
LiteLLM): complete with a doubled token budget while the answer is cut off, then parse ->
one repair re-ask -> parse. A dialect supplies only its hooks: how a conversation is
written, one exchange (build the request, send it, read text, usage and finish reason),
and the repair turns. What an endpoint was found to take (its capabilities) is kept in one
registry, per dialect and endpoint identity, for the life of the process."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from ragmeter._services import (
    Cache,
    EndpointClient,
    JudgeError,
    Limiter,
    Message,
    Usage,
    UsageLedger,
    estimate_tokens,
)
from ragmeter.judge._base import Judge
from ragmeter.judge._config import Price
from ragmeter.judge._errors import (
    MAX_TOKEN_BUDGET,
    JudgeOutputError,
    after_repair_error,
    truncated_error,
)
from ragmeter.judge._parse import (
    enum_distribution,
    parse_output,
    repair_request,
    schema_instruction,
    schema_of,
    verdict_probabilities,
)
from ragmeter.judge._prices import PriceTable
from ragmeter.judge._types import Judgment, OutputT

if TYPE_CHECKING:  # only for an explicit transport: aiohttp does the requests otherwise
    import httpx


@dataclass
class Reply:
    """One answer of an endpoint, as the loop reads it."""

    #: The answer as text (a tool call's input as JSON).
    text: str
    #: Why the token limit cut it off (``finish_reason=length``), ``None`` when it did not.
    cut_off: str | None = None
    #: OpenAI-style ``logprobs.content`` entries, when the endpoint returned them.
    logprobs: list[dict[str, Any]] | None = None
    #: The dialect's own answer (for its repair turns).
    data: Any = None


@dataclass
class Capabilities:
    """What one endpoint (dialect and identity) was found to take, remembered for the life of
    the process by every judge of that endpoint."""

    #: ``response_format: json_schema`` refused (then json_object from now on).
    no_json_schema: bool = False
    #: Parameters refused: parameter -> the name it is sent as instead (``None``: not sent).
    refused_params: dict[str, str | None] = field(default_factory=dict)
    #: The structured-output mode the endpoint left us with (Anthropic's ``auto``).
    mode: str | None = None
    #: Whether the model refused ``temperature`` (its default is used).
    no_temperature: bool = False


#: (dialect, endpoint identity) -> what that endpoint was found to take.
_CAPABILITIES: dict[tuple[str, str], Capabilities] = {}


class EndpointSettings(Protocol):
    """What the loop reads of an endpoint judge's config."""

    @property
    def identity(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def max_tokens(self) -> int: ...

    @property
    def price(self) -> Price | None: ...

    def generation_params(self) -> dict[str, Any]: ...


class ChatSettings(EndpointSettings, Protocol):
    """What the chat-completions shape reads of its config besides."""

    @property
    def structured_output(self) -> str: ...

    @property
    def logprobs(self) -> bool: ...


ConfigT = TypeVar("ConfigT", bound=EndpointSettings)
ChatConfigT = TypeVar("ChatConfigT", bound=ChatSettings)


@dataclass(frozen=True)
class Ask:
    """One chat-completions request as the loop asks for it."""

    messages: list[dict[str, str]]
    schema: dict[str, Any]
    #: The structured-output mode: json_schema, json_object or text.
    mode: str
    max_tokens: int
    #: Whether a refusal of ``json_schema`` is to be told apart (:class:`SchemaRejected`).
    probing_schema: bool

    @property
    def response_format(self) -> dict[str, Any] | None:
        """The ``response_format`` the request carries (:func:`response_format`)."""
        return response_format(self.mode, self.schema)

    def refuses_schema(self, status: int, detail: str) -> bool:
        """Whether an error answer (``status``, what it said) is the endpoint refusing
        ``json_schema`` while it is probed (:func:`rejects_response_format`)."""
        return self.probing_schema and rejects_response_format(status, detail)


class EndpointJudge(Judge, Generic[ConfigT]):
    """A judge on a remote endpoint: :meth:`Judge._call` as one template (complete with
    truncation doubling; parse, one repair re-ask, parse), the dialect in the hooks."""

    #: The registry key of this dialect's capabilities.
    dialect: ClassVar[str]
    config: ConfigT
    #: The endpoint's HTTP client (:meth:`_open`; a judge calling a library has none).
    http: EndpointClient
    #: The endpoint's limits, shared by every client of it in this process.
    limiter: Limiter
    #: What a million tokens cost; ``None``: cost not counted.
    price: Price | None = None

    def __init__(
        self,
        config: ConfigT,
        *,
        cache: Cache | None = None,
        ledger: UsageLedger | None = None,
        prices: PriceTable | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(cache=cache, ledger=ledger)
        self.config = config
        self._open(transport)
        model = config.model
        #: The config's price, else the one ``prices`` has for the model, else a known one.
        self.price = (
            config.price
            or (prices.price_of(model) if prices is not None else None)
            or self._known_price(model)
        )

    #: A copy for another process (a Ray worker) makes its own client and limiter.
    _process_local = (*Judge._process_local, "http", "limiter")

    def _reopen(self) -> None:
        super()._reopen()
        self._open()

    @abstractmethod
    def _open(self, transport: httpx.AsyncBaseTransport | None = None) -> None:
        """Make what belongs to this process: :attr:`http` (on ``transport`` when one is
        given) and :attr:`limiter`; a copy received from another process makes them again."""

    def _known_price(self, model: str) -> Price | None:
        """The price this dialect knows for ``model`` (``None``: none)."""
        return None

    async def aclose(self) -> None:
        await self.http.aclose()

    async def release_loop_resources(self) -> None:
        await self.http.aclose_current_loop()

    @property
    def identity(self) -> str:
        # asked several times per call: computed once per (frozen) config
        cached = self.__dict__.get("_identity")
        if cached is None or cached[0] is not self.config:
            cached = self.__dict__["_identity"] = (self.config, self.config.identity)
        return str(cached[1])

    def generation_params(self) -> dict[str, Any]:
        return self.config.generation_params()

    def _price_shown(self) -> dict[str, Any] | str:
        """The price as :meth:`describe` shows it."""
        if self.price is None:
            return "unknown: cost not counted (set price= in the judge config)"
        return self.price.model_dump()

    def _settle(
        self, usage: Usage, estimated: int, prompt: int, completion: int, cost: float
    ) -> None:
        """Count one answer's tokens (``estimated`` before it was sent) and cost."""
        usage.prompt_tokens += prompt
        usage.completion_tokens += completion
        usage.cost += cost
        self.limiter.settle_tokens(estimated, prompt + completion)

    @property
    def capabilities(self) -> Capabilities:
        """What this endpoint was found to take so far (shared by judges of the endpoint)."""
        key = (self.dialect, self.identity)
        found = _CAPABILITIES.get(key)
        if found is None:
            found = _CAPABILITIES[key] = Capabilities()
        return found

    # -- hooks ----------------------------------------------------------------------------
    def redact(self, text: str) -> str:
        """``text`` without the endpoint's secrets: every answer quoted in an error is."""
        return self.http.redact(text)

    def _first_budget(self) -> int:
        """The token limit of a conversation's first request."""
        return self.config.max_tokens

    def _budget_after_refusal(self, max_tokens: int) -> int:
        """The token limit after the endpoint refused how it was asked (and it was learnt)."""
        return max_tokens

    def _schema_json(self, schema: type[OutputT]) -> dict[str, Any]:
        """The JSON schema the requests carry (only read)."""
        return schema_of(schema)

    def _wants_logprobs(self) -> bool:
        return False

    @abstractmethod
    def _conversation(self, messages: Sequence[Message], schema: dict[str, Any]) -> Any:
        """The messages as this dialect writes them."""

    @abstractmethod
    def _repair(
        self, conversation: Any, reply: Reply, error: JudgeOutputError, schema: dict[str, Any]
    ) -> Any:
        """``conversation`` with the invalid ``reply`` and what was wrong with it."""

    @abstractmethod
    async def _exchange(
        self, conversation: Any, schema: dict[str, Any], max_tokens: int, usage: Usage
    ) -> Reply | None:
        """One request and its answer; ``None`` when the endpoint refused how it was asked
        and that was learnt (then it is asked again at once)."""

    # -- the template ---------------------------------------------------------------------
    async def _call(self, messages: Sequence[Message], schema: type[OutputT]) -> Judgment[OutputT]:
        usage = self._call_usage()
        try:
            return await self._answer(messages, schema, usage)
        except JudgeError as error:
            error.usage = usage  # what was sent before it failed is billed all the same
            raise

    async def _answer(
        self, messages: Sequence[Message], schema: type[OutputT], usage: Usage
    ) -> Judgment[OutputT]:
        schema_json = self._schema_json(schema)
        conversation = self._conversation(messages, schema_json)
        reply = await self._complete(conversation, schema_json, usage)
        try:
            output = parse_output(reply.text, schema)
        except JudgeOutputError as first_error:
            repair = self._repair(conversation, reply, first_error, schema_json)
            reply = await self._complete(repair, schema_json, usage)
            try:
                output = parse_output(reply.text, schema)
            except JudgeOutputError as error:
                raise after_repair_error(error, reply.text, self.redact) from None
        if not self._wants_logprobs():
            return Judgment(output, usage, False)
        probabilities = verdict_probabilities(reply.logprobs)
        distribution = enum_distribution(reply.logprobs, schema_json)
        return Judgment(output, usage, False, probabilities, distribution)

    async def _complete(self, conversation: Any, schema: dict[str, Any], usage: Usage) -> Reply:
        """The answer, retried with a larger budget while it is cut off by the limit, and
        asked again when the endpoint refused how it was asked."""
        max_tokens = self._first_budget()
        while True:
            reply = await self._exchange(conversation, schema, max_tokens, usage)
            if reply is None:
                max_tokens = self._budget_after_refusal(max_tokens)
                continue
            if reply.cut_off is not None:
                if max_tokens >= MAX_TOKEN_BUDGET:
                    raise truncated_error(max_tokens, reply.cut_off, reply.text, self.redact)
                max_tokens = min(MAX_TOKEN_BUDGET, max_tokens * 2)
                continue
            return reply


class SchemaRejected(JudgeError):
    """The endpoint does not take ``response_format: json_schema``."""


def with_instruction(messages: list[dict[str, str]], instruction: str) -> list[dict[str, str]]:
    """``messages`` with ``instruction`` appended to the system message (or as one)."""
    rendered = list(messages)
    if rendered and rendered[0]["role"] == "system":
        rendered[0] = {"role": "system", "content": f"{rendered[0]['content']}\n\n{instruction}"}
    else:
        rendered.insert(0, {"role": "system", "content": instruction})
    return rendered


#: What an endpoint says when it does not take ``response_format: json_schema``: llama.cpp's
#: server ('response_format type must be one of "text" or "json_object"'), vLLM, Ollama and
#: OpenAI-compatible gateways all name the parameter or the schema.
_SCHEMA_REJECTION_WORDS = ("response_format", "json_schema", "schema", "structured output")


def rejects_response_format(status: int, detail: str) -> bool:
    """Whether an error answer says the endpoint does not support json_schema output (then
    the endpoint gets json_object from now on). A 500 or a 400 saying anything else is not
    taken for that: one transient failure must not change how every later call is asked."""
    text = detail.lower()
    return status in (400, 422, 500, 501) and any(w in text for w in _SCHEMA_REJECTION_WORDS)


def response_format(mode: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` a chat request carries in structured-output ``mode``."""
    if mode == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": schema.get("title", "answer"), "schema": schema},
        }
    if mode == "json_object":
        return {"type": "json_object"}
    return None


#: The sampling parameters a chat judge sets on its requests itself (as the endpoint takes
#: them: OpenAI's reasoning models want ``max_completion_tokens``, some none of them).
SAMPLING_PARAMS = frozenset(
    {"max_tokens", "max_completion_tokens", "temperature", "seed", "logprobs", "top_logprobs"}
)


class ChatJudge(EndpointJudge[ChatConfigT]):
    """The chat-completions shape (OpenAI-compatible endpoints, LiteLLM): messages as
    dicts, the structured-output mode by capability (``json_schema`` probed once per
    endpoint, else ``json_object`` or text with the schema in the prompt), the repair as
    one more user turn."""

    @abstractmethod
    def _mode(self) -> str:
        """The structured-output mode this endpoint gets now."""

    @property
    def structured_output_mode(self) -> str:
        """The structured-output mode this endpoint gets now (after any fallback)."""
        return self._mode()

    @staticmethod
    def _prompt_estimate(messages: list[dict[str, str]]) -> int:
        """The tokens of ``messages``, estimated."""
        return sum(estimate_tokens(m["content"]) for m in messages)

    @staticmethod
    def _reply(content: str, finish_reason: Any, logprobs: Any) -> Reply:
        """A chat answer as the loop reads it: cut off when ``finish_reason`` says so."""
        if finish_reason == "length":
            return Reply(content, cut_off="finish_reason=length")
        return Reply(content, logprobs=logprobs)

    @abstractmethod
    async def _send(self, ask: Ask, usage: Usage) -> Reply | None:
        """One request, as :meth:`EndpointJudge._exchange`; :class:`SchemaRejected` when,
        ``ask.probing_schema``, the endpoint refused ``json_schema``."""

    def _wants_logprobs(self) -> bool:
        return self.config.logprobs

    def _conversation(
        self, messages: Sequence[Message], schema: dict[str, Any]
    ) -> list[dict[str, str]]:
        return [m.to_dict() for m in messages]

    def _repair(
        self,
        conversation: list[dict[str, str]],
        reply: Reply,
        error: JudgeOutputError,
        schema: dict[str, Any],
    ) -> list[dict[str, str]]:
        return repair_request(conversation, reply.text, error, schema)

    async def _exchange(
        self,
        conversation: list[dict[str, str]],
        schema: dict[str, Any],
        max_tokens: int,
        usage: Usage,
    ) -> Reply | None:
        mode = self._mode()
        rendered = (
            conversation
            if mode == "json_schema"
            else with_instruction(conversation, schema_instruction(schema))
        )
        # In auto mode an answer refusing json_schema is told apart on every request, not
        # only until one was accepted: the server behind a URL may change (a local server
        # restarted on another backend), and what was accepted once is no promise.
        probing = mode == "json_schema" and self.config.structured_output == "auto"
        try:
            return await self._send(Ask(rendered, schema, mode, max_tokens, probing), usage)
        except SchemaRejected:
            self.capabilities.no_json_schema = True
            return None
