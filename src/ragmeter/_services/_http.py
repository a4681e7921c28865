"""HTTP to OpenAI-compatible endpoints: limits, retries with backoff, errors that say what to
fix, and secrets kept out of every message. Shared by judges and embeddings."""

from __future__ import annotations

import asyncio
import base64
import email.utils
import functools
import importlib.util
import json
import logging
import math
import os
import random
import re
import ssl
import sys
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar
from urllib.parse import (
    parse_qsl,
    unquote,
    urlencode,
    urljoin,
    urlsplit,
    urlunsplit,
)

from ragmeter._services._errors import JudgeConfigError, JudgeError, JudgeTransientError
from ragmeter._services._limits import (
    DEFAULT_BREAKER_FAILURES,
    DEFAULT_BREAKER_SILENCE_S,
    Breaker,
    Limiter,
    LimitSettings,
    limiter_for,
)
from ragmeter._services._redact import redact_secrets, redact_url
from ragmeter._services._types import Usage

if TYPE_CHECKING:  # loaded when a client is made: redact_url and the rest need neither
    import aiohttp
    import httpx
    from pydantic import SecretStr

_T = TypeVar("_T")

MAX_BACKOFF_S = 30.0
#: The longest a ``Retry-After`` is obeyed by default (``max_retry_wait_s`` in a config).
DEFAULT_MAX_RETRY_WAIT_S = 60.0

logger = logging.getLogger("ragmeter.http")

#: How the key is sent: ``Authorization: Bearer KEY`` (OpenAI and nearly every other
#: endpoint) or ``api-key: KEY`` (Azure OpenAI).
KeyHeader = Literal["bearer", "api-key"]


def check_base_url(url: str) -> str:
    """``url`` when it can be an endpoint's API root (http or https with a host); else a
    ``ValueError`` saying what to write, raised when the config is made, not when the first
    request fails its retries."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"base_url must be the endpoint's http(s) API root, e.g. https://api.openai.com/v1 "
            f"or http://127.0.0.1:8000/v1; got {redact_url(url)!r}"
        )
    return url.strip()


def retry_after_seconds(headers: httpx.Headers, now: float | None = None) -> float | None:
    """How long the endpoint asks to wait: ``retry-after-ms``, else ``Retry-After`` in
    seconds or as an HTTP date; ``inf`` for a value too large or not finite, ``None``
    when there is none (or it cannot be read)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = None
        if value is not None and not math.isnan(value):
            return max(0.0, value) if math.isfinite(value) else math.inf
    raw = headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds):
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else math.inf


def wait_asked(headers: httpx.Headers) -> float | None:
    """How long a 429 answer asks to wait: its ``Retry-After`` (:func:`retry_after_seconds`),
    else when its exhausted limit resets (``x-ratelimit-reset-requests`` / ``-tokens``,
    ``6m0s``, ``1.5s``, ``20ms``: the limits whose ``x-ratelimit-remaining-*`` is 0, or
    all of them when none says); ``None`` when it says neither."""
    asked = retry_after_seconds(headers)
    if asked is not None:
        return asked
    resets = {}
    for limit in ("requests", "tokens"):
        seconds = _reset_seconds(headers.get(f"x-ratelimit-reset-{limit}"))
        if seconds is not None:
            resets[limit] = seconds
    exhausted = [
        seconds
        for limit, seconds in resets.items()
        if headers.get(f"x-ratelimit-remaining-{limit}", "").strip() == "0"
    ]
    found = exhausted or list(resets.values())
    return max(found) if found else None


_RESET_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_RESET_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def _reset_seconds(raw: str | None) -> float | None:
    """``6m0s`` -> 360.0, ``1.5s`` -> 1.5, ``20ms`` -> 0.02, ``12`` -> 12.0; ``None`` when
    unreadable."""
    if raw is None:
        return None
    text = raw.strip().lower()
    try:
        seconds = float(text)
    except ValueError:
        parts = _RESET_PART.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            return None
        seconds = sum(float(n) * _RESET_UNITS[u] for n, u in parts)
    if math.isnan(seconds):
        return None
    return max(0.0, seconds) if math.isfinite(seconds) else math.inf


