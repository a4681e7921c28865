"""Endpoint constants shared by the judge and embeddings configurations, and which
environment key an endpoint may be sent."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from ragmeter._services._files import read_settings
from ragmeter._services._redact import redact_url

#: The OpenAI API root: the default base URL of every OpenAI-compatible endpoint config.
OPENAI_BASE_URL = "https://api.openai.com/v1"

#: The API roots of known OpenAI-compatible providers, for the judge's presets and (some of
#: them) the embeddings': local servers at their default ports. Every one takes the key as
#: ``Authorization: Bearer``. Azure OpenAI has no fixed root: ``azure_endpoint`` says it.
PROVIDER_URLS: dict[str, str] = {
    "openai": OPENAI_BASE_URL,
    "gemini": "https://generativelanguage.googleapis.com/v1beta/openai",
    "openrouter": "https://openrouter.ai/api/v1",
    "deepseek": "https://api.deepseek.com/v1",
    "qwen": "https://dashscope.aliyuncs.com/compatible-mode/v1",
    "moonshot": "https://api.moonshot.cn/v1",
    "zhipu": "https://open.bigmodel.cn/api/paas/v4",
    "siliconflow": "https://api.siliconflow.cn/v1",
    # Volcengine Ark (火山方舟); the model is a model ID or an endpoint ID (ep-...)
    "volcengine": "https://ark.cn-beijing.volces.com/api/v3",
    # Baidu Qianfan (千帆) ModelBuilder, the OpenAI-compatible v2 API
    "qianfan": "https://qianfan.baidubce.com/v2",
    "ollama": "http://127.0.0.1:11434/v1",
    "vllm": "http://127.0.0.1:8000/v1",
    "llama.cpp": "http://127.0.0.1:8080/v1",
}


def openai_key_for(base_url: str, env: Mapping[str, str]) -> str | None:
    """``OPENAI_API_KEY`` when ``base_url`` is the endpoint that key belongs to: the one
    ``OPENAI_BASE_URL`` names, or OpenAI's own API when it is unset. ``None`` for any other
    endpoint: an OpenAI key is never sent to a server it was not made for.

    >>> env = {"OPENAI_API_KEY": "sk-x"}
    >>> openai_key_for("https://api.openai.com/v1/", env), openai_key_for("http://other/v1", env)
    ('sk-x', None)
    >>> openai_key_for("http://gw/v1", {**env, "OPENAI_BASE_URL": "http://gw/v1"})
    'sk-x'
    """
    key = env.get("OPENAI_API_KEY")
    if not key:
        return None
    home = env.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
    return key if base_url.strip().rstrip("/") == home.strip().rstrip("/") else None


def read_table(path: Path, section: str, *, what: str = "judge") -> dict[str, Any]:
    """The ``section`` table of a TOML or JSON settings file (or the whole file, when it has
    no such section), as a new dict; a ``ValueError`` naming the file when the file or the
    section is not a table."""
    data = read_settings(path, what=f"{what} settings file")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a table of {what} settings")
    table = data.get(section, data)
    if not isinstance(table, dict):
        raise ValueError(f"{path}: [{section}] is not a table")
    return dict(table)


# -- Azure OpenAI ----------------------------------------------------------------------------
#: Hosts of Azure OpenAI resources: they take the key in an ``api-key`` header, not as a
#: bearer token (a bearer token there is a Microsoft Entra ID token).
AZURE_HOST_SUFFIXES = (
    ".openai.azure.com",
    ".cognitiveservices.azure.com",
    ".services.ai.azure.com",
)
#: ``api_version`` values that mean Azure's v1 API (``{endpoint}/openai/v1``, no dated version).
AZURE_V1_VERSIONS = frozenset({"v1", "latest", "preview"})


def is_azure_url(url: str) -> bool:
    """Whether ``url`` is an Azure OpenAI resource's (by its host name).

    >>> is_azure_url("https://res.openai.azure.com/openai/v1")
    True
    >>> is_azure_url("https://api.openai.com/v1")
    False
    """
    host = (urlsplit(url.strip()).hostname or "").lower()
    return any(host.endswith(suffix) for suffix in AZURE_HOST_SUFFIXES)


def is_azure_v1(api_version: str | None) -> bool:
    """Whether ``api_version`` means Azure's v1 API (none given, ``v1``, ``latest``,
    ``preview``) rather than a dated one (``2024-10-21``)."""
    version = (api_version or "").strip().lower()
    return not version or version in AZURE_V1_VERSIONS


def azure_base_url(endpoint: str, deployment: str, api_version: str | None) -> str:
    """The API root of an Azure OpenAI deployment. Without ``api_version`` (or with ``v1``),
    Azure's v1 API, where the deployment name is the request's ``model``; with a dated
    version (``2024-10-21``), the deployment's own path and ``?api-version=``.

    >>> azure_base_url("https://res.openai.azure.com/", "judge", None)
    'https://res.openai.azure.com/openai/v1'
    >>> azure_base_url("https://res.openai.azure.com", "judge", "2024-10-21")
    'https://res.openai.azure.com/openai/deployments/judge?api-version=2024-10-21'
    """
    root = endpoint.strip().rstrip("/")
    for suffix in ("/openai/v1", "/openai"):  # the resource's root, however it was copied
        if root.lower().endswith(suffix):
            root = root[: -len(suffix)]
            break
    version = (api_version or "").strip()
    if is_azure_v1(version):
        query = "?api-version=preview" if version.lower() == "preview" else ""
        return f"{root}/openai/v1{query}"
    return f"{root}/openai/deployments/{quote(deployment, safe='')}?api-version={quote(version)}"


def resolve_azure(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` (a config's raw settings) with ``base_url`` and ``model`` filled in from
    ``azure_endpoint`` / ``azure_deployment`` / ``api_version``; unchanged without an
    ``azure_endpoint``. A ``ValueError`` when both a base URL and an Azure endpoint are given,
    or no deployment: which of them is meant cannot be guessed."""
    endpoint = values.get("azure_endpoint")
    if not endpoint:
        return values
    values = dict(values)
    if values.get("base_url"):
        raise ValueError(
            "give either azure_endpoint (with azure_deployment and, for the dated API, "
            "api_version) or base_url, not both"
        )
    deployment = values.get("azure_deployment") or values.get("model")
    if not deployment:
        raise ValueError(
            "azure_endpoint needs the deployment's name: set azure_deployment (or model)"
        )
    values.setdefault("azure_deployment", deployment)
    if not values.get("model"):
        values["model"] = deployment
    values["base_url"] = azure_base_url(str(endpoint), str(deployment), values.get("api_version"))
    return values


