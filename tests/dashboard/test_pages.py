"""The dashboard's pages over a store with several runs: trends, filtered samples, the
comparison, the language switch, and every page's weight."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from ragmeter.dashboard import create_app
from ragmeter.gate import load_rules
from tests.dashboard.conftest import GATE

LOCAL = "http://127.0.0.1:8321"
#: Every page must stay under this many bytes.
PAGE_LIMIT = 300_000


@pytest.fixture
def client(several, tmp_path) -> TestClient:
    store, _ = several
    (tmp_path / "gate.toml").write_text(GATE, encoding="utf-8")
    app = create_app(
        store, port=8321, gate=load_rules(tmp_path / "gate.toml"), gate_source="gate.toml"
    )
    return TestClient(app, base_url=LOCAL)


def page_paths(ids: list[str]) -> dict[str, str]:
    return {
        "runs list": "/",
        "trends": "/trends",
        "run": f"/runs/{ids[0]}",
        "samples": f"/runs/{ids[0]}/samples",
        "sample": f"/runs/{ids[0]}/samples/1",
        "compare": f"/compare?base={ids[0]}&candidate={ids[2]}",
    }


def test_every_page_type_weighs_under_300_kb_and_fetches_nothing(client, several):
    _, ids = several
    for kind, path in page_paths(ids).items():
        response = client.get(path)
        assert response.status_code == 200, kind
        body = response.content
        assert 1_000 < len(body) < PAGE_LIMIT, (kind, len(body))
        text = response.text
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), kind
        assert "http://" not in text and "https://" not in text, kind
        assert "<script" not in text, kind


def test_the_trends_page_draws_a_chart_per_metric_with_intervals_and_thresholds(client):
    text = client.get("/trends", params={"name": "nightly"}).text
    assert text.count('class="trend-chart"') == 9
    mrr = text[text.index('id="trend-mrr"') :]
    mrr = mrr[: mrr.index("</svg>")]
    assert mrr.count('class="point"') == 3
    assert 'class="ci-band"' in mrr and mrr.count('class="ci-whisker"') == 3
    assert 'class="threshold threshold-min"' in mrr and "≥ 0.5" in mrr
    flaky = text[text.index('id="trend-flaky"') :]
    flaky = flaky[: flaky.index("</svg>")]
    assert "ci_low ≥ 0.4" in flaky and 'class="threshold threshold-max"' in flaky
    assert "bleu" in text and 'id="gate-source"' in text and "gate.toml" in text
    one = client.get("/trends", params={"metric": "mrr", "tag": "exp"}).text
    assert one.count('class="trend-chart"') == 1 and one.count('class="point"') == 1
    empty = client.get("/trends", params={"name": "nobody"}).text
    assert 'id="no-trend"' in empty


def test_without_a_gate_the_trends_page_says_how_to_draw_thresholds(several):
    store, _ = several
    text = TestClient(create_app(store, port=8321), base_url=LOCAL).get("/trends").text
    assert "--gate FILE" in text and 'class="threshold' not in text


def test_the_runs_table_keeps_nine_metrics_inside_its_container(client):
    text = client.get("/").text
    assert '<div class="scroll"><table class="runs">' in text
    assert text.count('<th class="num"') == 9 and "precision@<wbr>5" in text
    assert 'id="filter-since"' in text and 'id="filter-until"' in text
    assert text.count('class="run-link"') == 4
    ranged = client.get("/", params={"since": "2026-11-03"}).text
    assert ranged.count('class="run-link"') == 2


def test_the_samples_page_filters_and_sorts_on_the_server(client, several):
    _, ids = several
    url = f"/runs/{ids[1]}/samples"
    failed = client.get(url, params={"metric": "flaky", "status": "failed"}).text
    assert failed.count("sample-page-link") == 2 and ">q1<" in failed and ">q3<" in failed
    assert '<option value="failed" selected>' in failed
    text = client.get(url, params={"q": "hamlet"}).text
    assert text.count("sample-page-link") == 1 and 'value="hamlet"' in text
    zh = client.get(url, params={"tag": "language=zh"}).text
    assert zh.count("sample-page-link") == 4
    sorted_page = client.get(url, params={"sort": "flaky", "order": "desc"}).text
    order = re.findall(r'class="sample-page-link">(q\d)<', sorted_page)
    assert order[-3:] and set(order[-3:]) == {"q1", "q3", "q7"}
    # The heading links sort by a metric, and flip the order when already sorted by it.
    assert f'href="{url}?q=hamlet&amp;sort=flaky&amp;order=asc" class="sort"' in text
    assert f'href="{url}?sort=flaky&amp;order=asc" class="sort" id="sort-flaky"' in sorted_page
    nothing = client.get(url, params={"q": "zzz"}).text
    assert 'id="no-sample"' in nothing
    assert client.get(url, params={"sort": "nope"}).status_code == 400


def test_failed_results_show_as_failed_never_as_a_score(client, several):
    _, ids = several
    text = client.get(f"/runs/{ids[1]}/samples").text
    rows = re.findall(r'<tr class="sample-row">.*?</tr>', text)
    q1 = next(r for r in rows if ">q1<" in r)
    assert '<td class="status-failed" title="the judge timed out">failed</td>' in q1
    q7 = next(r for r in rows if ">q7<" in r)
    assert 'class="status-not_applicable"' in q7 and ">n/a<" in q7
    assert "nan" not in text.lower().replace("nanos", "")
    compare = client.get(f"/compare?base={ids[0]}&candidate={ids[2]}").text
    changed = compare[compare.index('class="changed"') :]
    body = changed[changed.index("<tbody>") :]
    first_row = body[: body.index("</tr>")]
    assert 'class="status-failed">failed<' in first_row and "status changed" in first_row


def test_the_compare_page_shows_paired_deltas_p_values_and_changed_samples(client, several):
    _, ids = several
    text = client.get("/compare", params={"a": ids[0], "b": ids[2]}).text
    assert 'id="paired"' in text and 'id="compare-chart"' in text
    assert text.count('class="delta-bar"') == 9
    row = re.search(r'<tr title="([^"]*)" id="paired-flaky">(.*?)</tr>', text)
    assert row is not None
    verdict, cells = row.groups()
    assert verdict.startswith("flaky +0.") and "p " in verdict
    assert re.search(r'class="num delta">\+0\.\d{3}<', cells)
    assert re.search(r'class="num p-value">(&lt; 0\.001|0\.\d{3}|1\.000)<', cells)
    links = re.findall(r'href="(/runs/[0-9a-f]+/samples/\d+)" class="changed-sample"', text)
    assert links and all(link.startswith(f"/runs/{ids[2]}/samples/") for link in links)
    assert client.get(links[0]).status_code == 200
    verdicts = re.search(r'<ul class="verdicts">(.*?)</ul>', text)
    assert verdicts is not None and verdicts.group(1).count("<li>") == 9
    assert "flaky +0." in verdicts.group(1)
    full = re.search(r'<a href="([^"]+)" id="full-report">', text)
    assert full is not None
    report = client.get(full.group(1).replace("&amp;", "&"))
    assert report.status_code == 200 and "Run vs baseline" in report.text
    assert 'id="record"' in report.text


def test_the_language_follows_the_browser_and_the_switch_is_remembered(client, several):
    _, ids = several
    french = client.get("/", headers={"accept-language": "fr-FR,fr;q=0.9,en;q=0.5"})
    assert (
        "Compare the two ticked runs (the older one is the baseline)" in french.text
        and '<html lang="en">' in french.text
    )
    zh = client.get("/", headers={"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"})
    assert "运行" in zh.text and "对比勾选的两个运行（较早的作为基线）" in zh.text
    assert (
        '<html lang="zh-CN">' in zh.text
        and "Compare the two ticked runs (the older one is the baseline)" not in zh.text
    )
    assert "ragmeter_lang" not in zh.headers.get("set-cookie", "")
    en = client.get("/", params={"lang": "en"}, headers={"accept-language": "zh-CN"})
    assert (
        "Compare the two ticked runs (the older one is the baseline)" in en.text
        and "对比勾选的两个运行（较早的作为基线）" not in en.text
    )
    assert "ragmeter_lang=en" in en.headers["set-cookie"]
    # The cookie is kept: later pages stay English although the browser prefers Chinese.
    later = client.get("/trends", headers={"accept-language": "zh-CN"})
    assert (
        html.escape(
            "Each metric's mean per run, oldest to newest, with its 95% confidence interval "
            "(whiskers) and the gate's thresholds (dashed lines); runs of different datasets "
            "get a line each, named under the chart."
        )
        in later.text
    )
    switched = client.get(f"/runs/{ids[0]}/samples", params={"lang": "zh", "status": "failed"})
    assert "失败" in switched.text and "全部运行" in switched.text


def test_the_switch_links_keep_the_other_query_parameters(client, several):
    _, ids = several
    text = client.get(f"/runs/{ids[0]}/samples", params={"status": "failed"}).text
    assert f'href="/runs/{ids[0]}/samples?status=failed&amp;lang=zh"' in text
    assert 'id="lang-zh"' in text and "<strong>English</strong>" in text


def test_serve_reads_the_gate_file_it_is_given(several, monkeypatch, tmp_path):
    import uvicorn
    from typer.testing import CliRunner

    from ragmeter.cli import app as cli

    served: dict[str, object] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app))
    store, _ = several
    gate = tmp_path / "gate.toml"
    gate.write_text(GATE, encoding="utf-8")
    result = CliRunner().invoke(cli, ["serve", "--gate", str(gate), "--store", str(store.url)])
    assert result.exit_code == 0, result.output
    client = TestClient(served["app"], base_url="http://127.0.0.1:8321")  # type: ignore[arg-type]
    assert client.get("/api/trends", params={"metric": "mrr"}).json()["gate"] == str(gate)
    assert "threshold-min" in client.get("/trends", params={"metric": "mrr"}).text
    missing = CliRunner().invoke(cli, ["serve", "--gate", str(tmp_path / "none.toml")])
    assert missing.exit_code != 0 and "--gate" in missing.output


def test_the_trends_page_stays_light_at_the_most_runs_it_draws(tmp_path):
    from ragmeter.store import Store
    from tests.dashboard.conftest import nine_metric_run

    store = Store(f"sqlite:///{tmp_path / 'many.db'}")
    trend_runs = 50  # the trends page draws the newest 50 runs
    results = [nine_metric_run(shift, {"q1"}) for shift in range(3)]
    for i in range(trend_runs + 5):
        store.record(results[i % 3], name="a-nightly-run-with-a-longer-name", tags=["main"])
    client = TestClient(create_app(store, port=8321), base_url=LOCAL)
    text = client.get("/trends").text
    assert text.count('class="point"') == trend_runs * 9  # the newest runs only
    assert len(text.encode()) < PAGE_LIMIT
    assert len(client.get("/").content) < PAGE_LIMIT


def test_past_its_point_budget_the_trends_page_links_the_other_metrics(client, monkeypatch):
    from ragmeter.dashboard import _views

    monkeypatch.setattr(_views, "POINT_BUDGET", 10)  # 3 runs tagged main: three charts
    text = client.get("/trends", params={"tag": "main", "since": "2026-11-01"}).text
    assert text.count('class="trend-chart"') == 3
    links = re.findall(r'<a href="([^"]+)" class="more-metric">', text)
    assert len(links) == 6
    assert links[0] == "/trends?tag=main&amp;since=2026-11-01&amp;metric=mrr"
    assert 'id="trend-mrr"' in client.get(links[0].replace("&amp;", "&")).text


def test_error_pages_speak_the_page_language_and_the_api_stays_english(client, several):
    _, ids = several
    page = client.get(f"/runs/{ids[0]}/samples/99", params={"lang": "zh"})
    assert page.status_code == 404
    assert "没有这个样本" in page.text and "运行 nightly 的样本编号为 0 到 7" in page.text
    api = client.get(f"/api/runs/{ids[0]}/samples/99", headers={"accept-language": "zh-CN"})
    assert api.status_code == 404 and api.json() == {"error": "run nightly has samples 0 to 7"}
    bad = client.get(f"/runs/{ids[0]}/samples", params={"status": "broken", "lang": "en"})
    assert (
        bad.status_code == 400
        and "This query cannot be answered" in bad.text
        and "status" in bad.text
    )


def test_a_run_links_to_its_trends_and_to_a_comparison_with_its_previous_run(client, several):
    _, ids = several
    second = client.get(f"/runs/{ids[1]}").text
    assert 'href="/trends?name=nightly"' in second
    assert f'href="/compare?base={ids[0]}&amp;candidate={ids[1]}"' in second
    first = client.get(f"/runs/{ids[0]}").text
    assert "Compare with the previous run" not in first  # the first nightly has none
    experiment = client.get(f"/runs/{ids[3]}").text
    assert "Compare with the previous run" not in experiment  # nor a run name seen once


def test_a_change_that_is_not_significant_is_called_so_in_both_languages(client, several):
    """flaky rose by 0.1 on 6 pairs with Holm-adjusted p = 0.28: not "better", nor "no change"."""
    _, ids = several
    params = {"a": ids[0], "b": ids[2]}
    flaky = next(
        m for m in client.get("/api/compare", params=params).json()["metrics"]
        if m["metric"] == "flaky"
    )  # fmt: skip
    assert flaky["difference"] > 0.05 and not flaky["significant"]
    assert flaky["change"] == "no significant change"
    for language, word in (("en", "no significant change"), ("zh", "无显著变化")):
        text = client.get("/compare", params={**params, "lang": language}).text
        row = re.search(r'id="paired-flaky">(.*?)</tr>', text)
        assert row is not None
        assert f'<td class="change-no-significant-change">{word}</td>' in row.group(1)
        assert ">better<" not in text and ">变好<" not in text


@pytest.fixture
def two_datasets(tmp_path):
    """Four runs, oldest first, alternating between two dataset files of the same name in
    two folders (a golden set and a support set), and one run of samples given in Python."""
    import datetime as dt
    import json

    import sqlalchemy as sa

    from ragmeter import evaluate
    from ragmeter.store import Store
    from tests.dashboard.conftest import varied_rows

    store = Store(f"sqlite:///{tmp_path / 'two.db'}")
    for folder in ("golden", "support"):
        (tmp_path / folder).mkdir()
    plan = [("golden", 0), ("support", 2), ("golden", 1), ("support", 0), (None, 1)]
    ids = []
    for day, (folder, shift) in enumerate(plan):
        rows = varied_rows(shift)
        if folder is None:
            source: object = rows
        else:
            source = tmp_path / folder / "data.jsonl"
            source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        info = store.record(evaluate(source, ["mrr", "recall@5"], progress=False), name="nightly")
        with store.engine.begin() as connection:
            connection.execute(
                sa.text("UPDATE runs SET created_at = :when WHERE id = :id"),
                {"when": dt.datetime(2026, 11, 1 + day, tzinfo=dt.timezone.utc), "id": info.id},
            )
        ids.append(info.id)
    return TestClient(create_app(store, port=8321), base_url=LOCAL), ids, tmp_path


def test_trends_draw_a_line_per_dataset_never_joining_two(two_datasets):
    client, ids, tmp_path = two_datasets
    body = client.get("/api/trends", params={"metric": "mrr"}).json()
    golden, support = (
        str(tmp_path / "golden" / "data.jsonl"),
        str(tmp_path / "support" / "data.jsonl"),
    )
    assert [(d["dataset"], d["label"], d["runs"]) for d in body["datasets"]] == [
        (golden, golden, 2),  # two files named data.jsonl: their whole paths tell them apart
        (support, support, 2),
        ("", "samples given in Python", 1),
    ]
    (mrr,) = body["metrics"]
    assert [p["run"] for p in mrr["points"]] == ids  # oldest first, as before
    assert [p["dataset"] for p in mrr["points"]] == [golden, support, golden, support, ""]
    text = client.get("/trends", params={"metric": "mrr"}).text
    chart = text[text.index('id="trend-mrr"') :]
    chart = chart[: chart.index("</svg>")]
    lines = re.findall(
        r'<polyline class="series" points="([^"]*)"[^>]*data-dataset="([^"]*)"', chart
    )
    assert [label for _, label in lines] == [
        golden,
        support,
    ]  # one point of Python samples: no line
    assert all(len(points.split()) == 2 for points, _ in lines)
    assert chart.count('class="legend-item"') == 3 and "samples given in Python" in chart
    assert chart.count('class="point"') == 5
    assert len(set(re.findall(r'class="point"[^>]*style="fill:(#[0-9a-f]{6})"', chart))) == 3
    table = text[text.index('id="trend-table"') :]
    assert "<th>dataset</th>" in table and table.count(html.escape(golden)) == 2
    single = client.get("/trends", params={"metric": "mrr", "since": "2026-11-05"}).text
    assert "legend-item" not in single and "style=" not in single.split('id="trend-mrr"')[1]


def test_a_monitors_windows_are_one_line_under_their_source(tmp_path):
    from ragmeter import evaluate
    from ragmeter.store import Store
    from tests.dashboard.conftest import varied_rows

    store = Store(f"sqlite:///{tmp_path / 'windows.db'}")
    for window in range(3):  # as ragmeter monitor records them: samples given in Python
        result = evaluate(varied_rows(window), ["mrr"], progress=False)
        store.record(result, name=f"monitor:m:window-{window}", params={"source": "traffic.jsonl"})
    store.record(evaluate(varied_rows(0), ["mrr"], progress=False), name="notebook")
    client = TestClient(create_app(store, port=8321), base_url=LOCAL)
    body = client.get("/api/trends").json()
    assert [(d["dataset"], d["label"], d["runs"]) for d in body["datasets"]] == [
        ("traffic.jsonl", "traffic.jsonl", 3),
        ("", "samples given in Python", 1),
    ]