class LimitedEndpoint(Protocol):
    """What an endpoint config says about its limits (:func:`endpoint_limiter`)."""

    @property
    def identity(self) -> str: ...

    max_concurrency: int
    requests_per_minute: float | None
    tokens_per_minute: float | None


class EndpointSettings(LimitedEndpoint, Protocol):
    """What an endpoint config (judge or embeddings) says about reaching it."""

    base_url: str
    api_key: SecretStr | None
    model: str
    timeout_s: float
    max_retries: int
    max_retry_wait_s: float


class StatusRejected(JudgeError):
    """An answer the caller asked to handle itself (``reject``), e.g. an endpoint that does
    not accept the request's ``response_format``, or a parameter.

    ``code`` and ``param`` are the error body's (OpenAI's ``unsupported_parameter`` and
    ``"max_tokens"``, say), ``None`` when it has none; ``error`` is the error the answer
    would have raised, for a caller that does not handle it after all."""

    def __init__(
        self,
        status: int,
        detail: str = "",
        *,
        code: str | None = None,
        param: str | None = None,
        error: JudgeError | None = None,
    ) -> None:
        super().__init__(f"HTTP {status}: {detail}" if detail else f"HTTP {status}")
        self.status = status
        self.detail = detail
        self.code = code
        self.param = param
        self.error = error


