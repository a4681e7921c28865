"""The settings every endpoint config shares (the OpenAI-compatible and Anthropic judges,
LiteLLM, the embeddings): where the endpoint is, its key, its limits, the Azure and network
settings of OpenAI-compatible endpoints; their validators, how a config is shown (never a
secret) and where a key may come from (a settings file's ``api_key_env``, the environment).

The configs compose these classes as bases, so each one's fields keep their order: the
base's fields first (``model``, ``base_url``, ``api_key``), then each base's in turn
(the config's own in between), the Azure and network settings last."""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticUndefined

from ragmeter._services._config import (
    OPENAI_BASE_URL,
    azure_key_for,
    check_ca_bundle,
    check_extra_headers,
    check_proxy,
    is_azure_v1,
    network_from_env,
    openai_key_for,
    read_table,
    resolve_azure,
)
from ragmeter._services._http import DEFAULT_MAX_RETRY_WAIT_S, check_base_url
from ragmeter._services._limits import DEFAULT_BREAKER_FAILURES, DEFAULT_BREAKER_SILENCE_S
from ragmeter._services._redact import redact_url

#: Fields holding a URL, shown without credentials.
_URL_FIELDS = frozenset({"base_url", "proxy", "azure_endpoint"})
#: Fields whose values are secrets, shown by their names only.
_NAMES_ONLY = frozenset({"extra_headers", "extra_query"})
#: What a settings file holding a literal key is warned about.
_LITERAL_KEY = (
    "keys in files end up in version control and backups; put the key in an environment "
    "variable and name it with api_key_env"
)


class EndpointConfig(BaseModel):
    """Where an endpoint is and its key: the base of every endpoint config."""

    # hide_input_in_errors: a rejected value (a URL, a key) may hold a secret
    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    model: str
    base_url: str = OPENAI_BASE_URL
    api_key: SecretStr | None = None

    #: Fields :meth:`describe` leaves out (a subclass shows them its own way).
    _hidden: ClassVar[frozenset[str]] = frozenset()

    @field_validator("base_url")
    @classmethod
    def _base_url_is_a_url(cls, value: str | None) -> str | None:
        return None if value is None else check_base_url(value)

    @property
    def identity(self) -> str:
        """The endpoint (without credentials) and model: what cache entries and rate limits
        belong to."""
        return f"{redact_url(self.base_url).rstrip('/')}|{self.model}"

    def describe(self) -> dict[str, Any]:
        """For run records and reports: everything but the key, and the base URL without
        credentials."""
        data = self.model_dump(exclude={"api_key", *self._hidden}, mode="json")
        data["base_url"] = redact_url(self.base_url) if self.base_url else None
        data["api_key_set"] = self.api_key is not None
        return data

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            if name in _URL_FIELDS and isinstance(value, str):
                yield name, redact_url(value)
            elif name in _NAMES_ONLY and isinstance(value, dict):
                yield name, sorted(value)
            else:
                yield name, value

    @staticmethod
    def file_settings(
        path: Path,
        section: str,
        overrides: Mapping[str, Any],
        *,
        literal: Callable[[dict[str, Any]], list[str]] | None = None,
        advice: str = "",
        provider: str | None = None,
    ) -> dict[str, Any]:
        """A settings file's ``section`` with ``overrides`` that are not ``None`` winning.
        The key comes only from the variable ``api_key_env`` names (an error when it is
        unset): a file chooses the endpoint, so a key in the environment, meant for another
        one, is never sent to it. A literal key in the file (``literal``: the secret settings
        a file holds, by default ``api_key`` when set) is used, with a warning (``advice``
        added: then it speaks of secrets, not keys). A provider's own config names it as
        ``provider``: the file's ``provider``, when it has one, must be that name, and is
        taken out, an override too (the OpenAI-compatible config keeps it: a preset)."""
        data = read_table(path, section)
        if provider is not None:
            named = data.pop("provider", provider)
            if named != provider:
                raise ValueError(f"{path}: provider is {named!r}, not {provider!r}")
            overrides = {k: v for k, v in overrides.items() if k != "provider"}
        found = literal(data) if literal else (["api_key"] if data.get("api_key") else [])
        if found:
            said = f"secrets{_LITERAL_KEY[len('keys') :]}{advice}" if advice else _LITERAL_KEY
            warnings.warn(
                f"{path} holds a literal {', '.join(found)}: {said}", UserWarning, stacklevel=3
            )
        data.update({k: v for k, v in overrides.items() if v is not None})
        key_env = data.pop("api_key_env", None)
        if key_env:
            if not os.environ.get(key_env):
                raise ValueError(f"{path}: api_key_env names {key_env!r}, which is not set")
            data["api_key"] = os.environ[key_env]
        return data


