"""Optional integrations (LangChain, LlamaIndex, MLflow, W&B) in tests: one rule for all.

A test module calls ``require("langchain_core", "langchain")`` at its top. When the library is
missing the module is skipped with the ``pip install`` that brings it, unless
``RAGMETER_REQUIRE_INTEGRATIONS=1`` (as in CI, which installs the extras): then a missing
library fails the run, so that a broken install cannot pass as a green, all-skipped suite.
"""

from __future__ import annotations

import importlib
import os
import types

import pytest

REQUIRE_VARIABLE = "RAGMETER_REQUIRE_INTEGRATIONS"


def require(module: str, extra: str) -> types.ModuleType:
    """The imported ``module``; skips the calling test module when it cannot be imported,
    or fails it when ``RAGMETER_REQUIRE_INTEGRATIONS=1``."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        reason = f"{module} is not installed ({error}): pip install 'ragmeter[{extra}]'"
        if os.environ.get(REQUIRE_VARIABLE) == "1":
            pytest.fail(f"{REQUIRE_VARIABLE}=1 but {reason}", pytrace=False)
        pytest.skip(reason, allow_module_level=True)
