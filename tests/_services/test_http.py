"""Time is bounded on every request to an endpoint (judge or embeddings), against the
project's fake server: a total deadline per attempt, a capped Retry-After, a base URL that
cannot work refused when the config is made, and one transient error that does not change
how later calls are asked."""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from typing import Any

import httpx
import pytest
from pydantic import BaseModel, ValidationError

from ragmeter._services import (  # private: the HTTP layer's own helpers
    Breaker,
    EndpointUnavailableError,
    redact_secrets,
    redact_url,
    retry_after_seconds,
    send_once,
    status_error,
    wait_asked,
    with_retries,
)
from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
from ragmeter.judge import (
    EndpointClient,
    JudgeConfig,
    JudgeConfigError,
    JudgeTransientError,
    Judgment,
    Message,
    OpenAIJudge,
    Usage,
    endpoint_client,
)
from ragmeter.testing import FakeOpenAIServer, Fault

QUESTION = [Message("user", "Is the sky blue?")]


class Claims(BaseModel):
    claims: list[str]


def responder(body: dict) -> dict:
    return {"claims": ["the sky is blue"]}


def judge_for(server: FakeOpenAIServer, **overrides: object) -> OpenAIJudge:
    settings: dict = {
        "model": "judge-model",
        "base_url": server.base_url,
        "timeout_s": 2.0,
        "max_retries": 3,
        **overrides,
    }
    return OpenAIJudge(JudgeConfig(**settings))


async def ask(judge: OpenAIJudge) -> Judgment[Claims]:
    try:
        return await judge.generate(QUESTION, Claims, prompt_version="t@1")
    finally:
        await judge.aclose()


async def embed_once(embeddings: OpenAIEmbeddings) -> object:
    try:
        return await embeddings.embed(["a text"], kind="passage")
    finally:
        await embeddings.aclose()


async def post_once(client: EndpointClient) -> None:
    try:
        await client.post("chat/completions", {"model": "m"}, Usage())
    finally:
        await client.aclose()


def chat_formats(server: FakeOpenAIServer) -> list[str]:
    return [
        r.body["response_format"]["type"]
        for r in server.requests
        if r.path.endswith("/chat/completions")
    ]


# -- a total deadline per attempt ------------------------------------------------------------
def test_an_answer_that_trickles_in_is_cut_at_the_total_deadline() -> None:
    # Each byte arrives quickly, so a per-read timeout never fires; the whole answer takes 6 s.
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(Fault.trickle(delay_s=6.0))
        judge = judge_for(server, timeout_s=0.5, max_retries=0, structured_output="json_object")
        started = time.monotonic()
        with pytest.raises(JudgeTransientError, match=r"no complete answer .* within 0\.5 s"):
            asyncio.run(ask(judge))
        assert time.monotonic() - started < 2.0


def test_a_trickling_answer_within_the_deadline_is_read_whole() -> None:
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(Fault.trickle(delay_s=0.3))
        judge = judge_for(server, timeout_s=5.0, structured_output="json_object")
        judgment = asyncio.run(ask(judge))
        assert judgment.output.claims == ["the sky is blue"]


def test_embeddings_requests_have_the_same_deadline() -> None:
    with FakeOpenAIServer() as server:
        server.inject(Fault.trickle(delay_s=6.0))
        config = EmbeddingsConfig(
            model="embedder", base_url=server.base_url, timeout_s=0.5, max_retries=0
        )
        started = time.monotonic()
        with pytest.raises(JudgeTransientError, match="no complete answer"):
            asyncio.run(embed_once(OpenAIEmbeddings(config)))
        assert time.monotonic() - started < 2.0


# -- Retry-After is obeyed up to a cap; past it, the endpoint's breaker opens ----------------
@pytest.mark.parametrize("header", ["1e9", "inf", "86400", "3600"])
def test_a_retry_after_past_the_cap_fails_at_once_and_stops_the_endpoint(header: str) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(Fault.rate_limit(retry_after_header=header))
        judge = judge_for(server, max_retry_wait_s=0.2, structured_output="json_object")
        started = time.monotonic()
        with pytest.raises(JudgeTransientError, match="not retried: asks to wait") as failed:
            asyncio.run(ask(judge))
        assert time.monotonic() - started < 1.0  # not the cap, not the wait: at once
        asked = "an unbounded time" if header == "inf" else f"{float(header):.0f} s"
        assert f"asks to wait {asked}" in str(failed.value)
        # The endpoint asked to wait: nothing more is sent to it (every client of it).
        with pytest.raises(EndpointUnavailableError, match=f"rate limited: .* wait {asked}"):
            asyncio.run(ask(judge_for(server, structured_output="json_object")))
        assert len(server.requests) == 1


