"""HTTP to OpenAI-compatible endpoints: limits, retries with backoff, errors that say what to
fix, and secrets kept out of every message. Shared by judges and embeddings."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Collection
from typing import Any, Protocol

import httpx
from pydantic import SecretStr

from ragmeter._services._errors import JudgeConfigError, JudgeError, JudgeTransientError
from ragmeter._services._limits import Limiter, LimitSettings, limiter_for
from ragmeter._services._types import Usage

MAX_BACKOFF_S = 30.0


class EndpointSettings(Protocol):
    """What an endpoint config (judge or embeddings) says about reaching it."""

    @property
    def identity(self) -> str: ...

    base_url: str
    api_key: SecretStr | None
    model: str
    timeout_s: float
    max_retries: int
    max_concurrency: int
    requests_per_minute: float | None
    tokens_per_minute: float | None


class StatusRejected(JudgeError):
    """A status the caller asked to handle itself (``fail_fast_statuses``)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class EndpointClient:
    """POSTs JSON to one endpoint under its shared :class:`Limiter`, retrying transient
    failures (429, 5xx, timeouts, connection errors) with exponential backoff and jitter,
    honouring ``Retry-After``; 400/401/403/404 fail at once with the fix in the message."""

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
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.limiter = limiter
        self.env_prefix = env_prefix
        self._api_key = api_key
        self._transport = transport
        self._clients: dict[int, httpx.AsyncClient] = {}

    def redact(self, text: str) -> str:
        secret = self._api_key.get_secret_value() if self._api_key else ""
        return text.replace(secret, "***") if secret else text

    def _client(self) -> httpx.AsyncClient:
        # An httpx client belongs to one event loop; a sync score() in Jupyter runs its own.
        loop_id = id(asyncio.get_running_loop())
        client = self._clients.get(loop_id)
        if client is None or client.is_closed:
            headers = {"Content-Type": "application/json"}
            if self._api_key is not None:
                headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
            client = httpx.AsyncClient(
                base_url=self.base_url + "/",
                headers=headers,
                timeout=httpx.Timeout(self.timeout_s),
                transport=self._transport,
                trust_env=False,
            )
            self._clients[loop_id] = client
        return client

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    async def aclose_current_loop(self) -> None:
        """Close this event loop's client (a sync call's loop is about to end)."""
        client = self._clients.pop(id(asyncio.get_running_loop()), None)
        if client is not None:
            await client.aclose()

    def error_for(self, response: httpx.Response) -> JudgeError:
        try:
            detail = response.json().get("error", response.text)
            if isinstance(detail, dict):
                detail = detail.get("message", detail)
        except (json.JSONDecodeError, AttributeError):
            detail = response.text
        detail = self.redact(str(detail))[:300]
        status = response.status_code
        where = f"{self.base_url} (model {self.model!r})"
        if status == 429 or status >= 500 or status in (408, 409):
            retry_after = response.headers.get("retry-after")
            try:
                wait = float(retry_after) if retry_after is not None else None
            except ValueError:
                wait = None
            return JudgeTransientError(f"HTTP {status} from {where}: {detail}", retry_after=wait)
        prefix = self.env_prefix
        fixes = {
            401: f"the API key was rejected: check {prefix}_API_KEY (or OPENAI_API_KEY)",
            403: "the API key may not use this model: check the key's permissions",
            404: f"not found: check {prefix}_MODEL and that {prefix}_BASE_URL ends with the "
            "API root (e.g. .../v1)",
        }
        fix = fixes.get(status, "the endpoint rejected the request")
        return JudgeConfigError(f"HTTP {status} from {where}: {fix}. Endpoint said: {detail}")

    async def post(
        self,
        path: str,
        body: dict[str, Any],
        usage: Usage,
        *,
        estimated_tokens: int = 0,
        validate: Callable[[dict[str, Any]], object] | None = None,
        fail_fast_statuses: Collection[int] = (),
    ) -> dict[str, Any]:
        """The JSON answer. ``validate`` checks its shape (raising KeyError, TypeError...);
        a malformed answer counts as transient. Statuses in ``fail_fast_statuses`` raise
        :class:`StatusRejected` at once."""
        attempt = 0
        while True:
            try:
                async with self.limiter.slot(estimated_tokens):
                    started = time.monotonic()
                    usage.calls += 1  # every request sent counts, answered or not
                    try:
                        response = await self._client().post(path, json=body)
                    except httpx.TimeoutException:
                        raise JudgeTransientError(
                            f"no answer from {self.base_url} within {self.timeout_s} s"
                        ) from None
                    except httpx.TransportError as error:
                        raise JudgeTransientError(
                            f"connection to {self.base_url} failed: "
                            f"{self.redact(f'{type(error).__name__}: {error}')}"
                        ) from None
                    finally:
                        usage.latency_s += time.monotonic() - started
                    if response.status_code in fail_fast_statuses:
                        raise StatusRejected(response.status_code)
                    if response.status_code != 200:
                        raise self.error_for(response)
                    try:
                        data = response.json()
                        if validate is not None:
                            validate(data)
                    except (json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError):
                        raise JudgeTransientError(
                            f"malformed response body from {self.base_url}"
                        ) from None
                    answer: dict[str, Any] = data
                    return answer
            except JudgeTransientError as error:
                if attempt >= self.max_retries:
                    raise JudgeTransientError(
                        f"{error} (gave up after {attempt + 1} attempts)"
                    ) from None
                backoff = min(MAX_BACKOFF_S, 0.5 * 2**attempt) * random.uniform(0.5, 1.0)
                await asyncio.sleep(max(backoff, error.retry_after or 0.0))
                attempt += 1
                usage.retries += 1


def endpoint_client(
    config: EndpointSettings,
    *,
    env_prefix: str = "RAGMETER_JUDGE",
    transport: httpx.AsyncBaseTransport | None = None,
) -> EndpointClient:
    """A client for ``config``'s endpoint, under the process-wide limiter of that endpoint."""
    limiter = limiter_for(
        config.identity,
        LimitSettings(config.max_concurrency, config.requests_per_minute, config.tokens_per_minute),
    )
    return EndpointClient(
        base_url=config.base_url,
        api_key=config.api_key,
        model=config.model,
        timeout_s=config.timeout_s,
        max_retries=config.max_retries,
        limiter=limiter,
        env_prefix=env_prefix,
        transport=transport,
    )