class EndpointClient:
    """POSTs JSON to one endpoint under its shared :class:`Limiter`, retrying transient
    failures (429, 5xx, timeouts, connection errors) with exponential backoff and jitter,
    honouring ``Retry-After``; 400/401/403/404 fail at once with the fix in the message.

    Requests go through aiohttp (a tenth of httpx's client CPU per request at 16 in flight),
    except with an explicit httpx ``transport`` (tests' ``httpx.MockTransport``), a socks
    proxy, or ``trust_env`` (the environment's proxy, ``NO_PROXY`` and CA variables are read
    exactly as httpx reads them): those go through httpx. Both paths send the same request
    and map answers and failures to the same errors."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: SecretStr | None,
        model: str,
        timeout_s: float,
        max_retries: int,
        limiter: Limiter,
        env_prefix: str = "RAGMETER_JUDGE",
        transport: httpx.AsyncBaseTransport | None = None,
        max_retry_wait_s: float = DEFAULT_MAX_RETRY_WAIT_S,
        key_header: KeyHeader = "bearer",
        bearer_token_env: str | None = None,
        extra_headers: Mapping[str, SecretStr | str] | None = None,
        extra_query: Mapping[str, SecretStr | str] | None = None,
        proxy: str | None = None,
        ca_bundle: str | None = None,
        trust_env: bool = False,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_retry_wait_s = max_retry_wait_s
        self.limiter = limiter
        self.env_prefix = env_prefix
        self._api_key = api_key
        self._transport = transport
        self._clients: dict[int, httpx.AsyncClient] = {}
        self._sessions: dict[int, aiohttp.ClientSession] = {}
        self._keepers: dict[int, AsyncGenerator[None, None]] = {}
        self._url_cache: dict[str, Any] = {}
        #: ``"bearer"``: ``Authorization: Bearer KEY``; ``"api-key"``: Azure's ``api-key: KEY``.
        self.key_header = key_header
        #: The variable holding a bearer token (Azure: a Microsoft Entra ID token), read when
        #: a client is made; sent as ``Authorization: Bearer``, next to any ``api-key``.
        self.bearer_token_env = bearer_token_env
        self._extra_headers = {k: _plain(v) for k, v in (extra_headers or {}).items()}
        self._extra_query = {k: _plain(v) for k, v in (extra_query or {}).items()}
        self.proxy = proxy
        self.ca_bundle = ca_bundle
        #: Whether HTTPS_PROXY / ALL_PROXY / NO_PROXY and SSL_CERT_FILE / SSL_CERT_DIR count.
        self.trust_env = trust_env

    def _secrets(self) -> list[str]:
        """Every secret this client sends: the key, the bearer token, the extra headers' and
        query parameters' values (longest first, so none is replaced only in part)."""
        found = [self._api_key.get_secret_value() if self._api_key else ""]
        if self.bearer_token_env:
            found.append(os.environ.get(self.bearer_token_env, ""))
        # extra values shorter than 4 characters ("1", "on") would garble every message
        found += [
            v for v in (*self._extra_headers.values(), *self._extra_query.values()) if len(v) >= 4
        ]
        return sorted({s for s in found if s}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` without the key, the bearer token, the extra headers' and query values,
        the base URL's and the proxy's credentials, or any URL's."""
        for secret in self._secrets():
            text = text.replace(secret, "***")
        urls = [self.base_url] + ([self.proxy] if self.proxy else [])
        return redact_secrets(text, *urls)

    @functools.cached_property
    def where(self) -> str:
        """The endpoint as it may be shown: without credentials in the URL (redacted once:
        every request and error names it)."""
        return redact_url(self.base_url)

    def _client(self) -> httpx.AsyncClient:
        import httpx

        # An httpx client belongs to one event loop; a sync score() in Jupyter runs its own.
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get(loop_id)
        if client is None or client.is_closed:
            # A query in the base URL (``?api-version=...``) goes with every request, after
            # the path: httpx would put the path after it.
            parts = urlsplit(self.base_url)
            root = urlunsplit((*parts[:2], parts.path.rstrip("/") + "/", "", ""))
            params = httpx.QueryParams(parts.query).merge(self._extra_query)
            client = httpx.AsyncClient(
                base_url=root,
                params=params,
                headers=self._headers(),
                timeout=httpx.Timeout(self.timeout_s),
                transport=self._transport,
                proxy=self.proxy,
                verify=self._verify(),
                # Off unless asked: a proxy or CA file from the environment applies only to
                # the endpoints the user says it is for (``trust_env`` / ``proxy``).
                trust_env=self.trust_env,
            )
            self._clients[loop_id] = client
        return client

    @functools.cached_property
    def uses_aiohttp(self) -> bool:
        """Whether requests go through aiohttp (else httpx): see the class docstring."""
        proxy_scheme = urlsplit(self.proxy).scheme.lower() if self.proxy else "http"
        return (
            self._transport is None
            and not self.trust_env
            and proxy_scheme in ("http", "https")
            and importlib.util.find_spec("aiohttp") is not None
        )

    async def _session(self) -> aiohttp.ClientSession:
        """This event loop's aiohttp session (made on first use, like the httpx client)."""
        loop = asyncio.get_running_loop()
        session = self._sessions.get(id(loop))
        # (a loop that ended without closing its session may leave its id to a new loop)
        if session is None or session.closed or session._loop is not loop:
            session = await self._open_session()
        return session

    async def _open_session(self) -> aiohttp.ClientSession:
        import aiohttp

        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=self._ssl_context()),
            headers=self._aiohttp_headers(),
            timeout=aiohttp.ClientTimeout(total=self.timeout_s),
            trust_env=False,  # trust_env goes through httpx (uses_aiohttp)
        )
        # Closed with the loop by asyncio.run (which closes every async generator before
        # the loop), so a caller that never calls aclose() gets no "Unclosed client
        # session" at exit: httpx never complained either.
        keeper = _close_with_loop(session)
        await keeper.__anext__()
        loop_id = id(asyncio.get_running_loop())
        self._sessions[loop_id] = session
        self._keepers[loop_id] = keeper
        return session

    def _ssl_context(self) -> ssl.SSLContext | bool:
        """What aiohttp verifies TLS with, as httpx would without ``trust_env``: the
        ``ca_bundle`` when given, else certifi's store. ``True`` (never used) when neither
        the endpoint nor the proxy speaks TLS, so a plain-HTTP endpoint builds no context."""
        schemes = {urlsplit(self.base_url).scheme.lower()}
        if self.proxy:
            schemes.add(urlsplit(self.proxy).scheme.lower())
        if "https" not in schemes:
            return True
        return _ssl_context_for(self.ca_bundle)

    @functools.cached_property
    def _proxy(self) -> tuple[str | None, dict[str, str] | None]:
        """The proxy URL for aiohttp and its headers: a ``user:password@`` in the URL is
        sent as ``Proxy-Authorization: Basic ...`` (as httpx does), not in the URL."""
        if not self.proxy:
            return None, None
        from yarl import URL

        url = URL(self.proxy)
        if url.user is None:
            return str(url), None
        pair = f"{url.user}:{url.password or ''}".encode("latin-1")
        auth = {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode("ascii")}
        return str(url.with_user(None)), auth

    def _url(self, path: str) -> Any:
        """The absolute URL of ``path`` (a yarl URL, encoded once): the base URL's root, then
        ``path``, then the base URL's query with ``extra_query`` merged in (a name in both
        takes ``extra_query``'s value), as httpx sends it; no credentials (see
        :meth:`_aiohttp_headers`)."""
        url = self._url_cache.get(path)
        if url is None:
            from yarl import URL

            parts = urlsplit(self.base_url)
            host = parts.netloc.rpartition("@")[2]
            root = urlunsplit((parts.scheme, host, parts.path.rstrip("/") + "/", "", ""))
            merged: dict[str, list[str]] = {}
            for name, value in parse_qsl(parts.query, keep_blank_values=True):
                merged.setdefault(name, []).append(value)
            merged.update({name: [value] for name, value in self._extra_query.items()})
            query = urlencode([(name, v) for name, values in merged.items() for v in values])
            full = urljoin(root, path.lstrip("/")) + (f"?{query}" if query else "")
            url = self._url_cache[path] = URL(full, encoded=True)
        return url

    def _aiohttp_headers(self) -> dict[str, str]:
        """:meth:`_headers`; a ``user:password@`` in the base URL replaces the key with
        ``Authorization: Basic ...``, as httpx does for credentials in a URL."""
        headers = self._headers()
        parts = urlsplit(self.base_url)
        if parts.username is not None or parts.password is not None:
            pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
            encoded = base64.b64encode(pair.encode("latin-1")).decode("ascii")
            headers["Authorization"] = f"Basic {encoded}"
        return headers

    @functools.cached_property
    def _failures(self) -> Failures:
        """(timeouts, connection failures) as this client's path raises them."""
        if self.uses_aiohttp:
            import aiohttp

            return (asyncio.TimeoutError,), (aiohttp.ClientError,)
        import httpx

        return (httpx.TimeoutException, asyncio.TimeoutError), (httpx.TransportError,)

    async def _send(self, path: str, body: dict[str, Any]) -> tuple[int, bytes, Any]:
        """POST ``body`` as JSON: (status, answer bytes, an ``httpx.Response`` for
        :meth:`error_for` when the status is not 200, else ``None`` on the aiohttp path).
        Raises ``asyncio.TimeoutError`` / ``httpx.TimeoutException`` on timeouts and
        ``aiohttp.ClientError`` / ``httpx.TransportError`` when the connection fails."""
        if not self.uses_aiohttp:
            response = await self._client().post(path, json=body)
            return response.status_code, response.content, response
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        proxy, proxy_headers = self._proxy
        session = await self._session()
        async with session.post(
            self._url(path),
            data=data.encode(),
            proxy=proxy,
            proxy_headers=proxy_headers,
            allow_redirects=False,  # as httpx: a redirect is an answer, not followed
        ) as answer:
            content = await answer.read()
            if answer.status == 200:
                return 200, content, None
            import httpx

            headers = list(answer.headers.items())
            return (
                answer.status,
                content,
                httpx.Response(answer.status, headers=headers, content=content),
            )

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._extra_headers}
        if self._api_key is not None:
            key = self._api_key.get_secret_value()
            if self.key_header == "api-key":
                headers["api-key"] = key
            else:
                headers["Authorization"] = f"Bearer {key}"
        if self.bearer_token_env:
            token = os.environ.get(self.bearer_token_env)
            if not token:
                raise JudgeConfigError(
                    f"{self.bearer_token_env} is not set: it should hold the bearer token "
                    "(a Microsoft Entra ID token for Azure) named by azure_ad_token_env"
                )
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _verify(self) -> ssl.SSLContext | bool:
        """TLS verification: against ``ca_bundle`` when given (a corporate CA, say), else the
        default store (certifi's; ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` with ``trust_env``)."""
        if self.ca_bundle is None:
            return True
        return ssl.create_default_context(cafile=self.ca_bundle)

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()
        await self.aclose_current_loop()  # another loop's session closes with that loop
        self._sessions.clear()
        self._keepers.clear()

    async def aclose_current_loop(self) -> None:
        """Close this event loop's client (a sync call's loop is about to end)."""
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.pop(loop_id, None)
        if client is not None:
            await client.aclose()
        session = self._sessions.pop(loop_id, None)
        keeper = self._keepers.pop(loop_id, None)
        if session is not None and session._loop is asyncio.get_running_loop():
            await session.close()
        if keeper is not None:
            await keeper.aclose()

    def detail_of(self, response: httpx.Response) -> str:
        """What the endpoint said about an error, redacted and short."""
        error = error_of(response)
        detail = error.get("message", error) if isinstance(error, dict) else error
        return self.redact(str(detail))[:300]

    @staticmethod
    def error_fields(response: httpx.Response) -> tuple[str | None, str | None]:
        """The ``code`` and ``param`` of an OpenAI-style error body (``None`` when absent)."""
        error = error_of(response)
        if not isinstance(error, dict):
            return None, None
        code, param = error.get("code"), error.get("param")
        return (
            None if code is None else str(code),
            None if param is None else str(param),
        )

    def fixes(self, response: httpx.Response) -> dict[int, str]:
        """What to do about the statuses retrying cannot fix (:func:`status_error`)."""
        prefix = self.env_prefix
        # which key goes where: docs/judges.md, "Which key is sent where"
        keys = f"{prefix}_API_KEY" + (
            " (or, with a config file, the variable its api_key_env names)"
            if prefix == "RAGMETER_JUDGE"
            else ""
        )
        return {
            401: f"the API key was rejected: check {keys}"
            if self._api_key is not None
            else f"no API key was sent: set {keys}; OPENAI_API_KEY is sent only to the "
            "endpoint OPENAI_BASE_URL names (https://api.openai.com/v1 when unset)"
            + (
                ", AZURE_OPENAI_API_KEY only to the resource AZURE_OPENAI_ENDPOINT names"
                if self.key_header == "api-key"
                else ""
            ),
            403: "the API key may not use this model: check the key's permissions",
            404: f"not found: check {prefix}_MODEL and that {prefix}_BASE_URL ends with the "
            "API root (e.g. .../v1)",
        }

    def error_for(self, response: httpx.Response) -> JudgeError:
        """The error an answer of another status than 200 raises (:func:`status_error`)."""
        return status_error(
            response.status_code,
            f"{self.where} (model {self.model!r})",
            self.detail_of(response),
            fixes=self.fixes(response),
            retry_after=retry_after_seconds(response.headers)
            if response.status_code != 429
            else wait_asked(response.headers),
        )

    async def post(
        self,
        path: str,
        body: dict[str, Any],
        usage: Usage,
        *,
        estimated_tokens: int = 0,
        validate: Callable[[dict[str, Any]], object] | None = None,
        reject: Callable[[int, str], bool] | None = None,
    ) -> dict[str, Any]:
        """The JSON answer. ``validate`` checks its shape (raising KeyError, TypeError...);
        a malformed answer counts as transient. An error answer for which ``reject(status,
        detail)`` is true raises :class:`StatusRejected` at once, for the caller to handle.

        Time is bounded: each attempt has ``timeout_s`` for all of it (connecting, sending,
        and receiving the whole answer, however slowly it trickles in), a ``Retry-After``
        is obeyed up to ``max_retry_wait_s``, and there are at most ``max_retries`` retries.
        """

        async def attempt() -> dict[str, Any]:
            async with self.limiter.slot(estimated_tokens):
                self.limiter.breaker.check()  # it may have opened while this call waited
                status, content, response = await send_once(
                    lambda: self._send(path, body),
                    usage,
                    where=self.where,
                    timeout_s=self.timeout_s,
                    failures=self._failures,
                    redact=self.redact,
                )
                if status != 200:
                    if reject is not None:
                        detail = self.detail_of(response)
                        if reject(status, detail):
                            code, param = self.error_fields(response)
                            raise StatusRejected(
                                status,
                                detail,
                                code=code,
                                param=param,
                                error=self.error_for(response),
                            )
                    raise self.error_for(response)
                try:
                    data = json.loads(content)
                    if validate is not None:
                        validate(data)
                except (json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError):
                    raise JudgeTransientError(
                        f"malformed response body from {self.where}"
                    ) from None
                answer: dict[str, Any] = data
                return answer

        return await with_retries(
            attempt,
            usage,
            max_retries=self.max_retries,
            max_retry_wait_s=self.max_retry_wait_s,
            where=self.where,
            breaker=self.limiter.breaker,
        )


def error_of(response: httpx.Response) -> Any:
    """The ``error`` of an error answer's JSON body (an object, with its ``message``, in
    OpenAI's and Anthropic's shape), else the answer's text."""
    try:
        return response.json().get("error", response.text)
    except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
        return response.text


