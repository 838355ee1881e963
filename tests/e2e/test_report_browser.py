"""End-to-end: crawl the example site, write ``scrapy-simhash report``, open it in headless
Chromium (Debian's package) and read the DOM it rendered, then save a screenshot.

Skipped where /usr/bin/chromium is absent (``apt-get install chromium``; CI installs it).
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pipelines import subprocess_env
from test_example_crawl import DUPLICATES, PROJECT, crawl

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def chromium(tmp_path: Path, *args: str) -> str:
    """Run headless Chromium with a fresh profile; return what it printed."""
    profile = tmp_path / f"chromium-profile-{len(list(tmp_path.glob('chromium-profile-*')))}"
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, Path]:
    """The example crawl's report and its --clusters table."""
    tmp_path = tmp_path_factory.mktemp("report")
    crawl(tmp_path, "kept")
    html, table = tmp_path / "report.html", tmp_path / "clusters.csv"
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "report", "-o", str(html), "--index",
         f"sqlite:///{tmp_path / 'index.db'}", "--feed", str(tmp_path / "kept.jl"),
         "--clusters", str(table)],
        cwd=PROJECT, env=subprocess_env(), capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return html, table


def test_clusters_table_gives_every_page_a_cluster(report):
    _, table = report
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert len(rows) == 21
    copies = {Path(r["key"]).name: Path(r["kept"]).name for r in rows if r["reason"] != "kept"}
    assert copies == DUPLICATES


def test_report_names_every_copy_beside_its_original(report):
    html, _ = report
    page = html.read_text(encoding="utf-8")
    for copy, original in DUPLICATES.items():
        beside = f"<h4>copy: {(PROJECT / 'site' / copy).as_uri()}</h4>"
        assert beside in page, copy
        assert f"<h4>kept: {(PROJECT / 'site' / original).as_uri()}</h4>" in page, original
    assert page.count('<div class="pair">') == len(DUPLICATES)
    assert "src=" not in page and "<link" not in page  # nothing loaded from elsewhere


@pytest.mark.skipif(not CHROMIUM.exists(), reason="no /usr/bin/chromium: apt-get install chromium")
def test_report_renders_in_chromium(report, tmp_path):
    html, _ = report
    dom = chromium(tmp_path, "--dump-dom", html.as_uri())
    assert dom.count('<section class="cluster"') == len(DUPLICATES)
    assert '<span id="shown">7</span>' in dom  # the filter script ran
    copy_text = dom[dom.index('<div class="copy-text">') :]
    assert "<mark>" in copy_text[: copy_text.index("</div>")]
    assert dom.count("<svg") >= 3  # distances, shares, calibrate's histogram

    filtered = chromium(tmp_path, "--dump-dom", html.as_uri() + "#filter=museum")
    assert '<span id="shown">1</span>' in filtered
    hidden = re.findall(r'<section class="cluster"[^>]*\bhidden', filtered)
    assert len(hidden) == len(DUPLICATES) - 1

    shot = tmp_path / "report.png"
    chromium(tmp_path, "--window-size=1280,1000", f"--screenshot={shot}", html.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    shutil.copy(shot, html.with_suffix(".png"))  # beside the report, for a look
