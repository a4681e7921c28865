"""Labelling end to end in headless Chromium: a labeller opens /label from a run's page,
gives their name, labels 20 items with the keyboard and the buttons, and the agreement
panel updates after each label; the labels are in the run store with who and when."""

from __future__ import annotations

from ragmeter.store import sample_key
from tests.dashboard._browser import wait_for_url

METRIC = "context_precision"


def _wait(driver, condition, seconds: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(condition)


def test_a_labeller_labels_20_items_and_sees_the_agreement_update(populated, served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, _ = populated
    base, (first, _second) = served
    driver = browser
    result = store.load(first)
    verdicts = {  # what the judge said of each context, by (sample_key, index)
        (sample_key(s.sample), c.rank - 1): c.verdict
        for s in result
        for c in s.scores[METRIC].details.contexts
    }

    # the run's page says the metric is not validated yet, and links to label it
    driver.get(f"{base}/runs/{first}")
    row = driver.find_element(By.CSS_SELECTOR, f'#validation li[data-metric="{METRIC}"]')
    assert "not validated on your data" in row.text
    row.find_element(By.LINK_TEXT, "label").click()
    wait_for_url(driver, "/label?")
    assert "skip" in driver.find_element(By.ID, "shortcuts").text
    agreement = driver.find_element(By.ID, "agreement")
    _wait(driver, lambda d: agreement.get_attribute("data-labels") == "0")
    assert agreement.text.strip() == "not validated on your data"

    # without a name, a label is refused and nothing is kept
    position = driver.find_element(By.ID, "position")
    _wait(driver, lambda d: "item 1 of 20" in position.text)
    driver.find_element(By.TAG_NAME, "body").send_keys("y")
    _wait(driver, lambda d: "name" in d.find_element(By.ID, "message").text)
    assert store.labels() == []

    driver.find_element(By.ID, "labeller").send_keys("alice", Keys.TAB)
    # a context is labelled yes / no: the score and preference buttons are not shown
    assert driver.find_element(By.ID, "yes").is_displayed()
    assert not driver.find_element(By.ID, "score-1").is_displayed()
    assert not driver.find_element(By.ID, "prefer-a").is_displayed()
    disagreed = 0
    for number in range(1, 21):
        _wait(driver, lambda d, n=number: f"item {n} of 20" in position.text)
        shown = driver.find_element(By.ID, "item").text
        assert "question" in shown and "the judge says" in shown and "P(yes)" in shown
        current = driver.find_element(By.CSS_SELECTOR, "#item li.current").text
        assert current  # the context being labelled is marked among the contexts
        sample_id = position.text.split(" · ")[1]
        found = next(s for s in result if s.sample_id == sample_id)
        index = found.sample.retrieved_contexts.index(current)
        judge = verdicts[(sample_key(found.sample), index)]
        agree = number % 4 != 0  # every fourth label corrects the judge
        disagreed += not agree
        say_yes = judge if agree else not judge
        if number % 2:
            driver.find_element(By.TAG_NAME, "body").send_keys("y" if say_yes else "n")
        else:
            driver.find_element(By.ID, "yes" if say_yes else "no").click()
        _wait(driver, lambda d, n=number: agreement.get_attribute("data-labels") == str(n))
        assert f"on {number} of your labels" in agreement.text

    assert "validated on 20 of your labels (context level): kappa" in agreement.text
    kept = store.labels(metric=METRIC)
    assert len(kept) == 20 and {k.labeller for k in kept} == {"alice"}
    assert all(k.level == "context" and k.created_at is not None for k in kept)
    wrong = sum(k.value != verdicts[(k.sample_key, k.item)] for k in kept)
    assert wrong == disagreed == 5
    # the panel's figures: accuracy 15/20 and the confusion matrix's cells add up to 20
    level = agreement.find_element(By.CSS_SELECTOR, '.level[data-level="context"]')
    assert "accuracy" in level.text and "0.750" in level.text
    cells = level.find_elements(By.CSS_SELECTOR, "table")[1].find_elements(By.TAG_NAME, "td")
    assert sum(int(c.text) for c in cells if c.text.isdigit()) == 20
    assert "Nothing to label" not in driver.find_element(By.ID, "item").text


def test_keys_move_skip_and_score_a_sample_in_chinese(populated, served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, _ = populated
    base, (first, _second) = served
    driver = browser
    driver.get(f"{base}/label?run={first}&metric=faithfulness&level=sample&lang=zh")
    assert "键盘快捷键" in driver.page_source
    position = driver.find_element(By.ID, "position")
    _wait(driver, lambda d: "第 1 条，共 6 条" in position.text)
    driver.find_element(By.ID, "labeller").send_keys("bob", Keys.TAB)
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("j")
    _wait(driver, lambda d: "第 2 条" in position.text)
    body.send_keys(Keys.ARROW_LEFT)
    _wait(driver, lambda d: "第 1 条" in position.text)
    body.send_keys("s")
    _wait(driver, lambda d: "第 2 条" in position.text)
    second = position.text.split(" · ")[1]
    # a sample item lists the judge's verdict on each claim, and 1-5 scores the sample
    assert len(driver.find_elements(By.CSS_SELECTOR, "#item ul.verdicts li")) >= 1
    body.send_keys("4")
    _wait(driver, lambda d: "第 3 条" in position.text)
    (kept,) = store.labels()
    assert (kept.sample_id, kept.level, kept.value, kept.labeller) == (
        second,
        "sample",
        0.75,
        "bob",
    )
    # one score: its Spearman cannot be computed, and the headline says so
    assert (
        "已在你的 1 条标注上检查：Spearman 无法计算" in driver.find_element(By.ID, "agreement").text
    )


def test_two_runs_answers_are_compared_blind_with_a_b_and_t(populated, served, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    store, _ = populated
    base, (first, second) = served
    driver = browser
    # the reranked run's last three samples have their contexts in another order: 3 pairs
    driver.get(f"{base}/label?run={second}&metric={METRIC}&versus={first}")
    position = driver.find_element(By.ID, "position")
    _wait(driver, lambda d: "item 1 of 3" in position.text)
    shown = driver.find_element(By.ID, "item").text
    assert "Answer A" in shown and "Answer B" in shown and "the judge says" not in shown
    assert driver.find_element(By.ID, "prefer-a").is_displayed()
    assert not driver.find_element(By.ID, "yes").is_displayed()
    driver.find_element(By.ID, "labeller").send_keys("carol", Keys.TAB)
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys("a")
    _wait(driver, lambda d: "item 2 of 3" in position.text)
    driver.find_element(By.ID, "prefer-b").click()
    _wait(driver, lambda d: "item 3 of 3" in position.text)
    body.send_keys("t")
    agreement = driver.find_element(By.ID, "agreement")
    _wait(driver, lambda d: agreement.get_attribute("data-labels") == "3")
    kept = store.labels(metric=METRIC, level="preference")
    assert sorted(k.value for k in kept) == ["better", "tie", "worse"]
    # by hand: each non-tie label against the order of the two runs' scores
    scores = {
        sample_key(s.sample): s.scores[METRIC].score
        for run in (first, second)
        for s in store.load(run)
    }
    points = []
    for k in kept:
        if k.value != "tie":
            gap = scores[k.sample_key] - scores[str(k.item)]
            points.append(0.5 if gap == 0 else float((gap > 0) == (k.value == "better")))
    expected = sum(points) / len(points)
    assert (
        f"validated on 2 of your labels (preference level): preference agreement {expected:.2f}"
        in agreement.text
    )
    assert agreement.find_element(By.CSS_SELECTOR, '.level[data-level="preference"]')
