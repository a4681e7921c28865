"""The network settings of an endpoint (judge or embeddings): a proxy used only when
configured, the environment's proxy and CA variables only with ``trust_env``, a CA bundle,
extra headers and query parameters sent but never shown. A small forwarding proxy stands in
for a corporate one."""

from __future__ import annotations

import asyncio
import http.client
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from pydantic import BaseModel, SecretStr

from ragmeter.embed import EmbeddingsConfig, OpenAIEmbeddings
from ragmeter.judge import (
    JudgeConfig,
    JudgeConfigError,
    JudgeTransientError,
    MemoryCache,
    Message,
    OpenAIJudge,
    Usage,
    endpoint_client,
)
from ragmeter.testing import FakeOpenAIServer

ANSWER = {"claims": ["the sky is blue"]}
PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


class Claims(BaseModel):
    claims: list[str]


class ForwardingProxy:
    """An HTTP proxy that forwards absolute-form requests (``POST http://host/path``) to
    their host and records the URLs it forwarded."""

    def __init__(self) -> None:
        self.forwarded: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                self._forward("POST")

            def do_GET(self) -> None:
                self._forward("GET")

            def _forward(self, method: str) -> None:
                proxy.forwarded.append(self.path)
                target = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {
                    k: v
                    for k, v in self.headers.items()
                    if k.lower() not in ("proxy-connection", "proxy-authorization", "connection")
                }
                assert target.hostname is not None
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=5)
                try:
                    path = target.path + (f"?{target.query}" if target.query else "")
                    conn.request(method, path, body, headers)
                    answer = conn.getresponse()
                    payload = answer.read()
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                finally:
                    conn.close()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)
        return f"http://{host}:{port}"

    def __enter__(self) -> ForwardingProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=lambda body: ANSWER) as fake:
        yield fake


@pytest.fixture
def proxy() -> Iterator[ForwardingProxy]:
    with ForwardingProxy() as running:
        yield running


