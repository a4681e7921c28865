"""The HTML report in a real headless Chromium: it parses, renders and shows the run.

Skipped when no Chromium is installed, unless RAGMETER_REQUIRE_BROWSER=1 (as in CI); the
binary can be named with RAGMETER_CHROMIUM."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragmeter.report import write_report

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _chromium() -> str:
    """The browser binary (RAGMETER_CHROMIUM, else the first of ``CANDIDATES`` found)."""
    for candidate in (os.environ.get("RAGMETER_CHROMIUM"), *CANDIDATES):
        if not candidate:
            continue
        found = shutil.which(candidate)
        if found:
            return found
    reason = "no Chromium found (install the Debian package chromium)"
    if os.environ.get("RAGMETER_REQUIRE_BROWSER") == "1":
        pytest.fail(f"RAGMETER_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def page(tmp_path_factory, llm_result, improved_result, findings) -> tuple[str, Path]:
    binary = _chromium()
    tmp = tmp_path_factory.mktemp("browser")
    report = write_report(
        llm_result,
        tmp / "report.html",
        compare=improved_result,
        findings=findings,
        title="ragmeter 评测报告",
    )
    return binary, report


def _run(binary: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_dumped_dom_shows_the_report(page):
    binary, report = page
    done = _run(binary, report.parent, "--dump-dom", report.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "<title>ragmeter 评测报告</title>" in dom
    assert '<tr data-metric="faithfulness"><td>faithfulness</td>' in dom
    assert '<td class="num">0.6250</td>' in dom  # faithfulness mean: (0.5 + 1 + 0 + 1) / 4
    assert "岚屿 S3 耳机保修多久？" in dom
    assert dom.count('class="hist"') == 6
    assert 'data-counts="1,0,0,0,0,1,0,0,0,2" class="hist"' in dom  # faithfulness
    assert "faithfulness score distribution over 4 scored samples" in dom
    assert "Answers add unsupported claims" in dom
    assert "compared on 3 shared samples" in dom
    # the response's <script> stayed text: no script element ran or exists
    assert "<script" not in dom
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in dom


def test_screenshot_is_a_non_empty_png(page):
    binary, report = page
    shot = report.parent / "shot.png"
    done = _run(
        binary, report.parent, f"--screenshot={shot}", "--window-size=1280,2000", report.as_uri()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1280, 2000)


def test_a_missing_browser_skips_unless_required(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CANDIDATES", ("no-such-browser",))
    monkeypatch.delenv("RAGMETER_CHROMIUM", raising=False)
    monkeypatch.delenv("RAGMETER_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium found"):
        _chromium()
    monkeypatch.setenv("RAGMETER_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="RAGMETER_REQUIRE_BROWSER=1"):
        _chromium()
