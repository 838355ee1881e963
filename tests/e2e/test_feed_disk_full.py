"""A feed disk that fills for a few seconds loses no page (issue #43, failure 1).

A real crawl writes its JSON-lines feed to a small tmpfs of the test's own, filled to the
last block before the crawl starts; once the crawl has checked (and stored) some pages,
the room is made again, and the crawl goes on and ends. Scrapy's exporter raised on the
items it could not write meanwhile: their pages must stay pending in the crawl's journal
(so the crawl forgets them at its end) and the crawl must say it failed; the next crawl
then keeps and exports them. Before, their keys left the journal at the next successful
flush, the crawl said ``finished``, and the next crawl dropped them as unchanged."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from crawls import crawl_command, page_text, run_crawl
from pipelines import subprocess_env

from scrapy_simhash import open_index

pytestmark = pytest.mark.slow

PAGES = 300


@pytest.fixture
def small_disk(tmp_path):
    """A 16 MB tmpfs (needs root and mount permission; skipped otherwise)."""
    mount = tmp_path / "feeddisk"
    mount.mkdir()
    if shutil.which("mount") is None:
        pytest.skip("no mount command: cannot make a small file system that fills here")
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        pytest.skip(
            "cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN) to fill a feed's "
            f"disk: {result.stderr.strip()}"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def feed_urls(feed: Path) -> set[str]:
    """The URLs of the items of a JSON-lines feed (a line that is not JSON is skipped)."""
    urls = set()
    for line in feed.read_text(encoding="utf-8", errors="replace").splitlines():
        with contextlib.suppress(ValueError, KeyError, TypeError):
            urls.add(json.loads(line)["url"])
    return urls


def stored_pages(uri: str) -> int:
    with open_index(uri, create=False, read_only=True) as index:
        return len(index)


def fill(path: Path) -> None:
    """Write *path* until its file system has no block left."""
    chunk = b"\0" * 65536
    with path.open("wb", buffering=0) as f:
        while True:
            try:
                f.write(chunk)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                chunk = chunk[: len(chunk) // 2]
                if not chunk:
                    return


def stat(log: str, name: str) -> str | None:
    found = re.search(rf"'{re.escape(name)}': '?([^,'\n]+)", log)
    return found.group(1) if found else None


def write_big_pages(tmp_path: Path) -> None:
    """Pages of about 20 KB each: their lines are longer than a file's buffer (8 KB)."""
    site = tmp_path / "site"
    site.mkdir()
    for number in range(PAGES):
        text = " ".join(page_text(number * 1000 + part) for part in range(45))
        (site / f"{number}.html").write_text(
            f"<html><head><title>Page {number}</title></head><body><p>{text}</p></body></html>",
            encoding="utf-8",
        )


def batches_begun(folder) -> int:
    """Files of the first crawl's feed begun: with batches, one a batch (a batch's file is
    begun when the one before it has ended, and its lines were flushed to the full disk;
    on a loaded machine the exporter may lag the index by more than a second)."""
    return len(list(folder.glob("feed-1-*.jl")))