def preset_named(
    values: Mapping[str, Any], known: Iterable[str], env_prefix: str, *, kind: str = "provider"
) -> str | None:
    """The preset ``values`` name (``provider``) for its settings to be filled in: ``None``
    when they name none, or ``"azure"`` (whose settings are the Azure fields: it only checks
    that they are given). A ``ValueError`` for a preset not ``known`` (``kind`` names what
    it is in the message), or one given with an Azure endpoint."""
    provider = values.get("provider")
    if provider is None:
        return None
    if provider == "azure":
        if not values.get("azure_endpoint"):
            raise ValueError(
                "provider 'azure' needs azure_endpoint (https://NAME.openai.azure.com) and "
                f"azure_deployment ({env_prefix}_AZURE_ENDPOINT or AZURE_OPENAI_ENDPOINT, "
                f"{env_prefix}_AZURE_DEPLOYMENT or the model)"
            )
        return None
    names = list(known)
    if provider not in names:
        raise ValueError(f"unknown {kind} {provider!r}; known: {', '.join([*names, 'azure'])}")
    if values.get("azure_endpoint"):
        raise ValueError(f"provider {provider!r} and azure_endpoint name two different endpoints")
    return str(provider)


def azure_key_for(endpoint: str, env: Mapping[str, str]) -> str | None:
    """``AZURE_OPENAI_API_KEY`` when ``endpoint`` is the resource ``AZURE_OPENAI_ENDPOINT``
    names; ``None`` otherwise (a key goes only to the endpoint it was made for).

    >>> env = {"AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com/"}
    >>> azure_key_for("https://r.openai.azure.com", env)
    'k'
    >>> azure_key_for("https://other.openai.azure.com", env) is None
    True
    """
    key, home = env.get("AZURE_OPENAI_API_KEY"), env.get("AZURE_OPENAI_ENDPOINT")
    if not key or not home:
        return None
    return key if endpoint.strip().rstrip("/") == home.strip().rstrip("/") else None


