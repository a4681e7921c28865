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
    redact_secrets,
    redact_url,
    retry_after_seconds,
    send_once,
    status_error,
)
from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
from ragmeter.judge import (
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
        embeddings = OpenAIEmbeddings(config)

        async def embed() -> object:
            try:
                return await embeddings.embed(["a text"], kind="passage")
            finally:
                await embeddings.aclose()

        started = time.monotonic()
        with pytest.raises(JudgeTransientError, match="no complete answer"):
            asyncio.run(embed())
        assert time.monotonic() - started < 2.0


# -- Retry-After is obeyed up to a cap ---------------------------------------------------------
@pytest.mark.parametrize("header", ["1e9", "inf", "86400"])
def test_a_huge_or_unbounded_retry_after_waits_only_the_cap(header: str) -> None:
    with FakeOpenAIServer(responder=responder) as server:
        server.inject(Fault.rate_limit(retry_after_header=header))
        judge = judge_for(server, max_retry_wait_s=0.2, structured_output="json_object")
        started = time.monotonic()
        judgment = asyncio.run(ask(judge))
        assert time.monotonic() - started < 3.0  # backoff is at most 0.5 s, the cap 0.2 s
        assert judgment.usage.retries == 1
        assert judgment.output.claims == ["the sky is blue"]


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

    async def main() -> None:
        try:
            await client.post("chat/completions", {"model": "m"}, Usage())
        finally:
            await client.aclose()

    asyncio.run(main())
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
