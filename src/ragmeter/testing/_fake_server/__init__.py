"""A fake OpenAI-compatible HTTP server: latency, scripted replies and fault injection.

Standard library only. The server listens on ``127.0.0.1`` on an ephemeral port and answers
in background threads (one per connection, so concurrent requests overlap), which makes it
usable from unit tests, benchmarks and by users checking their own setup. By concern:
``_server`` (lifecycle, what it observed), ``_handler`` (routing, authentication, transport
faults), ``_replies`` (scripted answers), ``_faults`` (fault injection) and ``_tokens``
(token counts and logprobs).

Endpoints (all under ``base_url`` = ``http://127.0.0.1:PORT/v1``):

``POST /v1/chat/completions``
    An OpenAI chat completion object. The content comes from the ``responder`` callable
    (see :class:`FakeOpenAIServer`); without one, the content is ``"{}"`` (valid JSON that
    says nothing). ``"logprobs": true`` adds ``choices[0].logprobs.content``; ``tools`` (with
    ``tool_choice`` other than ``"none"``) turns the content into the arguments of a single
    ``tool_calls`` entry; ``max_tokens``/``max_completion_tokens`` cut the reply (then
    ``finish_reason`` is ``"length"``); ``"stream": true`` is refused with 400.
``POST /v1/embeddings``
    Deterministic unit vectors (see :meth:`FakeOpenAIServer.embedding_for`), ``dimensions``
    from the request or the server's ``embedding_dimensions`` (default 8);
    ``encoding_format`` ``"float"`` or ``"base64"`` (little-endian float32, as OpenAI).
``GET /v1/models``
    A list holding the server's ``model``.

Dialects (``_dialects``, opt-in with ``dialect=`` / ``reasoning_models=``): ``"openai-reasoning"``
answers like OpenAI's reasoning models (``max_tokens`` and a temperature other than 1 refused
with OpenAI's 400 bodies, logprobs with a 403, hidden reasoning tokens in the usage);
``"azure"`` serves Azure OpenAI's paths under ``root_url``
(``/openai/deployments/{d}/chat/completions?api-version=...``, ``/openai/v1/...``) and wants
the key in an ``api-key`` header.

Tokens. One rule everywhere (usage counts and logprobs): a token is a run of word
characters or a single other non-space character, carrying the whitespace before it
(``"Is it yes?"`` -> ``["Is", " it", " yes", "?"]``); trailing whitespace is one more token.
``usage.prompt_tokens`` is the sum of the token counts of the messages' text contents,
``usage.completion_tokens`` the count of the reply (equal to ``len(logprobs.content)``).

Order of handling a request: it is recorded (``requests``, ``request_times``), then
authenticated (401), then, for the two POST endpoints only, the next queued fault is taken
(every authorized POST consumes one, whatever its body), ``latency_s`` is slept, the fault
is applied, and the body is validated and answered (the ``json_schema`` rejection happens
here, after the fault). ``GET /v1/models`` takes no fault and has no latency.
"""

from ragmeter.testing._fake_server._faults import DEFAULT_MALFORMED_CONTENT, Fault, FaultKind
from ragmeter.testing._fake_server._replies import Embedder, Responder, ScriptedReply
from ragmeter.testing._fake_server._server import FakeOpenAIServer, RecordedRequest
from ragmeter.testing._fake_server._tokens import DEFAULT_BINARY_CONFIDENCE, tokenize

__all__ = [
    "DEFAULT_BINARY_CONFIDENCE",
    "DEFAULT_MALFORMED_CONTENT",
    "Embedder",
    "FakeOpenAIServer",
    "Fault",
    "FaultKind",
    "RecordedRequest",
    "Responder",
    "ScriptedReply",
    "tokenize",
]
