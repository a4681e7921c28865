"""The dashboard end to end in headless Chromium (Debian's chromium + chromedriver, through
Selenium): the server runs on 127.0.0.1, the browser clicks through a run, a sample, a
comparison, the trends, the samples' filters and the language switch, and the charts are
checked in screenshots. Skipped without chromedriver or selenium, unless
RAGMETER_REQUIRE_BROWSER=1."""

from __future__ import annotations

from tests.dashboard._browser import wait_for_home, wait_for_url
from tests.dashboard._png import ink


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
    change = driver.find_element(By.ID, "paired").text
    assert "context_precision" in change and "faithfulness" in change
    driver.find_element(By.ID, "full-report").click()
    wait_for_url(driver, "/compare/report")
    assert "faithfulness" in driver.find_element(By.ID, "compare").text

    # filters
    driver.find_element(By.LINK_TEXT, "All runs").click()
    wait_for_home(driver, base)
    driver.find_element(By.ID, "filter-tag").send_keys("new")
    driver.find_element(By.ID, "filter").click()
    wait_for_url(driver, "tag=new")
    rows = driver.find_elements(By.CSS_SELECTOR, "table.runs tbody tr")
    assert [r.get_attribute("id") for r in rows] == [f"run-{second}"]


def assert_drawn(element: object, what: str, colours: int = 6, share: float = 0.02) -> None:
    """The element's screenshot has several colours and enough of them off the background."""
    png = element.screenshot_as_png  # type: ignore[attr-defined]
    found, inked = ink(png)
    assert found >= colours and inked >= share, (what, found, inked)