@pytest.fixture
def proxy_in_environment(
    proxy: ForwardingProxy, monkeypatch: pytest.MonkeyPatch
) -> ForwardingProxy:
    for name in PROXY_VARIABLES:
        monkeypatch.setenv(name, proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    return proxy


def judged(config: JudgeConfig) -> Any:
    judge = OpenAIJudge(config, cache=MemoryCache())

    async def main() -> Any:
        try:
            return await judge.generate([Message("user", "sky?")], Claims, prompt_version="net@1")
        finally:
            await judge.aclose()

    return asyncio.run(main())


def settings(server: FakeOpenAIServer, **more: Any) -> dict[str, Any]:
    return {
        "model": "m",
        "base_url": server.base_url,
        "structured_output": "json_object",
        "max_retries": 0,
        "timeout_s": 5.0,
        **more,
    }


# -- the proxy ---------------------------------------------------------------------------------
def test_a_configured_proxy_carries_the_requests(server, proxy) -> None:
    judgment = judged(JudgeConfig(**settings(server, proxy=proxy.url)))
    assert judgment.output.claims == ["the sky is blue"]
    assert proxy.forwarded == [f"{server.base_url}/chat/completions"]
    assert len(server.requests) == 1


def test_the_environments_proxy_is_ignored_unless_trust_env(server, proxy_in_environment) -> None:
    judged(JudgeConfig(**settings(server)))
    assert proxy_in_environment.forwarded == []  # trust_env is off by default
    assert len(server.requests) == 1
    judged(JudgeConfig(**settings(server, trust_env=True)))
    assert proxy_in_environment.forwarded == [f"{server.base_url}/chat/completions"]
    assert len(server.requests) == 2


def test_embeddings_use_their_own_proxy(server, proxy) -> None:
    config = EmbeddingsConfig(model="e", base_url=server.base_url, proxy=proxy.url)
    vectors = OpenAIEmbeddings(config).embed_sync(["a text"], kind="query")
    assert vectors.shape[0] == 1
    assert proxy.forwarded == [f"{server.base_url}/embeddings"]


def test_a_proxy_that_cannot_be_reached_is_reported_without_its_credentials(server) -> None:
    dead = "http://proxyuser:pr0xy-s3cret@127.0.0.1:9"  # the discard port: nothing listens
    with pytest.raises(JudgeTransientError, match=r"connection to .* failed") as raised:
        judged(JudgeConfig(**settings(server, proxy=dead)))
    assert "pr0xy-s3cret" not in str(raised.value) and "proxyuser" not in str(raised.value)


# -- extra headers and query parameters --------------------------------------------------------
def test_extra_headers_are_sent_to_the_endpoint(server) -> None:
    config = JudgeConfig(**settings(server, extra_headers={"X-Tenant": "tenant-s3cret"}))
    judged(config)
    (request,) = server.requests
    assert request.headers["x-tenant"] == "tenant-s3cret"
    assert "tenant-s3cret" not in json.dumps(config.describe())


def test_extra_query_parameters_go_after_the_path_with_the_base_urls() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(400, json={"error": {"message": "bad key qry-s3cret-value"}})

    config = JudgeConfig(
        model="m",
        base_url="http://gw.example/v1?api-version=2024-06-01",
        extra_query={"subscription": SecretStr("qry-s3cret-value")},
        extra_headers={"X-Gateway-Token": SecretStr("hdr-s3cret-value")},
    )
    client = endpoint_client(config, transport=httpx.MockTransport(handler))

    async def main() -> None:
        try:
            await client.post("chat/completions", {"model": "m"}, Usage())
        finally:
            await client.aclose()

    with pytest.raises(JudgeConfigError) as raised:
        asyncio.run(main())
    (request,) = seen
    assert str(request.url) == (
        "http://gw.example/v1/chat/completions?api-version=2024-06-01&subscription=qry-s3cret-value"
    )
    assert request.headers["X-Gateway-Token"] == "hdr-s3cret-value"
    assert "qry-s3cret-value" not in str(raised.value)  # what the endpoint said, redacted


def test_azure_hosts_get_the_key_in_an_api_key_header() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"ok": True})

    for base_url in ("https://res.openai.azure.com/openai/v1", "https://api.openai.com/v1"):
        config = JudgeConfig(model="m", base_url=base_url, api_key=SecretStr("k-0123456789"))
        client = endpoint_client(config, transport=httpx.MockTransport(handler))

        async def main(client: Any = client) -> None:
            try:
                await client.post("chat/completions", {}, Usage())
            finally:
                await client.aclose()

        asyncio.run(main())
    azure, openai = seen
    assert azure.headers["api-key"] == "k-0123456789" and "authorization" not in azure.headers
    assert (
        openai.headers["authorization"] == "Bearer k-0123456789" and "api-key" not in openai.headers
    )


def test_a_socks_proxy_without_socks_support_says_what_to_install() -> None:
    try:
        import socksio  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match=r"httpx\[socks\]"):
            JudgeConfig(model="m", proxy="socks5://127.0.0.1:1080")
    else:
        assert JudgeConfig(model="m", proxy="socks5://127.0.0.1:1080").proxy


# -- a CA bundle -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (made with the openssl command)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    made = subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        capture_output=True,
        check=False,
    )  # fmt: skip
    if made.returncode != 0:
        pytest.skip(f"openssl could not make a certificate: {made.stderr[-200:]!r}")
    return cert, key


@pytest.fixture
def https_endpoint(certificate: tuple[Path, Path]) -> Iterator[str]:
    """An HTTPS endpoint whose certificate no default store trusts; it answers every POST
    with a chat completion."""
    cert, key = certificate
    content = json.dumps(ANSWER)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            payload = json.dumps(
                {
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 3, "completion_tokens": 5},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_ca_bundle_verifies_an_endpoint_the_default_store_does_not(
    https_endpoint: str, certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, _ = certificate
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the environment's: off without trust_env
    base: dict[str, Any] = {
        "model": "m",
        "base_url": https_endpoint,
        "structured_output": "json_object",
        "max_retries": 0,
    }
    with pytest.raises(JudgeTransientError, match=r"connection to .* failed"):
        judged(JudgeConfig(**base))
    judgment = judged(JudgeConfig(**base, ca_bundle=str(cert)))
    assert judgment.output.claims == ["the sky is blue"]
