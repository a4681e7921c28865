"""The aiohttp path of EndpointClient (the default without an httpx ``transport``): which
path a client takes, and that it keeps what the httpx path guarantees (headers, query,
proxy and TLS settings, deadlines, Retry-After, errors without secrets), against the
project's FakeOpenAIServer."""

from __future__ import annotations

import asyncio
import base64
import ssl
import time

import httpx
import pytest
from pydantic import SecretStr

from ragmeter.judge import (
    EndpointClient,
    JudgeConfig,
    JudgeConfigError,
    JudgeTransientError,
    Limiter,
    LimitSettings,
    Usage,
    endpoint_client,
)
from ragmeter.testing import FakeOpenAIServer, Fault

BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
KEY = "sk-very-secret-key-123456"


def client_for(base_url: str, **settings: object) -> EndpointClient:
    values: dict = {
        "base_url": base_url,
        "api_key": SecretStr(KEY),
        "model": "m",
        "timeout_s": 2.0,
        "max_retries": 0,
        "limiter": Limiter(LimitSettings(4, None, None)),
        **settings,
    }
    return EndpointClient(**values)


def post(client: EndpointClient, path: str = "chat/completions") -> tuple[dict, Usage]:
    usage = Usage()

    async def main() -> dict:
        try:
            return await client.post(path, BODY, usage)
        finally:
            await client.aclose()

    return asyncio.run(main()), usage


# -- which path ----------------------------------------------------------------------------
def test_a_client_without_a_transport_uses_aiohttp() -> None:
    assert client_for("http://127.0.0.1:1/v1").uses_aiohttp


@pytest.mark.parametrize(
    "settings",
    [
        {"transport": httpx.MockTransport(lambda request: httpx.Response(200))},
        {"trust_env": True},  # the environment's proxy/CA variables: read as httpx reads them
        {"proxy": "socks5://127.0.0.1:1080"},  # aiohttp has no socks support
    ],
)
def test_a_transport_trust_env_or_a_socks_proxy_keep_httpx(settings: dict) -> None:
    assert not client_for("http://127.0.0.1:1/v1", **settings).uses_aiohttp


# -- what is sent ----------------------------------------------------------------------------
def test_the_key_extra_headers_and_query_go_with_the_request() -> None:
    with FakeOpenAIServer(api_key=KEY) as server:
        client = client_for(
            server.base_url + "?api-version=2024-06-01",
            extra_headers={"X-Team": "search"},
            extra_query={"tenant": "t1"},
        )
        base_url = server.base_url
        answer, usage = post(client)
        (request,) = server.requests
    assert request.authorized  # Authorization: Bearer KEY reached the server
    assert request.headers["x-team"] == "search"
    assert request.headers["content-type"] == "application/json"
    assert request.path.endswith("/v1/chat/completions")  # the server drops the query
    # the base URL's query, then extra_query, after the path (as the httpx path sends it)
    assert str(client._url("chat/completions")) == (
        f"{base_url}/chat/completions?api-version=2024-06-01&tenant=t1"
    )
    assert request.body == BODY
    assert answer["choices"][0]["message"]["role"] == "assistant"
    assert (usage.calls, usage.retries) == (1, 0)


def test_a_proxys_credentials_go_as_basic_auth_not_in_the_url() -> None:
    client = client_for("http://127.0.0.1:1/v1", proxy="http://alice:s3cr%40t@proxy.example:3128")
    url, headers = client._proxy
    assert url == "http://proxy.example:3128"
    # base64 of "alice:s3cr@t" (the password percent-decoded, as httpx sends it)
    assert headers == {"Proxy-Authorization": "Basic " + base64.b64encode(b"alice:s3cr@t").decode()}
    assert client_for("http://127.0.0.1:1/v1", proxy="http://proxy.example:3128")._proxy == (
        "http://proxy.example:3128",
        None,
    )


def test_tls_is_verified_against_the_ca_bundle_or_certifi(tmp_path) -> None:
    import certifi

    # http endpoint, no proxy: no TLS context is built at all
    assert client_for("http://127.0.0.1:1/v1")._ssl_context() is True
    default = client_for("https://api.example/v1")._ssl_context()
    assert isinstance(default, ssl.SSLContext)
    assert default.verify_mode == ssl.CERT_REQUIRED and default.check_hostname
    certifi_store = ssl.create_default_context(cafile=certifi.where())
    assert len(default.get_ca_certs()) == len(certifi_store.get_ca_certs())
    # a CA bundle with certifi's first certificate only: exactly that one is trusted
    first = certifi_store.get_ca_certs(binary_form=True)[0]
    bundle = tmp_path / "ca.pem"
    bundle.write_text(ssl.DER_cert_to_PEM_cert(first))
    custom = client_for("https://api.example/v1", ca_bundle=str(bundle))._ssl_context()
    assert isinstance(custom, ssl.SSLContext)
    assert custom.get_ca_certs(binary_form=True) == [first]
    # an https proxy in front of an http endpoint needs TLS too
    proxied = client_for("http://127.0.0.1:1/v1", proxy="https://proxy.example:3128")
    assert isinstance(proxied._ssl_context(), ssl.SSLContext)


# -- deadlines, retries, errors ------------------------------------------------------------
def test_an_answer_later_than_the_timeout_is_a_transient_error() -> None:
    with FakeOpenAIServer() as server:
        server.inject(Fault.timeout(delay_s=3.0))
        where = server.base_url
        client = client_for(where, timeout_s=0.3)
        started = time.monotonic()
        with pytest.raises(JudgeTransientError) as raised:
            post(client)
    assert time.monotonic() - started < 2.5
    assert str(raised.value) == (
        f"no complete answer from {where} within 0.3 s (gave up after 1 attempts)"
    )


