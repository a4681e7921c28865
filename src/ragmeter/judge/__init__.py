"""The judge layer: every LLM call in ragmeter goes through here."""

from typing import TYPE_CHECKING

from ragmeter import _lazy

if TYPE_CHECKING:
    from ragmeter._services import Cache as Cache
    from ragmeter._services import EndpointClient as EndpointClient
    from ragmeter._services import EndpointConfig as EndpointConfig
    from ragmeter._services import EndpointLimits as EndpointLimits
    from ragmeter._services import EndpointUnavailableError as EndpointUnavailableError
    from ragmeter._services import JudgeConfigError as JudgeConfigError
    from ragmeter._services import JudgeError as JudgeError
    from ragmeter._services import JudgeTransientError as JudgeTransientError
    from ragmeter._services import Limiter as Limiter
    from ragmeter._services import LimitSettings as LimitSettings
    from ragmeter._services import MemoryCache as MemoryCache
    from ragmeter._services import Message as Message
    from ragmeter._services import NullCache as NullCache
    from ragmeter._services import SQLiteCache as SQLiteCache
    from ragmeter._services import Usage as Usage
    from ragmeter._services import UsageLedger as UsageLedger
    from ragmeter._services import cache_key as cache_key
    from ragmeter._services import endpoint_client as endpoint_client
    from ragmeter._services import estimate_tokens as estimate_tokens
    from ragmeter._services import limiter_for as limiter_for
    from ragmeter.judge._anthropic import ANTHROPIC_PRICES as ANTHROPIC_PRICES
    from ragmeter.judge._anthropic import AnthropicConfig as AnthropicConfig
    from ragmeter.judge._anthropic import AnthropicJudge as AnthropicJudge
    from ragmeter.judge._anthropic import anthropic_key_for as anthropic_key_for
    from ragmeter.judge._base import Judge as Judge
    from ragmeter.judge._calibration import (
        DEFAULT_CALIBRATION_ROOT as DEFAULT_CALIBRATION_ROOT,
    )
    from ragmeter.judge._calibration import CalibrationError as CalibrationError
    from ragmeter.judge._calibration import CrossValidation as CrossValidation
    from ragmeter.judge._calibration import Scores as Scores
    from ragmeter.judge._calibration import TaskCalibration as TaskCalibration
    from ragmeter.judge._calibration import TaskValidation as TaskValidation
    from ragmeter.judge._calibration import VerdictCalibration as VerdictCalibration
    from ragmeter.judge._calibration import cross_validated as cross_validated
    from ragmeter.judge._calibration import fit_calibration as fit_calibration
    from ragmeter.judge._calibration import fit_isotonic as fit_isotonic
    from ragmeter.judge._calibration import fit_logistic as fit_logistic
    from ragmeter.judge._calibration import judge_identity as judge_identity
    from ragmeter.judge._calibration import list_calibrations as list_calibrations
    from ragmeter.judge._calibration import load_calibration as load_calibration
    from ragmeter.judge._calibration import save_calibration as save_calibration
    from ragmeter.judge._calibration import verdict_scores as verdict_scores
    from ragmeter.judge._config import PROVIDERS as PROVIDERS
    from ragmeter.judge._config import JudgeConfig as JudgeConfig
    from ragmeter.judge._config import Price as Price
    from ragmeter.judge._config import env_settings as env_settings
    from ragmeter.judge._default import default_judge as default_judge
    from ragmeter.judge._default import judge_config as judge_config
    from ragmeter.judge._default import make_cache as make_cache
    from ragmeter.judge._endpoint import ChatJudge as ChatJudge
    from ragmeter.judge._endpoint import EndpointJudge as EndpointJudge
    from ragmeter.judge._endpoint import Reply as Reply
    from ragmeter.judge._errors import JudgeOutputError as JudgeOutputError
    from ragmeter.judge._errors import JudgeTruncatedError as JudgeTruncatedError
    from ragmeter.judge._litellm import LiteLLMConfig as LiteLLMConfig
    from ragmeter.judge._litellm import LiteLLMJudge as LiteLLMJudge
    from ragmeter.judge._local import LocalJudge as LocalJudge
    from ragmeter.judge._models import LocalModelIntegrityError as LocalModelIntegrityError
    from ragmeter.judge._models import LocalModelMissingError as LocalModelMissingError
    from ragmeter.judge._models import model_path as model_path
    from ragmeter.judge._openai import OpenAIJudge as OpenAIJudge
    from ragmeter.judge._parse import extract_json as extract_json
    from ragmeter.judge._parse import parse_output as parse_output
    from ragmeter.judge._parse import repair_request as repair_request
    from ragmeter.judge._parse import repaired_answers as repaired_answers
    from ragmeter.judge._parse import verdict_probabilities as verdict_probabilities
    from ragmeter.judge._prices import DEFAULT_PRICES as DEFAULT_PRICES
    from ragmeter.judge._prices import PriceTable as PriceTable
    from ragmeter.judge._providers import register_provider as register_provider
    from ragmeter.judge._types import BinaryVerdict as BinaryVerdict
    from ragmeter.judge._types import Judgment as Judgment
    from ragmeter.judge._types import OutputT as OutputT
    from ragmeter.judge._types import TextLikelihood as TextLikelihood

_lazy.attach(__name__, __file__)