def status_error(
    status: int | None,
    where: str,
    detail: str,
    *,
    fixes: Mapping[int, str],
    retry_after: float | None = None,
    transient: bool | None = None,
    shown: str | None = None,
    rejected: str = "the endpoint rejected the request",
    said: str = "Endpoint said",
) -> JudgeError:
    """The one mapping of a failed request to a judge error (HTTP clients, LiteLLM): a
    status ``fixes`` names fails at once with that fix; 408, 409, 429 and 5xx (or
    ``transient``, when given) are retried, after ``retry_after``; any other fails with
    ``rejected``. ``detail`` (what the endpoint said) is redacted already; ``shown`` names
    the failure (``HTTP {status}``)."""
    shown = f"HTTP {status}" if shown is None else shown
    if transient is None:
        transient = status is not None and (status in (408, 409, 429) or status >= 500)
    if transient and status not in fixes:
        return JudgeTransientError(
            f"{shown} from {where}: {detail}",
            retry_after=retry_after,
            no_answer=status is None or status >= 500,
        )
    fix = fixes.get(status or 0, rejected)
    return JudgeConfigError(f"{shown} from {where}: {fix}. {said}: {detail}")


#: (timeouts, connection failures) as a request path raises them.
Failures = tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]


async def send_once(
    send: Callable[[], Awaitable[_T]],
    usage: Usage,
    *,
    where: str,
    timeout_s: float,
    failures: Failures,
    redact: Callable[[str], str],
) -> _T:
    """``await send()`` once, counted and timed, within ``timeout_s``: a timeout or a
    connection failure (``failures``) is a :class:`JudgeTransientError` naming ``where``."""
    timeouts, broken = failures
    started = time.monotonic()
    usage.calls += 1  # every request sent counts, answered or not
    try:
        return await _within(send(), timeout_s)
    except timeouts:
        raise JudgeTransientError(
            f"no complete answer from {where} within {timeout_s:g} s", no_answer=True
        ) from None
    except broken as error:
        raise JudgeTransientError(
            f"connection to {where} failed: {redact(f'{type(error).__name__}: {error}')}",
            no_answer=True,
        ) from None
    finally:
        usage.latency_s += time.monotonic() - started