def test_the_trends_draw_each_metric_with_intervals_and_thresholds(served_several, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    base, ids = served_several
    driver = browser
    driver.set_window_size(1400, 1000)
    driver.get(base + "/")
    driver.find_element(By.LINK_TEXT, "Trends").click()
    wait_for_url(driver, "/trends")
    assert len(driver.find_elements(By.CSS_SELECTOR, "svg.trend-chart")) == 9
    assert "gate.toml" in driver.find_element(By.ID, "gate-source").text

    Select(driver.find_element(By.ID, "filter-metric")).select_by_value("flaky")
    driver.find_element(By.ID, "filter-name").send_keys("nightly")
    driver.find_element(By.ID, "filter").click()
    wait_for_url(driver, "metric=flaky")
    chart = driver.find_element(By.ID, "trend-flaky")
    assert chart.size["width"] > 300 and chart.size["height"] > 100
    assert len(chart.find_elements(By.CSS_SELECTOR, "circle.point")) == 3
    assert len(chart.find_elements(By.CSS_SELECTOR, "line.threshold")) == 2
    assert len(chart.find_elements(By.CSS_SELECTOR, "polygon.ci-band")) == 1
    assert_drawn(chart, "trend chart")

    # a point links to its run
    chart.find_elements(By.CSS_SELECTOR, "a")[-1].click()
    wait_for_url(driver, f"/runs/{ids[2]}")
    assert "release" in driver.find_element(By.ID, "record").text


def test_a_comparison_shows_the_changes_and_opens_a_changed_sample(served_several, browser):
    from selenium.webdriver.common.by import By

    base, ids = served_several
    driver = browser
    driver.set_window_size(1400, 1000)
    driver.get(base + "/")
    driver.find_element(By.CSS_SELECTOR, f'input[value="{ids[0]}"]').click()
    driver.find_element(By.CSS_SELECTOR, f'input[value="{ids[2]}"]').click()
    driver.find_element(By.ID, "compare").click()
    wait_for_url(driver, f"candidate={ids[2]}")
    paired = driver.find_element(By.ID, "paired")
    assert "flaky" in paired.text and "p (Holm)" in paired.text
    chart = driver.find_element(By.ID, "compare-chart")
    assert len(chart.find_elements(By.CSS_SELECTOR, "rect.delta-bar")) == 9
    assert_drawn(chart, "comparison chart", colours=4, share=0.01)

    changed = driver.find_elements(By.CSS_SELECTOR, "a.changed-sample")
    assert changed and changed[0].text == "q1"
    changed[0].click()
    wait_for_url(driver, f"/runs/{ids[2]}/samples/1")
    card = driver.find_element(By.CSS_SELECTOR, ".sample").text
    assert "法国的首都是哪里" in card and "flaky" in card


def test_samples_filter_and_sort_on_the_server(served_several, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    base, ids = served_several
    driver = browser
    driver.get(f"{base}/runs/{ids[1]}/samples")
    assert len(driver.find_elements(By.CSS_SELECTOR, "a.sample-page-link")) == 8

    Select(driver.find_element(By.ID, "filter-metric")).select_by_value("flaky")
    Select(driver.find_element(By.ID, "filter-status")).select_by_value("failed")
    driver.find_element(By.ID, "filter").click()
    wait_for_url(driver, "status=failed")
    links = driver.find_elements(By.CSS_SELECTOR, "a.sample-page-link")
    assert [a.text for a in links] == ["q1", "q3"]
    failed = driver.find_elements(By.CSS_SELECTOR, "tr.sample-row td.status-failed")
    assert [td.text for td in failed] == ["failed", "failed"]

    driver.get(f"{base}/runs/{ids[1]}/samples")
    driver.find_element(By.ID, "filter-q").send_keys("首都")
    driver.find_element(By.ID, "filter").click()
    wait_for_url(driver, "q=")
    assert [a.text for a in driver.find_elements(By.CSS_SELECTOR, "a.sample-page-link")] == ["q1"]

    driver.get(f"{base}/runs/{ids[1]}/samples")
    driver.find_element(By.ID, "sort-flaky").click()
    wait_for_url(driver, "sort=flaky")
    driver.find_element(By.ID, "sort-flaky").click()  # again: descending
    wait_for_url(driver, "order=desc")
    rows = driver.find_elements(By.CSS_SELECTOR, "tr.sample-row")
    scores = [r.find_elements(By.TAG_NAME, "td")[-1].text for r in rows]
    numbers = [float(s) for s in scores[:5]]
    assert numbers == sorted(numbers, reverse=True) and numbers[0] > numbers[-1]
    assert sorted(scores[5:]) == ["failed", "failed", "n/a"]


def test_the_language_switch_turns_the_pages_chinese_and_stays(served_several, browser):
    from selenium.webdriver.common.by import By

    base, ids = served_several
    driver = browser
    driver.get(base + "/")
    assert driver.find_element(By.TAG_NAME, "h1").text == "Runs"
    driver.find_element(By.ID, "lang-zh").click()
    wait_for_url(driver, "lang=zh")
    assert driver.find_element(By.TAG_NAME, "h1").text == "运行"
    assert "对比勾选的两个运行" in driver.find_element(By.ID, "compare").text
    driver.find_element(By.LINK_TEXT, "趋势").click()  # the cookie keeps the choice
    wait_for_url(driver, "/trends")
    assert driver.find_element(By.TAG_NAME, "h1").text == "趋势"
    driver.get(f"{base}/runs/{ids[1]}/samples?status=failed")
    assert "失败" in driver.find_element(By.CSS_SELECTOR, "td.status-failed").text
    driver.find_element(By.ID, "lang-en").click()
    wait_for_url(driver, "lang=en")
    assert "status=failed" in driver.current_url
    assert driver.find_element(By.CSS_SELECTOR, "td.status-failed").text == "failed"


def test_the_runs_table_with_nine_metrics_fits_a_1400_pixel_window(served_several, browser):
    from selenium.webdriver.common.by import By

    base, _ = served_several
    driver = browser
    driver.set_window_size(1400, 900)
    driver.get(base + "/")
    assert len(driver.find_elements(By.CSS_SELECTOR, "table.runs thead th.num")) == 9
    page_width = driver.execute_script("return document.documentElement.scrollWidth")
    window_width = driver.execute_script("return document.documentElement.clientWidth")
    assert page_width <= window_width, (page_width, window_width)
    container = driver.find_element(By.CSS_SELECTOR, "div.scroll")
    main = driver.find_element(By.TAG_NAME, "main")
    right = container.location["x"] + container.size["width"]
    assert right <= main.location["x"] + main.size["width"]
