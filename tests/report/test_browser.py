"""The HTML report in a real headless Chromium: it parses, renders and shows the run.

Skipped when no Chromium is installed, unless RAGMETER_REQUIRE_BROWSER=1 (as in CI); the
binary can be named with RAGMETER_CHROMIUM."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from ragmeter.report import CSS, render_html, write_report
from ragmeter.stats import compare
from tests.report.dom import parse

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
    assert dom.count('class="scatter"') == 6 and 'class="deltas"' in dom
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


def png_pixels(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Width, height and RGB pixels of an 8-bit, non-interlaced RGB or RGBA PNG (what
    Chromium writes), decoded with the standard library."""
    assert data.startswith(PNG_MAGIC)
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    previous, pixels = bytearray(stride), []
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = previous[i], previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                guess = left + up - corner
                pa, pb, pc = abs(guess - left), abs(guess - up), abs(guess - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + best) & 0xFF
        pixels += [tuple(line[x : x + 3]) for x in range(0, stride, bpp)]
        previous = line
    return width, height, pixels  # type: ignore[return-value]


def test_compare_charts_screenshot_is_not_blank(tmp_path, llm_result, improved_result):
    """The run-vs-run charts alone (delta bars, paired scatters) drawn by Chromium: the
    picture holds ink; the means' bars are grey (none of these changes is significant on 4
    samples) and the samples' dots green and red (better and worse)."""
    binary = _chromium()
    assert not any(c.significant for c in compare(improved_result, llm_result))
    page = parse(render_html(llm_result, compare=improved_result))
    charts = "".join(
        page.find("div", id=part).outer_html() for part in ("compare-deltas", "compare-scatters")
    )
    page = tmp_path / "charts.html"
    page.write_text(
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{CSS}</style></head>'
        f"<body><main>{charts}</main></body></html>",
        encoding="utf-8",
    )
    shot = tmp_path / "charts.png"
    done = _run(binary, tmp_path, f"--screenshot={shot}", "--window-size=720,1600", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    width, height, pixels = png_pixels(shot.read_bytes())
    assert (width, height) == (720, 1600)
    ink = [p for p in pixels if min(p) < 200]
    assert len(ink) > 2_000  # axes, labels, bars and dots, not an empty page
    grey = [p for p in pixels if p == (0xC4, 0xCB, 0xD3)]  # a bar of no significant change
    green = [p for p in pixels if p[1] > p[0] + 40 and p[1] > p[2] + 30]
    red = [p for p in pixels if p[0] > p[1] + 50 and p[0] > p[2] + 50]
    assert len(grey) > 200, len(grey)
    assert green and red


def test_a_missing_browser_skips_unless_required(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CANDIDATES", ("no-such-browser",))
    monkeypatch.delenv("RAGMETER_CHROMIUM", raising=False)
    monkeypatch.delenv("RAGMETER_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium found"):
        _chromium()
    monkeypatch.setenv("RAGMETER_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="RAGMETER_REQUIRE_BROWSER=1"):
        _chromium()