async def with_retries(
    attempt: Callable[[], Awaitable[_T]],
    usage: Usage,
    *,
    max_retries: int,
    max_retry_wait_s: float,
    where: str,
    breaker: Breaker | None = None,
) -> _T:
    """``await attempt()``, called again while it fails with :class:`JudgeTransientError`, at
    most ``max_retries`` times more, waiting :func:`retry_wait` between tries (each retry is
    counted in ``usage``): the one retry policy of every endpoint (HTTP clients, LiteLLM).
    The last failure is raised, saying how many attempts were made.

    With the endpoint's ``breaker``: nothing is sent while it is open
    (:class:`EndpointUnavailableError`); an endpoint asking to wait longer than
    ``max_retry_wait_s`` opens it (the call fails at once, not after waiting), and so does
    a streak of calls without an answer (:meth:`Breaker.failed`); a wait between tries ends
    early when it opens. Without one, a longer wait is cut to ``max_retry_wait_s``."""
    tries = 0
    while True:
        if breaker is not None:
            breaker.check()
        started = time.monotonic()
        watched = breaker.watch() if breaker is not None else None
        try:
            try:
                answer = await attempt()
            finally:
                if breaker is not None:
                    breaker.unwatch(watched)
        except asyncio.CancelledError:
            if watched is None or not watched.cut or _still_cancelled():
                raise  # not (only) the breaker's cut: a real cancellation
            raise JudgeTransientError(
                f"cut in flight: {breaker.reason if breaker else 'the endpoint cannot answer'}"
            ) from None
        except JudgeTransientError as error:
            asked = error.retry_after
            if breaker is not None:
                if asked is not None and asked > max_retry_wait_s:
                    breaker.trip(f"rate limited: {where} asks to wait {_duration(asked)}", asked)
                    raise JudgeTransientError(
                        f"{error} (not retried: asks to wait {_duration(asked)}, longer than "
                        f"max_retry_wait_s {max_retry_wait_s:g} s)",
                        retry_after=asked,
                    ) from None
                if error.no_answer:
                    breaker.failed(where, started)
            if tries >= max_retries:
                raise JudgeTransientError(f"{error} (gave up after {tries + 1} attempts)") from None
            await _wait_unless_open(retry_wait(tries, asked, max_retry_wait_s, where), breaker)
            tries += 1
            usage.retries += 1
        else:
            if breaker is not None:
                breaker.succeeded()
            return answer


