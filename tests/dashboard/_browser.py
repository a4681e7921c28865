"""Shared by the headless-browser tests: the dashboard served on a free port of 127.0.0.1,
and headless Chromium (Debian's chromium + chromedriver, through Selenium; the fixtures
``browser``, ``served`` and ``served_several`` are in conftest.py).
Skipped without chromedriver or selenium, unless RAGMETER_REQUIRE_BROWSER=1."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fastapi import FastAPI

REQUIRED = os.environ.get("RAGMETER_REQUIRE_BROWSER") == "1"


def skip_or_fail(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"RAGMETER_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@contextlib.contextmanager
def serving(app: FastAPI) -> Iterator[str]:
    """``app`` served on a free port of 127.0.0.1 while the block runs; yields its address."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            pytest.fail("the dashboard server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.contextmanager
def chromium_driver() -> Iterator[Any]:
    """Headless Chromium through Selenium while the block runs (skipped, or failed under
    RAGMETER_REQUIRE_BROWSER=1, when it is not installed)."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip_or_fail("selenium is not installed")
    driver_path = os.environ.get("RAGMETER_CHROMEDRIVER") or shutil.which("chromedriver")
    chromium = os.environ.get("RAGMETER_CHROMIUM") or shutil.which("chromium")
    if not driver_path or not chromium:
        skip_or_fail("chromium and chromedriver are not both installed")
    assert chromium is not None
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--no-first-run", "--disable-background-networking"):  # fmt: skip
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.set_page_load_timeout(30)
    driver.implicitly_wait(5)  # elements of a page that is still loading
    try:
        yield driver
    finally:
        driver.quit()


def wait_for_url(driver, fragment: str) -> None:
    """Clicks return before the next page loads: wait for its address."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(lambda d: fragment in d.current_url)


def wait_for_home(driver, base: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(lambda d: d.current_url == base + "/")