def test_a_wait_past_the_cap_without_a_breaker_waits_the_cap_and_says_so_in_words(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[int] = []

    async def attempt() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise JudgeTransientError("HTTP 429", retry_after=math.inf)
        return "answer"

    started = time.monotonic()
    answer = asyncio.run(
        with_retries(attempt, Usage(), max_retries=2, max_retry_wait_s=0.2, where="gw")
    )
    assert answer == "answer" and time.monotonic() - started < 1.5
    said = [r.getMessage() for r in caplog.records if "asked to wait" in r.getMessage()]
    assert said == [
        "gw asked to wait an unbounded time before retrying; waiting 0 s (max_retry_wait_s)"
    ]


def test_a_429_without_retry_after_asks_to_wait_until_its_limit_resets() -> None:
    def asked(**headers: str) -> float | None:
        return wait_asked(httpx.Headers(headers))

    reset = {"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-reset-tokens": "1.5s"}
    assert asked(**reset) == 360.0
    assert asked(**reset, **{"x-ratelimit-remaining-tokens": "0"}) == 1.5
    assert asked(**reset, **{"retry-after": "2"}) == 2.0
    assert asked(**{"x-ratelimit-reset-tokens": "20ms"}) == pytest.approx(0.02)
    assert asked(**{"x-ratelimit-reset-tokens": "1h2m3s"}) == 3723.0
    assert asked(**{"x-ratelimit-reset-requests": "12"}) == 12.0
    for garbage in ("soon", "6x", "nan", "m", ""):
        assert asked(**{"x-ratelimit-reset-requests": garbage}) is None
    assert asked() is None


def test_a_429_whose_limit_resets_in_an_hour_stops_the_endpoint() -> None:
    seen: list[httpx.URL] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1h0m0s"}
        return httpx.Response(429, headers=headers, json={"error": {"message": "quota"}})

    config = JudgeConfig(model="m", base_url="http://quota.example/v1", max_retries=5)
    client = endpoint_client(config, transport=httpx.MockTransport(handler))
    with pytest.raises(JudgeTransientError, match="asks to wait 3600 s"):
        asyncio.run(post_once(client))
    assert len(seen) == 1


# -- a streak of calls without an answer opens the breaker; a blip does not -------------------
FAULTS = {
    "server_error": lambda: Fault.server_error(),
    "connection_drop": lambda: Fault.connection_drop(),
    "timeout": lambda: Fault.timeout(delay_s=2.0),
}


@pytest.mark.parametrize(
    ("fault", "settings", "said", "sent"),
    [
        # breaker_failures in a row (not 11 attempts: the breaker stopped the retries)
        *(
            (fault, {"breaker_failures": 3}, r"no answer from .* across 3 calls", 3)
            for fault in FAULTS
        ),
        # or at least two across breaker_silence_s, before the count
        ("timeout", {"breaker_silence_s": 0.5}, r"for \d+ s across 2 calls", 2),
    ],
)
def test_calls_that_keep_failing_stop_the_endpoint(
    fault: str, settings: dict[str, float], said: str, sent: int
) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(*[FAULTS[fault]() for _ in range(20)])
        judge = judge_for(
            server, timeout_s=0.4, max_retries=10, structured_output="json_object", **settings
        )
        with pytest.raises(EndpointUnavailableError, match=said):
            asyncio.run(ask(judge))
        assert len(server.requests) == sent


def test_the_calls_in_flight_are_cut_when_the_breaker_opens() -> None:
    # Three calls hang (their timeout is 20 s); the fourth is told to wait an hour: the
    # three are not waited for.
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(*[Fault.timeout(delay_s=30) for _ in range(3)])
        server.inject(Fault.rate_limit(retry_after_header="3600"))
        judge = judge_for(server, timeout_s=20.0, structured_output="json_object")

        async def four() -> list[object]:
            try:
                asked = [
                    judge.generate(QUESTION, Claims, prompt_version=f"t@{i}") for i in range(4)
                ]
                return await asyncio.gather(*asked, return_exceptions=True)
            finally:
                await judge.aclose()

        started = time.monotonic()
        failures = asyncio.run(four())
        assert time.monotonic() - started < 3.0
        said = sorted(str(f).split(":")[0] for f in failures)
        assert said == ["HTTP 429 from http", "cut in flight", "cut in flight", "cut in flight"]
        assert all(isinstance(f, JudgeTransientError) for f in failures)
        assert len(server.requests) == 4


def test_one_failure_among_successes_never_opens_the_breaker() -> None:
    # Hostile but healthy: every other call fails (500, a dropped connection, a timeout),
    # each retried once with success: 12 calls, 12 answers, the breaker never opens.
    with FakeOpenAIServer(responder=responder) as server:
        judge = judge_for(
            server, timeout_s=0.3, breaker_failures=2, structured_output="json_object"
        )
        faults = [Fault.server_error(), Fault.connection_drop(), Fault.timeout(delay_s=1.0)]

        async def many() -> list[Judgment[Claims]]:
            answers = []
            try:
                for i in range(12):
                    server.inject(faults[i % 3])
                    answers.append(await judge.generate(QUESTION, Claims, prompt_version=f"t@{i}"))
            finally:
                await judge.aclose()
            return answers

        answers = asyncio.run(many())
        assert [a.output.claims for a in answers] == [["the sky is blue"]] * 12
        assert judge.limiter.breaker.reason is None


def test_the_breaker_counts_a_streak_reset_by_any_success() -> None:
    breaker = Breaker(failures=3, silence_s=1000)
    now = time.monotonic()
    for _ in range(5):
        breaker.failed("gw", now)
        breaker.failed("gw", now)
        breaker.succeeded()
    assert breaker.reason is None
    breaker.failed("gw", now)
    breaker.failed("gw", now)
    breaker.failed("gw", now)
    assert breaker.reason is not None and "across 3 calls" in breaker.reason
    with pytest.raises(EndpointUnavailableError, match="not sent: no answer from gw"):
        breaker.check()
    breaker.reset()
    assert breaker.reason is None
    breaker.trip("rate limited", 0.0)  # an asked wait that is over closes it again
    assert breaker.reason is None


def test_embeddings_endpoints_stop_the_same_way() -> None:
    with FakeOpenAIServer() as server:
        server.inject(Fault.rate_limit(retry_after_header="3600"))
        config = EmbeddingsConfig(model="embedder", base_url=server.base_url, max_retries=5)

        started = time.monotonic()
        with pytest.raises(JudgeTransientError, match="asks to wait 3600 s"):
            asyncio.run(embed_once(OpenAIEmbeddings(config)))
        with pytest.raises(EndpointUnavailableError, match="rate limited"):
            asyncio.run(embed_once(OpenAIEmbeddings(config)))
        assert time.monotonic() - started < 2.0
        assert len(server.requests) == 1


def test_a_retry_after_below_the_cap_is_obeyed() -> None:
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(Fault.rate_limit(retry_after_header="1.2"))
        judge = judge_for(server, max_retry_wait_s=60, structured_output="json_object")
        started = time.monotonic()
        asyncio.run(ask(judge))
        assert time.monotonic() - started >= 1.15


def test_retry_after_is_read_in_every_form_it_comes_in() -> None:
    def read(**headers: str) -> float | None:
        return retry_after_seconds(httpx.Headers(headers), now=1_000_000.0)

    assert read(**{"retry-after": "2"}) == 2.0
    assert read(**{"retry-after": "0.5"}) == 0.5
    assert read(**{"retry-after": "-3"}) == 0.0
    assert read(**{"retry-after": "1e9"}) == 1e9
    assert read(**{"retry-after": "inf"}) == math.inf
    assert read(**{"retry-after": "nan"}) is None
    assert read(**{"retry-after": "soon"}) is None
    assert read() is None
    assert read(**{"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    in_ten = email.utils.formatdate(1_000_010.0, usegmt=True)
    assert read(**{"retry-after": in_ten}) == pytest.approx(10.0)
    past = email.utils.formatdate(999_000.0, usegmt=True)
    assert read(**{"retry-after": past}) == 0.0


# -- a base URL that cannot work is a configuration error at once ------------------------------
@pytest.mark.parametrize(
    "url", ["not a url", "api.openai.com/v1", "ftp://example.com/v1", "http://", "localhost:8000"]
)
@pytest.mark.parametrize("config", [JudgeConfig, EmbeddingsConfig])
def test_a_base_url_that_cannot_work_is_refused_when_the_config_is_made(
    url: str, config: type
) -> None:
    with pytest.raises(ValidationError, match=r"must be the endpoint's http\(s\) API root"):
        config(model="m", base_url=url)


def test_the_refusal_does_not_show_credentials_in_the_url() -> None:
    with pytest.raises(ValidationError) as raised:
        JudgeConfig(model="m", base_url="user:hunter2@api.example.com/v1?key=sk-123")
    assert "hunter2" not in str(raised.value) and "sk-123" not in str(raised.value)


def test_urls_are_redacted_of_credentials() -> None:
    assert redact_url("https://user:pw@host.example/v1?api-key=abc&x=1") == (
        "https://host.example/v1?api-key=***&x=1"
    )
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


# -- json_schema is given up only when the endpoint rejects it ---------------------------------
def test_one_transient_500_does_not_switch_an_endpoint_to_json_object() -> None:
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(Fault.server_error("upstream overloaded"))
        judge = judge_for(server)  # structured_output "auto"
        asyncio.run(ask(judge))
        asyncio.run(ask(judge_for(server)))
        assert chat_formats(server) == ["json_schema", "json_schema", "json_schema"]


def test_a_400_about_something_else_is_reported_not_taken_for_no_json_schema() -> None:
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(Fault.bad_request("model 'judge-model' is not enabled for this key"))
        with pytest.raises(JudgeConfigError, match="not enabled"):
            asyncio.run(ask(judge_for(server)))
        assert chat_formats(server) == ["json_schema"]


def test_an_answer_rejecting_response_format_switches_to_json_object() -> None:
    with FakeOpenAIServer(responder=responder, supports_json_schema=False) as server:
        judge = judge_for(server)
        asyncio.run(ask(judge))
        assert chat_formats(server) == ["json_schema", "json_object"]


def test_an_endpoint_that_accepted_json_schema_and_then_refuses_it_switches_too() -> None:
    # The server behind one URL changed (a local server restarted on another backend): the
    # endpoint's memory that json_schema was accepted does not make the refusal a failure.
    with FakeOpenAIServer(responder=responder) as server:
        asyncio.run(ask(judge_for(server)))
        server.supports_json_schema = False
        asyncio.run(ask(judge_for(server)))  # a new judge of the same endpoint
        assert chat_formats(server) == ["json_schema", "json_schema", "json_object"]


#: URLs and how they may be shown.
REDACTED = [
    # the user info goes, also with an "@", a "/" or a "?" in the password
    ("https://u:p@ss@host/v1", "https://host/v1"),
    ("postgresql://u:pa/ss@h/db", "postgresql://h/db"),
    ("postgresql://u:p?w@h/db?a=b@c", "postgresql://h/db?a=b@c"),
    ("https://u:p%40ss@host/v1", "https://host/v1"),
    ("https://TOKEN1234@github.com/x", "https://github.com/x"),
    ("http://u:pw@[::1]:8000/v1", "http://[::1]:8000/v1"),
    ("postgres//u:pw@h/db", "h/db"),  # malformed: everything up to the "@" goes
    # secret parameters are masked, the others kept as written
    (
        "https://gw/v1?api-key=abc&api-version=2024-06-01",
        "https://gw/v1?api-key=***&api-version=2024-06-01",
    ),
    (
        "postgresql+psycopg://u:p@h:5432/db?sslmode=require&password=x",
        "postgresql+psycopg://h:5432/db?sslmode=require&password=***",
    ),
    (
        "https://h/v1?api%2Dkey=k&X-Amz-Signature=s",
        "https://h/v1?api%2Dkey=***&X-Amz-Signature=***",
    ),
    # the fragment is never sent: all of it goes, whatever a key in it looks like
    (
        "https://h/v1?token=t#access_token=a&state=1",
        "https://h/v1?token=***#***",
    ),
    ("https://h/v1#sk-s3cretfrag", "https://h/v1#***"),
    ("https://h/v1?api-version=1#key:s3cret", "https://h/v1?api-version=1#***"),
    ("https://h/v1#x=1&sk-s3cret", "https://h/v1#***"),
    ("https://h/v1#a?key=s3cret", "https://h/v1#***"),
    ("https://h/v1#", "https://h/v1#"),
    # nothing to hide: the URL as it was
    ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
    ("https://h/v1?email=a@b&&x=", "https://h/v1?email=a@b&&x="),
    ("http://127.0.0.1:8000/v1/@scope", "http://127.0.0.1:8000/v1/@scope"),
    ("sqlite:///.ragmeter/runs.db", "sqlite:///.ragmeter/runs.db"),
]


def test_every_kind_of_credential_is_redacted_from_a_url() -> None:
    assert [redact_url(url) for url, _ in REDACTED] == [shown for _, shown in REDACTED]


def test_credentials_are_redacted_from_messages_wherever_they_appear() -> None:
    url = "http://judge:s3cretpw@h/v1?key=s3cretkey"
    said = "GET http://judge:s3cretpw@h/v1/chat?key=s3cretkey failed; the server said s3cretpw"
    cleaned = redact_secrets(said, url)
    assert "s3cret" not in cleaned
    assert cleaned == "GET http://h/v1/chat?key=*** failed; the server said ***"
    assert redact_secrets("see https://u:pw@h/x?token=tok") == "see https://h/x?token=***"


@pytest.mark.parametrize("fragment", ["sk-s3cretfrag", "key=sk-s3cretfrag", "x=1&sk-s3cretfrag"])
def test_a_key_in_a_url_fragment_is_redacted_from_messages(fragment: str) -> None:
    url = f"https://h/v1?api-version=1#{fragment}"
    cleaned = redact_secrets(f"{url} refused the key sk-s3cretfrag", url)
    assert cleaned == "https://h/v1?api-version=1#*** refused the key ***"


def test_a_query_in_the_base_url_goes_with_every_request_after_the_path() -> None:
    seen: list[httpx.URL] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url)
        return httpx.Response(200, json={"ok": True})

    config = JudgeConfig(model="m", base_url="http://gw.example/v1/?api-version=2024-06-01")
    client = endpoint_client(config, transport=httpx.MockTransport(handler))
    asyncio.run(post_once(client))
    assert [str(url) for url in seen] == [
        "http://gw.example/v1/chat/completions?api-version=2024-06-01"
    ]


def test_a_401_without_a_key_says_that_none_was_sent() -> None:
    with (
        FakeOpenAIServer(responder=responder, api_key="the-right-key") as server,
        pytest.raises(JudgeConfigError, match="no API key was sent") as raised,
    ):
        asyncio.run(ask(judge_for(server, max_retries=0)))
    assert "OPENAI_API_KEY is sent only to the endpoint OPENAI_BASE_URL names" in str(raised.value)


# -- the one error mapping and the one counted send (HTTP clients and LiteLLM) -------------


def test_a_status_with_a_fix_fails_at_once_and_the_others_by_class() -> None:
    fixes = {401: "check the key", 429: "the spend limit is reached"}

    def error(status: int | None, **kwargs: Any) -> Exception:
        return status_error(status, "gw", "said", fixes=fixes, retry_after=2.0, **kwargs)

    spent = error(429)  # a 429 the provider knows retrying cannot help
    assert isinstance(spent, JudgeConfigError) and "spend limit" in str(spent)
    busy = error(503)
    assert isinstance(busy, JudgeTransientError) and busy.retry_after == 2.0
    assert str(busy) == "HTTP 503 from gw: said"
    rejected = error(400)
    assert isinstance(rejected, JudgeConfigError)
    assert (
        str(rejected) == "HTTP 400 from gw: the endpoint rejected the request. Endpoint said: said"
    )
    unanswered = error(None, transient=True, shown="no answer")
    assert (
        isinstance(unanswered, JudgeTransientError) and str(unanswered) == "no answer from gw: said"
    )


def test_a_failed_send_is_counted_timed_and_redacted() -> None:
    key = "sk-0123456789abcdef-secret"

    async def broken() -> None:
        raise httpx.ConnectError(f"refused with key {key}")

    async def slow() -> None:
        await asyncio.sleep(5)

    usage = Usage()

    async def send(work: object) -> None:
        await send_once(
            work,  # type: ignore[arg-type]
            usage,
            where="gw",
            timeout_s=0.05,
            failures=((asyncio.TimeoutError,), (httpx.TransportError,)),
            redact=lambda text: text.replace(key, "***"),
        )

    with pytest.raises(JudgeTransientError) as failed:
        asyncio.run(send(broken))
    assert key not in str(failed.value) and "connection to gw failed: ConnectError" in str(
        failed.value
    )
    with pytest.raises(JudgeTransientError, match=r"no complete answer from gw within 0\.05 s"):
        asyncio.run(send(slow))
    assert usage.calls == 2 and usage.latency_s >= 0.05