def _still_cancelled() -> bool:
    """After a cancellation of the current task was caught: whether another one is pending
    (3.11+ counts them; 3.10 does not, and takes a caught one as handled)."""
    task = asyncio.current_task()
    if task is None or sys.version_info < (3, 11):
        return False
    return bool(task.uncancel())


def _duration(seconds: float) -> str:
    """``3600 s``, or ``an unbounded time`` for ``inf``."""
    return "an unbounded time" if math.isinf(seconds) else f"{seconds:.0f} s"


#: How often a wait between tries looks whether the endpoint's breaker opened.
BREAKER_POLL_S = 0.25


async def _wait_unless_open(seconds: float, breaker: Breaker | None) -> None:
    """Sleep ``seconds``, or less when ``breaker`` opens meanwhile (the next try then fails
    at once, without being sent)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if breaker is not None and breaker.reason is not None:
            return
        await asyncio.sleep(left if breaker is None else min(left, BREAKER_POLL_S))


async def _close_with_loop(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    """Started once, kept by the client: the loop's ``shutdown_asyncgens`` (``asyncio.run``
    calls it before closing the loop) closes it, and with it ``session``."""
    try:
        yield
    finally:
        if not session.closed:
            await session.close()


async def _within(work: Awaitable[_T], seconds: float) -> _T:
    """``await work``, cancelled after ``seconds`` (``asyncio.TimeoutError``): with
    ``asyncio.timeout`` where there is one (3.11+), which, unlike ``wait_for`` there, makes
    no task per request."""
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await work
    return await asyncio.wait_for(work, timeout=seconds)


@functools.lru_cache(maxsize=8)
def _ssl_context_for(ca_bundle: str | None) -> ssl.SSLContext:
    """The TLS context verifying against ``ca_bundle``, else certifi's store (httpx's
    default); built once per bundle in a process (it costs milliseconds)."""
    if ca_bundle is not None:
        return ssl.create_default_context(cafile=ca_bundle)
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def retry_wait(attempt: int, asked: float | None, max_wait_s: float, where: str) -> float:
    """Seconds to wait before retry ``attempt`` + 1 (0-based): exponential backoff with
    jitter, or the endpoint's ``Retry-After`` (``asked``) when longer, but never more than
    ``max_wait_s`` beyond the backoff. A long or capped wait is logged, naming ``where``
    (already redacted). Every client that retries (HTTP endpoints, LiteLLM) waits this way."""
    backoff: float = min(MAX_BACKOFF_S, 0.5 * 2**attempt) * random.uniform(0.5, 1.0)
    asked = float(asked or 0.0)
    wait: float = min(max(backoff, asked), max(backoff, max_wait_s))
    if asked > max_wait_s:
        logger.warning(
            "%s asked to wait %s before retrying; waiting %.0f s (max_retry_wait_s)",
            where,
            _duration(asked),
            wait,
        )
    elif wait >= 10:
        logger.warning("%s: retrying in %.0f s", where, wait)
    return wait


def endpoint_limiter(config: LimitedEndpoint) -> Limiter:
    """The process-wide limiter of ``config``'s endpoint (its identity), with its limits."""
    return limiter_for(
        config.identity,
        LimitSettings(
            config.max_concurrency,
            config.requests_per_minute,
            config.tokens_per_minute,
            getattr(config, "breaker_failures", DEFAULT_BREAKER_FAILURES),
            getattr(config, "breaker_silence_s", DEFAULT_BREAKER_SILENCE_S),
        ),
    )