@pytest.mark.parametrize(
    ("batch", "big"),
    [(0, False), (5, False), (0, True)],
    ids=["one-file", "batches-of-5", "lines-over-8-kb"],
)
def test_a_feed_disk_full_for_a_while_loses_no_page(tmp_path, small_disk, batch, big):
    """*batch*: ``FEED_EXPORT_BATCH_ITEM_COUNT``. With batches of 5 items, no export
    raises (5 lines fit the file's buffer): the lines were lost when Scrapy closed the
    batch's file, which it only logs (255 of 300 pages in no feed before). *big*: lines
    of 20 KB, with 4 KB left on the disk: the first item that does not fit is written in
    part (what is left of it, 16 KB, is more than the buffer takes), and the next line
    written was joined to it (one more page lost)."""
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    first_feed = small_disk / ("feed-1-%(batch_id)d.jl" if batch else "feed-1.jl")
    filler = small_disk / "filler"
    fill(filler)
    if big:
        write_big_pages(tmp_path)
        os.truncate(filler, filler.stat().st_size - 4096)

    process = subprocess.Popen(
        crawl_command(
            tmp_path,
            uri,
            PAGES,
            str(first_feed),
            CONCURRENT_REQUESTS="8",
            FEED_EXPORT_BATCH_ITEM_COUNT=str(batch),
        ),
        env=subprocess_env(),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Full while the crawl checks its first 60 pages (40 KB of lines, far more than
        # an exporter buffers), and a second more; then the room is made again.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)
            try:
                if stored_pages(uri) >= 60 and batches_begun(small_disk) >= (4 if batch else 0):
                    break
            except Exception:  # not created yet
                continue
        time.sleep(1)
        assert process.poll() is None, "the crawl ended before the disk was freed"
        filler.unlink()
        log = process.communicate(timeout=120)[1]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    first = set().union(*(feed_urls(feed) for feed in small_disk.glob("feed-1*.jl")))
    assert "No space left on device" in log, log[-3000:]  # the disk was full: lines failed
    # Some lines failed (on a loaded machine the exporter may reach the freed disk only
    # after the crawl's last page, and then every line failed: the second crawl must
    # export them all the same).
    assert len(first) < PAGES, "no line failed"

    second_feed = tmp_path / "feed-2.jl"
    second_log = run_crawl(tmp_path, uri, PAGES, str(second_feed), CONCURRENT_REQUESTS="8")
    assert stat(second_log, "finish_reason") == "finished", second_log[-3000:]
    assert "Traceback" not in second_log, second_log[-3000:]

    every = {(tmp_path / "site" / f"{n}.html").as_uri() for n in range(PAGES)}
    missing = every - first - feed_urls(second_feed)
    assert not missing, (
        f"{len(missing)} of {PAGES} pages in no feed after a second crawl "
        f"({len(first)} in the first one's), e.g. {sorted(missing)[:3]}"
    )

    # The first crawl said it failed: an ERROR line, a stat, a finish reason that is not
    # success.
    assert re.search(r"ERROR: \d+ items? could not be written to the feeds", log), log[-3000:]
    assert int(stat(log, "simhash/errors/feed_export") or 0) > 0, log[-3000:]
    assert stat(log, "finish_reason") == "feed_export_failed", log[-3000:]


FLAKY_EXPORTER = '''
import errno
import os

from scrapy.exporters import JsonLinesItemExporter


class FlakyExporter(JsonLinesItemExporter):
    """Raises, as a full disk does, on the items of every 7th page, writing nothing."""

    def export_item(self, item):
        number = int(item["url"].rsplit("/", 1)[1].split(".")[0])
        if number % 7 == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        super().export_item(item)
'''


def test_an_item_the_feed_exporter_raised_on_is_exported_by_the_next_crawl(tmp_path):
    """Without root: an exporter that raises on some items, in a real crawl. Exactly those
    items' pages are forgotten at the end and kept by the next crawl."""
    pages = 120
    (tmp_path / "flaky_exporter.py").write_text(FLAKY_EXPORTER, encoding="utf-8")
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    first_feed, second_feed = tmp_path / "feed-1.jl", tmp_path / "feed-2.jl"
    failing = {(tmp_path / "site" / f"{n}.html").as_uri() for n in range(0, pages, 7)}

    first_log = run_crawl(
        tmp_path,
        uri,
        pages,
        str(first_feed),
        FEED_EXPORTERS='{"jsonlines": "flaky_exporter.FlakyExporter"}',
    )
    first = feed_urls(first_feed)
    assert not first & failing and len(first) == pages - len(failing), first_log[-3000:]

    log = run_crawl(tmp_path, uri, pages, str(second_feed))
    assert stat(log, "finish_reason") == "finished", log[-3000:]
    assert feed_urls(second_feed) == failing  # the others: dropped as unchanged

    log = first_log
    assert stat(log, "finish_reason") == "feed_export_failed", log[-3000:]
    assert stat(log, "simhash/errors/feed_export") == str(len(failing)), log[-3000:]
    assert stat(log, "simhash/journal/not_output") == str(len(failing)), log[-3000:]
    assert f"ERROR: {len(failing)} items could not be written to the feeds" in log
    assert log.count("Traceback") == 1  # the first failure's, once