# -- network: proxy, CA bundle, extra headers and query ----------------------------------------
_PROXY_SCHEMES = frozenset({"http", "https", "socks5", "socks5h"})
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: Headers ragmeter sets itself: an ``extra_headers`` entry may not replace them silently.
_OWN_HEADERS = frozenset({"content-type", "content-length", "host"})


def check_proxy(url: str | None) -> str | None:
    """``url`` when it can be a proxy (``http://``, ``https://``; ``socks5://`` with
    ``httpx[socks]`` installed); a ``ValueError`` naming the fix otherwise."""
    if url is None or not url.strip():
        return None
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in _PROXY_SCHEMES or not parts.hostname:
        raise ValueError(
            "proxy must be a URL such as http://proxy.example:3128 (or socks5://...); "
            f"got {redact_url(url)!r}"
        )
    if scheme.startswith("socks") and importlib.util.find_spec("socksio") is None:
        raise ValueError("a socks5 proxy needs httpx's socks support: pip install 'httpx[socks]'")
    return url.strip()


def check_ca_bundle(path: str | None) -> str | None:
    """``path`` when it is a readable file (a PEM bundle of CA certificates)."""
    if path is None or not str(path).strip():
        return None
    location = Path(str(path)).expanduser()
    if not location.is_file():
        raise ValueError(f"ca_bundle {str(path)!r} is not a file (a PEM file of CA certificates)")
    return str(location)


def check_extra_headers(headers: Mapping[str, Any]) -> dict[str, Any]:
    """``headers`` when every name is an HTTP token and no value holds a line break."""
    for name, value in headers.items():
        if not _HEADER_NAME.fullmatch(str(name)):
            raise ValueError(f"extra_headers: {name!r} is not a valid header name")
        if str(name).lower() in _OWN_HEADERS:
            raise ValueError(f"extra_headers: {name!r} is set by ragmeter itself")
        raw = value.get_secret_value() if hasattr(value, "get_secret_value") else str(value)
        if "\r" in raw or "\n" in raw:
            raise ValueError(f"extra_headers: the value of {name!r} holds a line break")
    return dict(headers)


def network_from_env(env: Mapping[str, str], prefix: str) -> dict[str, Any]:
    """``{prefix}_PROXY``, ``_CA_BUNDLE``, ``_TRUST_ENV`` (1/true/yes) and the JSON objects
    ``_EXTRA_HEADERS`` / ``_EXTRA_QUERY``, those that are set."""
    values: dict[str, Any] = {
        "proxy": env.get(f"{prefix}_PROXY") or None,
        "ca_bundle": env.get(f"{prefix}_CA_BUNDLE") or None,
    }
    trust = env.get(f"{prefix}_TRUST_ENV")
    if trust:
        values["trust_env"] = trust.strip().lower() in ("1", "true", "yes", "on")
    for name in ("EXTRA_HEADERS", "EXTRA_QUERY"):
        raw = env.get(f"{prefix}_{name}")
        if not raw:
            continue
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            parsed = None
        if not isinstance(parsed, dict):
            # the value is not shown: it holds secrets
            raise ValueError(f'{prefix}_{name} must be a JSON object, e.g. {{"X-Name": "value"}}')
        values[name.lower()] = {str(k): str(v) for k, v in parsed.items()}
    return values