def endpoint_client(
    config: EndpointSettings,
    *,
    env_prefix: str = "RAGMETER_JUDGE",
    transport: httpx.AsyncBaseTransport | None = None,
    kind: type[EndpointClient] = EndpointClient,
    **settings: Any,
) -> EndpointClient:
    """A client (of ``kind``, given ``settings`` besides) for ``config``'s endpoint, under
    the process-wide limiter of that endpoint."""
    from ragmeter._services._config import is_azure_url  # _config imports this module

    # The network and Azure settings are optional: a config without them gets the defaults.
    azure = bool(getattr(config, "azure_endpoint", None)) or is_azure_url(config.base_url)
    values: dict[str, Any] = dict(
        base_url=config.base_url,
        api_key=config.api_key,
        model=config.model,
        timeout_s=config.timeout_s,
        max_retries=config.max_retries,
        limiter=endpoint_limiter(config),
        env_prefix=env_prefix,
        transport=transport,
        max_retry_wait_s=config.max_retry_wait_s,
        key_header="api-key" if azure else "bearer",
        bearer_token_env=getattr(config, "azure_ad_token_env", None),
        extra_headers=getattr(config, "extra_headers", None),
        extra_query=getattr(config, "extra_query", None),
        proxy=getattr(config, "proxy", None),
        ca_bundle=getattr(config, "ca_bundle", None),
        trust_env=bool(getattr(config, "trust_env", False)),
    )
    return kind(**{**values, **settings})


def _plain(value: SecretStr | str) -> str:
    from pydantic import SecretStr

    return value.get_secret_value() if isinstance(value, SecretStr) else str(value)
