"""tests/_integrations.require: an optional library's tests skip where it is missing, and
fail instead where CI installed the extras (RAGMETER_REQUIRE_INTEGRATIONS=1)."""

from __future__ import annotations

import json

import pytest

from tests._integrations import require

MISSING = "ragmeter_no_such_module"


def test_an_installed_module_is_returned(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RAGMETER_REQUIRE_INTEGRATIONS", "1")
    assert require("json", "none") is json


def test_a_missing_module_skips_saying_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("RAGMETER_REQUIRE_INTEGRATIONS", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"pip install 'ragmeter\[extra\]'"):
        require(MISSING, "extra")
    monkeypatch.setenv("RAGMETER_REQUIRE_INTEGRATIONS", "0")
    with pytest.raises(pytest.skip.Exception, match=MISSING):
        require(MISSING, "extra")


def test_a_missing_module_fails_where_integrations_are_required(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv("RAGMETER_REQUIRE_INTEGRATIONS", "1")
    with pytest.raises(
        pytest.fail.Exception,
        match=r"RAGMETER_REQUIRE_INTEGRATIONS=1 but ragmeter_no_such_module is not installed",
    ):
        require(MISSING, "extra")
