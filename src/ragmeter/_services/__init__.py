"""The services that the judge, the embeddings and the rest of ragmeter share: the cache,
the usage ledger, the HTTP client of OpenAI-compatible endpoints and its limits, the shared
value types and errors, and :func:`run_sync`. Private to ragmeter: other packages import
these names from here, users from :mod:`ragmeter.judge` / :mod:`ragmeter.embed`."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._services._cache import Cache as Cache
    from ragmeter._services._cache import MemoryCache as MemoryCache
    from ragmeter._services._cache import NullCache as NullCache
    from ragmeter._services._cache import SQLiteCache as SQLiteCache
    from ragmeter._services._cache import cache_key as cache_key
    from ragmeter._services._config import PROVIDER_URLS as PROVIDER_URLS
    from ragmeter._services._config import openai_key_for as openai_key_for
    from ragmeter._services._config import preset_named as preset_named
    from ragmeter._services._config import read_table as read_table
    from ragmeter._services._endpoint import EndpointConfig as EndpointConfig
    from ragmeter._services._endpoint import EndpointLimits as EndpointLimits
    from ragmeter._services._endpoint import OpenAICompatible as OpenAICompatible
    from ragmeter._services._endpoint import settings_error as settings_error
    from ragmeter._services._errors import EndpointUnavailableError as EndpointUnavailableError
    from ragmeter._services._errors import JudgeConfigError as JudgeConfigError
    from ragmeter._services._errors import JudgeError as JudgeError
    from ragmeter._services._errors import JudgeTransientError as JudgeTransientError
    from ragmeter._services._files import check_regular_file as check_regular_file
    from ragmeter._services._files import read_settings as read_settings
    from ragmeter._services._files import replaced_atomically as replaced_atomically
    from ragmeter._services._gc import fewer_collections as fewer_collections
    from ragmeter._services._http import EndpointClient as EndpointClient
    from ragmeter._services._http import StatusRejected as StatusRejected
    from ragmeter._services._http import endpoint_client as endpoint_client
    from ragmeter._services._http import endpoint_limiter as endpoint_limiter
    from ragmeter._services._http import error_of as error_of
    from ragmeter._services._http import retry_after_seconds as retry_after_seconds
    from ragmeter._services._http import send_once as send_once
    from ragmeter._services._http import status_error as status_error
    from ragmeter._services._http import wait_asked as wait_asked
    from ragmeter._services._http import with_retries as with_retries
    from ragmeter._services._limits import Breaker as Breaker
    from ragmeter._services._limits import Limiter as Limiter
    from ragmeter._services._limits import LimitSettings as LimitSettings
    from ragmeter._services._limits import limiter_for as limiter_for
    from ragmeter._services._limits import open_breakers as open_breakers
    from ragmeter._services._limits import reset_breakers as reset_breakers
    from ragmeter._services._limits import share_limits as share_limits
    from ragmeter._services._portable import Portable as Portable
    from ragmeter._services._redact import redact_secrets as redact_secrets
    from ragmeter._services._redact import redact_url as redact_url
    from ragmeter._services._sync import run_sync as run_sync
    from ragmeter._services._types import Message as Message
    from ragmeter._services._types import Usage as Usage
    from ragmeter._services._usage import UsageLedger as UsageLedger
    from ragmeter._services._usage import estimate_tokens as estimate_tokens

_lazy.attach(__name__, __file__)