class EndpointLimits(EndpointConfig):
    """How long one request may take, how often it is retried and how many run at once."""

    #: Seconds for one request, all of it: connecting, sending and the whole answer.
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=5, ge=0)
    #: The longest wait a ``Retry-After`` answer is obeyed for before the next attempt.
    max_retry_wait_s: float = Field(default=DEFAULT_MAX_RETRY_WAIT_S, ge=0)
    max_concurrency: int = Field(default=16, gt=0)
    #: Failed calls in a row (timeouts, 5xx, dropped connections) that stop a run (its
    #: breaker opens), or at least two across ``breaker_silence_s`` seconds without an answer.
    breaker_failures: int = Field(default=DEFAULT_BREAKER_FAILURES, ge=1)
    breaker_silence_s: float = Field(default=DEFAULT_BREAKER_SILENCE_S, gt=0)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)


class OpenAICompatible(EndpointConfig):
    """An OpenAI-compatible endpoint's Azure and network settings (last among the fields),
    and where its key may come from."""

    #: Azure OpenAI: the resource (``https://NAME.openai.azure.com``) and deployment. Without
    #: ``api_version`` the v1 API (``{endpoint}/openai/v1``, the deployment as the model);
    #: with a dated one (``2024-10-21``), ``{endpoint}/openai/deployments/{deployment}``.
    #: The key goes in an ``api-key`` header.
    azure_endpoint: str | None = None
    azure_deployment: str | None = None
    api_version: str | None = None
    #: The variable holding a Microsoft Entra ID token, sent as ``Authorization: Bearer``.
    azure_ad_token_env: str | None = None
    #: An HTTP(S) proxy for this endpoint only (``http://user:pw@proxy:3128``).
    proxy: Annotated[str | None, AfterValidator(check_proxy)] = None
    #: A PEM file of CA certificates to verify the endpoint with (a corporate CA).
    ca_bundle: Annotated[str | None, AfterValidator(check_ca_bundle)] = None
    #: Whether HTTPS_PROXY / ALL_PROXY / NO_PROXY and SSL_CERT_FILE apply: off by default, so
    #: a proxy set for other tools does not carry this endpoint's traffic unless asked.
    trust_env: bool = False
    #: Sent with every request; the values are secrets (never shown, only the names).
    extra_headers: Annotated[dict[str, SecretStr], AfterValidator(check_extra_headers)] = Field(
        default_factory=dict
    )
    extra_query: dict[str, SecretStr] = Field(default_factory=dict)

    @classmethod
    def _preset(cls, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with what a ``provider`` preset fills in."""
        return values

    @model_validator(mode="before")
    @classmethod
    def _presets(cls, data: Any) -> Any:
        """A ``provider`` fills in the base URL and its settings; an ``azure_endpoint`` the
        base URL (and the model, from the deployment)."""
        if isinstance(data, dict):
            data = resolve_azure(cls._preset(data))
        return data

    @property
    def identity(self) -> str:
        """The endpoint (without credentials) and model: what cache entries and rate limits
        belong to; on Azure the deployment too, when its name is not the model's."""
        identity = f"{redact_url(self.base_url).rstrip('/')}|{self.model}"
        if self.azure_deployment and self.azure_deployment != self.model:
            identity += f"|{self.azure_deployment}"
        return identity

    @property
    def request_model(self) -> str:
        """The ``model`` a request names: on Azure's v1 API the deployment (Azure routes by
        it), elsewhere the model (the dated API routes by the URL and ignores it)."""
        if self.azure_endpoint and self.azure_deployment and is_azure_v1(self.api_version):
            return self.azure_deployment
        return self.model

    def describe(self) -> dict[str, Any]:
        """For run records and reports: everything but the key, the base URL and proxy
        without credentials, and only the names of the extra headers and query parameters."""
        data = super().describe()
        data.update(
            proxy=None if self.proxy is None else redact_url(self.proxy),
            ca_bundle=self.ca_bundle,
            trust_env=self.trust_env,
            extra_headers=sorted(self.extra_headers),
            extra_query=sorted(self.extra_query),
        )
        if self.azure_endpoint is not None:
            data["azure_endpoint"] = redact_url(self.azure_endpoint)
        return data

    @staticmethod
    def env_reader(env: Mapping[str, str], prefix: str) -> Callable[[str], str | None]:
        """Reads ``{prefix}_NAME`` from ``env``: an empty variable reads as unset."""
        return lambda name: env.get(f"{prefix}_{name}") or None

    @classmethod
    def env_values(
        cls,
        values: dict[str, Any],
        env: Mapping[str, str],
        prefix: str,
        azure: str | None,
        overrides: Mapping[str, Any],
    ) -> dict[str, Any]:
        """``values`` read from the environment, with its ``{prefix}_AZURE_*`` and network
        settings (``azure``: the Azure endpoint already chosen), ``overrides`` that are not
        ``None`` winning, the provider preset applied and, when an Azure endpoint names no
        model, the deployment as the model; settings that are ``None`` left out. With
        provider ``azure``, the openai SDK's ``AZURE_OPENAI_ENDPOINT`` and
        ``OPENAI_API_VERSION`` where the ``{prefix}_*`` variables give none (the model is
        the deployment when none is named)."""
        own = cls.env_reader(env, prefix)
        values = {
            **values,
            "azure_endpoint": azure,
            "azure_deployment": own("AZURE_DEPLOYMENT"),
            "api_version": own("API_VERSION"),
            "azure_ad_token_env": own("AZURE_AD_TOKEN_ENV"),
            **network_from_env(env, prefix),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values.get("provider") == "azure":
            # the openai SDK's own variables, as LangChain's AzureChatOpenAI reads them; the
            # {prefix}_* ones win (the key: with_env_key, for AZURE_OPENAI_ENDPOINT's resource)
            values["azure_endpoint"] = values.get("azure_endpoint") or env.get(
                "AZURE_OPENAI_ENDPOINT"
            )
            values["api_version"] = values.get("api_version") or env.get("OPENAI_API_VERSION")
        values = cls._preset({k: v for k, v in values.items() if v is not None})
        if values.get("azure_endpoint") and not values.get("model"):
            values = {**values, "model": values.get("azure_deployment")}
            values = {k: v for k, v in values.items() if v is not None}
        return values

    @staticmethod
    def with_env_key(values: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
        """``values`` with the environment's key when they name none and the endpoint is the
        one it belongs to: ``OPENAI_API_KEY`` for ``OPENAI_BASE_URL`` (or OpenAI's API when
        that is unset), ``AZURE_OPENAI_API_KEY`` for the resource ``AZURE_OPENAI_ENDPOINT``
        names; never for another endpoint."""
        if "api_key" in values:
            return values
        if values.get("azure_endpoint"):
            key = azure_key_for(values["azure_endpoint"], env)
        else:
            key = openai_key_for(values.get("base_url", OPENAI_BASE_URL), env)
        return {**values, "api_key": key} if key else values


def settings_error(
    error: ValidationError,
    config: type[BaseModel],
    *,
    where: str,
    name: Callable[[str], str] = repr,
    extra_keys: tuple[str, ...] = (),
) -> ValueError:
    """``error`` (a config that refused its settings) said for people: ``where`` the settings
    came from (a file, the environment), each wrong setting by its ``name`` there (a file's
    key, a variable), what is wrong with it and the fix: for an unknown key the closest
    allowed one and every allowed key (``config``'s fields and ``extra_keys``), for a wrong
    value the type wanted and the default. Never a value (it may be a secret), never
    pydantic's links."""
    allowed = sorted({*config.model_fields, *extra_keys})
    lines = []
    for found in error.errors(include_url=False, include_input=False):
        loc = [str(part) for part in found["loc"]]
        key = ".".join(loc)
        named = name(key) if key else "the settings"
        if found["type"] == "extra_forbidden" and len(loc) == 1:
            close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            lines.append(
                f"{named} is not a setting"
                + (f": did you mean {name(close[0])}?" if close else ".")
                + f" The settings are {', '.join(allowed)}"
            )
            continue
        message = str(found["msg"]).removeprefix("Value error, ")
        if found["type"] == "missing":
            lines.append(f"{named} is missing: set it")
            continue
        field = config.model_fields.get(loc[0]) if loc else None
        default = None if field is None else field.default
        fix = (
            f" (the default is {default!r})"
            if len(loc) == 1
            and default not in (None, PydanticUndefined)
            and not isinstance(default, dict | list)
            else ""
        )
        lines.append(f"{named}: {message}{fix}" if key else message)  # no key: the whole
    if len(lines) == 1:
        return ValueError(f"{where}: {lines[0]}")
    return ValueError(
        f"{where}: {len(lines)} settings are wrong:\n" + "\n".join(f"  - {line}" for line in lines)
    )
