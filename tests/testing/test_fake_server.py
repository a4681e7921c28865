"""The fake OpenAI-compatible server: response shapes, faults, latency and observability.

The client is the standard library's ``http.client`` (no dependency); one test also runs
with ``httpx`` when it is installed.
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ragmeter.testing import (
    DEFAULT_MALFORMED_CONTENT,
    FakeOpenAIServer,
    Fault,
    ScriptedReply,
    tokenize,
)

MESSAGES = [
    {"role": "system", "content": "You are a judge."},
    {"role": "user", "content": "Is Paris in France?"},
]


def call(
    server: FakeOpenAIServer,
    path: str,
    body: Any = None,
    *,
    method: str = "POST",
    headers: dict[str, str] | None = None,
    timeout: float = 5.0,
) -> tuple[int, dict[str, str], Any]:
    """One request on a fresh connection: (status, lower-cased headers, parsed JSON or bytes)."""
    host, port = server.address
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        data = None if body is None else json.dumps(body).encode()
        all_headers = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, "/v1" + path, body=data, headers=all_headers)
        resp = conn.getresponse()
        raw = resp.read()
        resp_headers = {k.lower(): v for k, v in resp.getheaders()}
        try:
            payload: Any = json.loads(raw)
        except ValueError:
            payload = raw
        return resp.status, resp_headers, payload
    finally:
        conn.close()


def chat(server: FakeOpenAIServer, **extra: Any) -> tuple[int, dict[str, str], Any]:
    timeout = extra.pop("timeout", 5.0)
    headers = extra.pop("headers", None)
    body = {"model": "judge-1", "messages": MESSAGES, **extra}
    return call(server, "/chat/completions", body, headers=headers, timeout=timeout)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=lambda body: ScriptedReply("The answer is yes")) as srv:
        yield srv


def test_chat_completion_shape_and_usage(server: FakeOpenAIServer) -> None:
    before = int(time.time())
    status, headers, reply = chat(server)
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert reply["id"].startswith("chatcmpl-")
    assert reply["object"] == "chat.completion"
    assert before - 1 <= reply["created"] <= time.time() + 1
    assert reply["model"] == "judge-1"
    [choice] = reply["choices"]
    assert choice["index"] == 0
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["content"] == "The answer is yes"
    assert choice["finish_reason"] == "stop"
    assert choice["logprobs"] is None
    assert "tool_calls" not in choice["message"]
    # "You are a judge." -> 5 tokens, "Is Paris in France?" -> 5; reply -> 4 words.
    assert reply["usage"] == {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}

    [recorded] = server.requests
    assert recorded.method == "POST"
    assert recorded.path == "/v1/chat/completions"
    assert recorded.body["messages"] == MESSAGES
    assert recorded.authorized is True
    assert recorded.headers["content-type"] == "application/json"
    assert server.request_times == [recorded.received_at]


def test_tokenize_round_trips_and_counts() -> None:
    text = 'Verdict: {"ok": 1}  '
    tokens = tokenize(text)
    assert "".join(tokens) == text
    assert tokens == ["Verdict", ":", " {", '"', "ok", '"', ":", " 1", "}", "  "]


def test_responder_forms_default_reply_and_usage_flag() -> None:
    with FakeOpenAIServer() as srv:
        _, _, reply = chat(srv)
        assert json.loads(reply["choices"][0]["message"]["content"]) == {}
        assert reply["model"] == "judge-1"

        srv.responder = lambda body: {"verdict": 1, "echo": body["messages"][-1]["content"]}
        _, _, reply = chat(srv)
        content = json.loads(reply["choices"][0]["message"]["content"])
        assert content == {"verdict": 1, "echo": "Is Paris in France?"}

        srv.responder = lambda body: "plain text"
        srv.report_usage = False
        _, _, reply = chat(srv)
        assert reply["choices"][0]["message"]["content"] == "plain text"
        assert "usage" not in reply

        srv.responder = lambda body: ScriptedReply("partial", finish_reason="length")
        _, _, reply = chat(srv)
        assert reply["choices"][0]["finish_reason"] == "length"

        def broken(body: dict[str, Any]) -> str:
            raise RuntimeError("script bug")

        srv.responder = broken
        status, _, reply = chat(srv)
        assert status == 500
        assert "script bug" in reply["error"]["message"]


def test_json_schema_rejected_when_unsupported_and_accepted_otherwise() -> None:
    schema_format = {
        "type": "json_schema",
        "json_schema": {"name": "v", "schema": {"type": "object"}, "strict": True},
    }
    with FakeOpenAIServer(supports_json_schema=False) as srv:
        status, _, body = chat(srv, response_format=schema_format)
        assert status == 500
        assert body["error"]["code"] == 500
        assert body["error"]["type"] == "server_error"
        assert "json_schema" in body["error"]["message"]

        status, _, body = chat(srv, response_format={"type": "json_object"})
        assert status == 200
        assert body["choices"][0]["message"]["content"] == "{}"

    with FakeOpenAIServer(supports_json_schema=True) as srv:
        status, _, body = chat(srv, response_format=schema_format)
        assert status == 200
        status, _, body = chat(srv, response_format={"type": "nonsense"})
        assert status == 400


def test_logprobs_report_configured_p_yes() -> None:
    content = '{"verdict": "yes"}'
    with FakeOpenAIServer(responder=lambda body: ScriptedReply(content, p_yes=0.8)) as srv:
        _, _, reply = chat(srv, logprobs=True, top_logprobs=3)
        entries = reply["choices"][0]["logprobs"]["content"]
        assert "".join(e["token"] for e in entries) == content
        assert len(entries) == reply["usage"]["completion_tokens"]
        [yes] = [e for e in entries if e["token"] == "yes"]
        assert yes["logprob"] == pytest.approx(math.log(0.8))
        assert yes["bytes"] == list(b"yes")
        top = yes["top_logprobs"]
        assert len(top) == 3
        assert [t["token"] for t in top[:2]] == ["yes", "no"]
        assert top[1]["logprob"] == pytest.approx(math.log(0.2))
        assert top[2]["logprob"] < -20
        # Non-binary tokens: certain, with top_logprobs padded to the requested size.
        assert entries[0]["token"] == "{"
        assert entries[0]["logprob"] == 0.0
        assert len(entries[0]["top_logprobs"]) == 3

        # A "1" emitted although P(1) = 0.3: both alternatives, most likely first.
        srv.responder = lambda body: ScriptedReply("1", p_yes=0.3)
        _, _, reply = chat(srv, logprobs=True)
        [entry] = reply["choices"][0]["logprobs"]["content"]
        assert entry["token"] == "1"
        assert entry["logprob"] == pytest.approx(math.log(0.3))
        alternatives = {t["token"]: math.exp(t["logprob"]) for t in entry["top_logprobs"]}
        assert alternatives == pytest.approx({"0": 0.7, "1": 0.3})
        assert entry["top_logprobs"][0]["token"] == "0"

        # No p_yes: the emitted token gets the default confidence (0.99); case is kept.
        srv.responder = lambda body: ScriptedReply("No")
        _, _, reply = chat(srv, logprobs=True, top_logprobs=0)
        [entry] = reply["choices"][0]["logprobs"]["content"]
        probs = {t["token"]: math.exp(t["logprob"]) for t in entry["top_logprobs"]}
        assert probs == pytest.approx({"No": 0.99, "Yes": 0.01})


def test_tool_calls_carry_content_as_arguments(server: FakeOpenAIServer) -> None:
    server.responder = lambda body: {"verdict": 0}
    tools = [{"type": "function", "function": {"name": "record_verdict", "parameters": {}}}]
    _, _, reply = chat(server, tools=tools, tool_choice="auto")
    choice = reply["choices"][0]
    assert choice["message"]["content"] is None
    [tool_call] = choice["message"]["tool_calls"]
    assert tool_call["type"] == "function"
    assert tool_call["function"]["name"] == "record_verdict"
    assert json.loads(tool_call["function"]["arguments"]) == {"verdict": 0}
    assert choice["finish_reason"] == "tool_calls"

    _, _, reply = chat(server, tools=tools, tool_choice="none")
    assert reply["choices"][0]["message"]["content"] == '{"verdict": 0}'


def test_max_tokens_cuts_the_reply(server: FakeOpenAIServer) -> None:
    _, _, reply = chat(server, max_tokens=2)
    assert reply["choices"][0]["message"]["content"] == "The answer"
    assert reply["choices"][0]["finish_reason"] == "length"
    assert reply["usage"]["completion_tokens"] == 2


def test_faults_are_consumed_in_order_then_normal_replies_resume(
    server: FakeOpenAIServer,
) -> None:
    server.inject(
        Fault.rate_limit(retry_after_s=2),
        Fault.server_error(),
        Fault.bad_request("bad prompt"),
        Fault.not_found(),
        Fault.malformed_json(),
        Fault.truncated(),
        Fault.connection_drop(),
        Fault.rate_limit(retry_after_s=0.5),
        Fault.http_error(503),
    )
    assert server.pending_faults == 9

    status, headers, body = chat(server)
    assert status == 429
    assert headers["retry-after"] == "2"
    assert headers["retry-after-ms"] == "2000"
    assert body["error"]["code"] == "rate_limit_exceeded"

    status, _, body = chat(server)
    assert (status, body["error"]["type"]) == (500, "server_error")

    status, _, body = chat(server)
    assert (status, body["error"]["message"]) == (400, "bad prompt")
    assert body["error"]["type"] == "invalid_request_error"

    status, _, body = chat(server)
    assert (status, body["error"]["code"]) == (404, "model_not_found")

    status, _, body = chat(server)
    assert status == 200
    malformed = body["choices"][0]["message"]["content"]
    assert malformed == DEFAULT_MALFORMED_CONTENT
    with pytest.raises(ValueError):
        json.loads(malformed)

    status, _, body = chat(server)
    assert status == 200
    truncated = body["choices"][0]["message"]["content"]
    assert body["choices"][0]["finish_reason"] == "length"
    assert "The answer is yes".startswith(truncated)
    assert 0 < len(truncated) < len("The answer is yes")
    assert body["usage"]["completion_tokens"] == len(tokenize(truncated))

    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        chat(server)

    status, headers, _ = chat(server)
    assert (status, headers["retry-after"], headers["retry-after-ms"]) == (429, "0.5", "500")

    status, _, _ = chat(server)
    assert status == 503

    assert server.pending_faults == 0
    for _ in range(2):
        status, _, body = chat(server)
        assert status == 200
        assert body["choices"][0]["message"]["content"] == "The answer is yes"
    assert len(server.requests) == 11


def test_rate_limit_without_retry_after_header(server: FakeOpenAIServer) -> None:
    server.inject(Fault.rate_limit(retry_after_s=None))
    status, headers, _ = chat(server)
    assert status == 429
    assert "retry-after" not in headers


def test_timeout_fault_is_observed_by_a_client_timeout(server: FakeOpenAIServer) -> None:
    server.inject(Fault.timeout(delay_s=2.0))
    start = time.monotonic()
    with pytest.raises(TimeoutError):
        chat(server, timeout=0.2)
    assert time.monotonic() - start < 1.5
    # The held request does not block others; a patient client gets the late normal reply.
    server.inject(Fault.timeout(delay_s=0.2))
    status, _, body = chat(server, timeout=5.0)
    assert status == 200
    assert body["choices"][0]["message"]["content"] == "The answer is yes"


def test_faults_apply_to_embeddings(server: FakeOpenAIServer) -> None:
    server.inject(Fault.rate_limit(), Fault.malformed_json(), Fault.truncated())
    body = {"model": "emb", "input": "hello"}
    assert call(server, "/embeddings", body)[0] == 429
    status, _, raw = call(server, "/embeddings", body)
    assert status == 200 and isinstance(raw, bytes)  # not JSON
    status, _, raw = call(server, "/embeddings", body)
    assert status == 200 and isinstance(raw, bytes)
    status, _, payload = call(server, "/embeddings", body)
    assert status == 200 and payload["object"] == "list"


def test_fault_rate_random_faults() -> None:
    with FakeOpenAIServer() as srv:
        srv.fault_rate(Fault.server_error(), probability=1.0, seed=1)
        assert [chat(srv)[0] for _ in range(3)] == [500, 500, 500]
        srv.fault_rate("connection_drop", probability=0.0)
        assert chat(srv)[0] == 200
        srv.fault_rate(Fault.server_error(), probability=0.5, seed=7)
        first = [chat(srv)[0] for _ in range(12)]
        srv.fault_rate(Fault.server_error(), probability=0.5, seed=7)
        second = [chat(srv)[0] for _ in range(12)]
        assert first == second
        assert set(first) == {200, 500}


def test_max_in_flight_with_concurrent_requests() -> None:
    with FakeOpenAIServer(latency_s=0.2) as srv:
        statuses: list[int] = []
        lock = threading.Lock()

        def one() -> None:
            status, _, _ = chat(srv)
            with lock:
                statuses.append(status)

        threads = [threading.Thread(target=one) for _ in range(8)]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        elapsed = time.monotonic() - start
        assert statuses == [200] * 8
        assert srv.max_in_flight == 8
        assert elapsed < 8 * 0.2 * 0.75  # the sleeps overlapped
        times = srv.request_times
        assert len(times) == 8 and times == sorted(times)

        srv.reset_stats()
        assert srv.requests == [] and srv.max_in_flight == 0
        srv.latency_s = 0.05
        start = time.monotonic()
        for _ in range(3):
            assert chat(srv)[0] == 200
        assert time.monotonic() - start >= 3 * 0.05
        assert srv.max_in_flight == 1
        assert srv.in_flight == 0


def test_api_key_required_and_never_recorded() -> None:
    key = "sk-secret-123"
    with FakeOpenAIServer(api_key=key) as srv:
        status, _, body = chat(srv)
        assert status == 401
        assert body["error"]["code"] == "invalid_api_key"
        assert body["error"]["type"] == "invalid_request_error"
        assert chat(srv, headers={"Authorization": "Bearer wrong"})[0] == 401
        assert call(srv, "/models", method="GET")[0] == 401
        status, _, body = chat(srv, headers={"Authorization": f"Bearer {key}"})
        assert status == 200
        assert body["choices"][0]["message"]["content"] == "{}"

        recorded = srv.requests
        assert [r.authorized for r in recorded] == [False, False, False, True]
        assert all("authorization" not in r.headers for r in recorded)
        assert key not in repr(recorded)
        assert key not in json.dumps([r.headers for r in recorded])


def test_unauthorized_requests_do_not_consume_faults() -> None:
    with FakeOpenAIServer(api_key="k") as srv:
        srv.inject(Fault.server_error())
        assert chat(srv)[0] == 401
        assert srv.pending_faults == 1
        assert chat(srv, headers={"Authorization": "Bearer k"})[0] == 500


def test_embeddings_are_deterministic_unit_vectors(server: FakeOpenAIServer) -> None:
    body = {"model": "emb-1", "input": ["alpha beta", "gamma"]}
    status, _, first = call(server, "/embeddings", body)
    assert status == 200
    _, _, second = call(server, "/embeddings", body)
    assert first["data"] == second["data"]
    assert first["object"] == "list"
    assert first["model"] == "emb-1"
    assert first["usage"] == {"prompt_tokens": 3, "total_tokens": 3}
    vectors = [d["embedding"] for d in first["data"]]
    assert [d["index"] for d in first["data"]] == [0, 1]
    assert all(d["object"] == "embedding" for d in first["data"])
    assert all(len(v) == 8 for v in vectors)
    assert all(sum(x * x for x in v) == pytest.approx(1.0) for v in vectors)
    assert vectors[0] != vectors[1]
    assert vectors[0] == FakeOpenAIServer.embedding_for("alpha beta", 8)

    _, _, single = call(server, "/embeddings", {"input": "gamma", "dimensions": 16})
    assert len(single["data"][0]["embedding"]) == 16

    _, _, b64 = call(server, "/embeddings", {"input": "gamma", "encoding_format": "base64"})
    decoded = struct.unpack("<8f", base64.b64decode(b64["data"][0]["embedding"]))
    assert decoded == pytest.approx(vectors[1], abs=1e-6)

    assert call(server, "/embeddings", {"input": 3})[0] == 400


def test_custom_embedder() -> None:
    with FakeOpenAIServer(embedder=lambda text: [float(len(text)), 0.0]) as srv:
        _, _, body = call(srv, "/embeddings", {"input": ["abc", "a"]})
        assert [d["embedding"] for d in body["data"]] == [[3.0, 0.0], [1.0, 0.0]]


def test_models_and_unknown_paths(server: FakeOpenAIServer) -> None:
    status, _, body = call(server, "/models", method="GET")
    assert status == 200
    assert [m["id"] for m in body["data"]] == ["fake-model"]
    status, _, body = call(server, "/completions", {"prompt": "x"})
    assert status == 404 and "error" in body
    assert call(server, "/chat/completions", method="GET")[0] == 405
    assert chat(server, stream=True)[0] == 400


def test_binds_loopback_and_stop_releases_the_port() -> None:
    srv = FakeOpenAIServer().start()
    host, port = srv.address
    assert host == "127.0.0.1"
    assert srv.base_url == f"http://127.0.0.1:{port}/v1"
    assert chat(srv)[0] == 200
    srv.stop()
    assert not srv.running
    with pytest.raises(ConnectionRefusedError), socket.create_connection((host, port), 1.0):
        pass
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(("127.0.0.1", port))  # the port is free again
    srv.stop()  # idempotent
    with pytest.raises(RuntimeError):
        _ = srv.base_url


def test_stop_is_prompt_with_slow_requests_in_flight() -> None:
    srv = FakeOpenAIServer(latency_s=30.0).start()
    errors: list[BaseException] = []

    def slow() -> None:
        try:
            chat(srv, timeout=10.0)
        except (OSError, http.client.HTTPException) as exc:
            errors.append(exc)

    thread = threading.Thread(target=slow)
    thread.start()
    deadline = time.monotonic() + 5
    while srv.in_flight == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.in_flight == 1
    start = time.monotonic()
    srv.stop()
    thread.join(timeout=5)
    assert time.monotonic() - start < 1.5
    assert not thread.is_alive()
    assert len(errors) == 1  # the client saw the connection close, not a reply


def test_validation_of_faults_and_replies() -> None:
    with pytest.raises(ValueError):
        Fault("bogus")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Fault.http_error(200)
    with pytest.raises(ValueError):
        ScriptedReply("yes", p_yes=1.5)
    with FakeOpenAIServer() as srv, pytest.raises(TypeError):
        srv.inject("rate_limit")  # type: ignore[arg-type]


def test_with_httpx_client() -> None:
    httpx = pytest.importorskip("httpx")
    with FakeOpenAIServer(responder=lambda body: "yes") as srv:
        body = {"model": "m", "messages": MESSAGES}
        with httpx.Client(base_url=srv.base_url, timeout=5.0, trust_env=False) as client:
            assert client.post("/chat/completions", json=body).json()["usage"]["total_tokens"] == 11
            srv.inject(Fault.connection_drop(), Fault.timeout(delay_s=2.0))
            with pytest.raises(httpx.TransportError):
                client.post("/chat/completions", json=body)
            with pytest.raises(httpx.TimeoutException):
                client.post("/chat/completions", json=body, timeout=0.2)
            assert client.post("/chat/completions", json=body).status_code == 200
