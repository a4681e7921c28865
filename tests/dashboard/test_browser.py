"""The dashboard end to end in headless Chromium (Debian's chromium + chromedriver, through
Selenium): the server runs on 127.0.0.1, the browser clicks through a run, a sample and a
comparison. Skipped without chromedriver or selenium, unless RAGMETER_REQUIRE_BROWSER=1."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from ragmeter.dashboard import create_app

REQUIRED = os.environ.get("RAGMETER_REQUIRE_BROWSER") == "1"


def _skip_or_fail(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"RAGMETER_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture
def served(populated) -> Iterator[tuple[str, list[str]]]:
    import uvicorn

    store, ids = populated
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(store), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline:
            pytest.fail("the dashboard server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}", ids
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def browser() -> Iterator[object]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _skip_or_fail("selenium is not installed")
    driver_path = os.environ.get("RAGMETER_CHROMEDRIVER") or shutil.which("chromedriver")
    chromium = os.environ.get("RAGMETER_CHROMIUM") or shutil.which("chromium")
    if not driver_path or not chromium:
        _skip_or_fail("chromium and chromedriver are not both installed")
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


def test_clicking_through_a_run_a_sample_and_a_comparison(served, browser):
    from selenium.webdriver.common.by import By

    base, (first, second) = served
    driver = browser
    driver.get(base + "/")
    assert driver.title == "ragmeter runs"
    rows = driver.find_elements(By.CSS_SELECTOR, "table.runs tbody tr")
    assert len(rows) == 2 and "reranked" in rows[0].text and "top_k=8" in rows[0].text

    # a run: its record, summary and diagnosis, then every sample and one sample's page
    driver.find_element(By.LINK_TEXT, "baseline").click()
    wait_for_url(driver, f"/runs/{first}")
    record = driver.find_element(By.ID, "record").text
    assert "top_k=5" in record and "baseline" in record
    summary = driver.find_element(By.ID, "summary").text
    assert "faithfulness" in summary and "context_precision" in summary
    driver.find_element(By.LINK_TEXT, "All samples").click()
    wait_for_url(driver, "/samples")
    links = driver.find_elements(By.CSS_SELECTOR, "a.sample-page-link")
    assert len(links) == 6
    links[0].click()
    wait_for_url(driver, "/samples/0")
    card = driver.find_element(By.CSS_SELECTOR, ".sample").text
    assert "AirPods Pro 2" in card and "faithfulness" in card
    driver.find_element(By.LINK_TEXT, "next →").click()
    wait_for_url(driver, f"/runs/{first}/samples/1")

    # a comparison: tick both runs; the older is the baseline
    driver.find_element(By.LINK_TEXT, "All runs").click()
    wait_for_home(driver, base)
    driver.find_element(By.CSS_SELECTOR, f'input[value="{first}"]').click()
    driver.find_element(By.CSS_SELECTOR, f'input[value="{second}"]').click()
    driver.find_element(By.ID, "compare").click()
    wait_for_url(driver, f"base={first}")
    assert "top_k: 5 → 8" in driver.find_element(By.ID, "record").text
    change = driver.find_element(By.ID, "compare").text
    assert "context_precision" in change and "faithfulness" in change

    # filters
    driver.find_element(By.LINK_TEXT, "All runs").click()
    wait_for_home(driver, base)
    driver.find_element(By.ID, "filter-tag").send_keys("new")
    driver.find_element(By.ID, "filter").click()
    wait_for_url(driver, "tag=new")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.runs tbody tr")
    assert [r.get_attribute("id") for r in rows] == [f"run-{second}"]