def test_a_429_is_retried_after_its_retry_after() -> None:
    with FakeOpenAIServer() as server:
        server.inject(Fault.rate_limit(retry_after_header="0.8"))
        client = client_for(server.base_url, max_retries=2)
        started = time.monotonic()
        answer, usage = post(client)
        elapsed = time.monotonic() - started
        assert len(server.requests) == 2
    assert elapsed >= 0.75  # the 0.8 s asked for, not the backoff's at most 0.5 s
    assert (usage.calls, usage.retries) == (2, 1)
    assert answer["choices"]


def test_the_api_key_never_appears_in_an_error() -> None:
    # the endpoint quotes the key back in its error body: the message must not carry it
    with FakeOpenAIServer() as server:
        server.inject(Fault.bad_request(f"invalid key {KEY} for model m"))
        with pytest.raises(JudgeConfigError) as raised:
            post(client_for(server.base_url))
    assert KEY not in str(raised.value)
    assert "invalid key *** for model m" in str(raised.value)
    assert str(raised.value).startswith("HTTP 400 from ")


def test_a_connection_failure_names_the_endpoint_without_credentials() -> None:
    client = client_for(f"http://user:{KEY}@127.0.0.1:9/v1")  # the discard port: no listener
    with pytest.raises(JudgeTransientError) as raised:
        post(client)
    message = str(raised.value)
    assert message.startswith("connection to http://127.0.0.1:9/v1 failed: ")
    assert KEY not in message and "user" not in message


def test_a_judge_config_goes_through_aiohttp_end_to_end() -> None:
    with FakeOpenAIServer() as server:
        client = endpoint_client(
            JudgeConfig(model="m", base_url=server.base_url, api_key=SecretStr(KEY))
        )
        assert client.uses_aiohttp
        answer, usage = post(client)
        assert len(server.requests) == 1
    assert answer["model"] == "m" and usage.calls == 1


def test_credentials_in_the_base_url_go_as_basic_auth() -> None:
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("http://", "http://user:p%40ss@")
        post(client_for(url))
        (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    client = client_for(url)
    # base64 of "user:p@ss" (percent-decoded), in place of the bearer key, as httpx sends it
    expected = "Basic " + base64.b64encode(b"user:p@ss").decode()
    assert client._aiohttp_headers()["Authorization"] == expected
    assert "user" not in str(client._url("chat/completions"))


def test_the_url_is_the_one_the_httpx_path_sends() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={"ok": True})

    base = "http://gw.example/v1?a=1&b=x%20y&a=3"
    extra = {"a": "2", "t k": "v&w"}
    post(client_for(base, extra_query=extra, transport=httpx.MockTransport(handler)))
    # "a" keeps its place with extra_query's value; spaces as "+", "&" in a value as %26
    expected = "http://gw.example/v1/chat/completions?a=2&b=x+y&t+k=v%26w"
    assert seen == [expected]
    assert str(client_for(base, extra_query=extra)._url("chat/completions")) == expected


def test_a_run_through_aiohttp_does_not_import_httpx() -> None:
    import subprocess
    import sys

    code = (
        "import sys, asyncio\n"
        "from ragmeter.judge import JudgeConfig, OpenAIJudge, Message\n"
        "from ragmeter.testing import FakeOpenAIServer\n"
        "from pydantic import BaseModel\n"
        "class A(BaseModel):\n    claims: list[str]\n"
        "with FakeOpenAIServer(responder=lambda body: {'claims': ['x']}) as s:\n"
        "    j = OpenAIJudge(JudgeConfig(model='m', base_url=s.base_url))\n"
        "    async def main():\n"
        "        try:\n"
        "            return await j.generate([Message('user', 'q')], A, prompt_version='t@1')\n"
        "        finally:\n"
        "            await j.aclose()\n"
        "    print(asyncio.run(main()).output.claims, 'httpx' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['x']", "False"]


def test_a_redirect_is_not_followed() -> None:
    # like the httpx path: a 3xx is an answer, and the key never goes where it points
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    paths: list[str] = []

    class Redirecting(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            paths.append(self.path)
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(307)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(JudgeConfigError) as raised:
            post(client_for(f"http://127.0.0.1:{server.server_port}/v1"))
    finally:
        server.shutdown()
        server.server_close()
    assert paths == ["/v1/chat/completions"]  # /elsewhere never asked
    assert str(raised.value).startswith("HTTP 307 from ")


def test_a_caller_that_never_closes_the_client_gets_no_unclosed_session_warning() -> None:
    import subprocess
    import sys

    code = (
        "import asyncio\n"
        "from pydantic import SecretStr\n"
        "from ragmeter.judge import EndpointClient, Limiter, LimitSettings, Usage\n"
        "from ragmeter.testing import FakeOpenAIServer\n"
        "with FakeOpenAIServer() as s:\n"
        "    c = EndpointClient(base_url=s.base_url, api_key=None, model='m', timeout_s=2,\n"
        "                       max_retries=0, limiter=Limiter(LimitSettings(2, None, None)))\n"
        "    body = {'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}\n"
        "    for _ in range(2):  # two loops, neither closing the client\n"
        "        asyncio.run(c.post('chat/completions', body, Usage()))\n"
        "    print('done')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "done"
    assert "Unclosed" not in out.stderr, out.stderr
