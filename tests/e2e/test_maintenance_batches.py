"""Long maintenance of a SQLite index (expire, import, pruning the audit log) commits in
batches: a crawl writing to the same index waits for one batch, never for the whole
command, and Ctrl-C leaves a consistent index and says how far the command got."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from pipelines import subprocess_env
from sqlite_checks import assert_tables_match_pages

from scrapy_simhash.index.base import Match, StoredPage
from scrapy_simhash.index.sqlite import SqliteIndex
from scrapy_simhash.index.sqlite import maintenance as sqlite_maintenance

#: In-process tests use batches of SMALL_BATCH pages, so that PAGES (three batches) show
#: what 30,000 pages in batches of 10,000 do, in a tenth of the time.
SMALL_BATCH = 1_000
PAGES = 3 * SMALL_BATCH


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(sqlite_maintenance, "BATCH_PAGES", SMALL_BATCH)


def old_pages(count: int = PAGES, seed: int = 1) -> list[StoredPage]:
    rng = random.Random(seed)
    return [
        StoredPage(f"https://example.com/{i}", rng.getrandbits(64), 1000.0) for i in range(count)
    ]


def count_pages(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT count(*) FROM pages").fetchone()[0]
    finally:
        conn.close()


def assert_consistent(path: Path) -> None:
    with SqliteIndex(path, create=False) as index:
        conn = index.store.db.conn
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert_tables_match_pages(index)


def run_while_a_crawl_writes(path: Path, command, committed) -> bool:
    """Run *command* in a thread; once *committed()* says its first batch is in, add a page
    from another connection. Return whether the command was still running when the add was
    done (an order of events: how long the add took is no test, a loaded machine can make
    any bound fail)."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            command()
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    thread = threading.Thread(target=target)
    thread.start()
    try:
        while not committed() and thread.is_alive():
            time.sleep(0.005)
        with SqliteIndex(path, create=False) as crawl:
            crawl.check_and_add(random.getrandbits(64), "https://example.com/new")
        still_running = thread.is_alive()
    finally:
        thread.join()
    assert not errors, errors
    return still_running


def test_expire_lets_a_crawl_write_between_batches(tmp_path, small_batches):
    path = tmp_path / "index.db"
    with SqliteIndex(path) as index:
        index.add_pages(old_pages())

    def expire() -> None:
        with SqliteIndex(path, create=False) as maintenance:
            maintenance.expire(2000.0)

    still_running = run_while_a_crawl_writes(path, expire, lambda: count_pages(path) < PAGES)
    assert still_running, "the crawl's page was only written after the whole expire"
    assert count_pages(path) == 1  # the crawl's page; every old one expired
    assert_consistent(path)


def test_import_lets_a_crawl_write_between_batches(tmp_path, small_batches):
    path = tmp_path / "index.db"
    SqliteIndex(path).close()
    pages = old_pages()

    def import_() -> None:
        with SqliteIndex(path, create=False) as maintenance:
            maintenance.add_pages(pages)

    still_running = run_while_a_crawl_writes(path, import_, lambda: count_pages(path) > 0)
    assert still_running, "the crawl's page was only written after the whole import"
    assert count_pages(path) == PAGES + 1
    assert_consistent(path)


def test_expire_drops_in_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_maintenance, "BATCH_PAGES", 100)
    path = tmp_path / "index.db"
    with SqliteIndex(path) as index:
        for i in range(2 * 100 + 5):
            index.record_drop(f"d{i}", Match("k", 1, 0, 0.0))
        assert index.expire_drops(time.time() + 1) == 2 * 100 + 5
        assert list(index.drops()) == []


@pytest.mark.parametrize("command", ["expire", "import"])
def test_ctrl_c_leaves_a_consistent_index_and_says_how_far_it_got(tmp_path, command):
    path = tmp_path / "index.db"
    pages = old_pages(40_000)
    if command == "expire":
        with SqliteIndex(path) as index:
            index.add_pages(pages)
        args = ["expire", "--older-than", "1d", "--yes"]
        started = lambda: count_pages(path) < len(pages)  # noqa: E731
    else:
        from scrapy_simhash.tools.transfer import export_index

        with SqliteIndex(tmp_path / "source.db") as source:
            source.add_pages(pages)
            export_index(source, tmp_path / "backup.simhash")
        SqliteIndex(path).close()
        args = ["import", str(tmp_path / "backup.simhash")]
        started = lambda: count_pages(path) > 0  # noqa: E731
    # The command runs in batches of SMALL_BATCH pages (40 commits, not 4): on a loaded
    # machine this process may see the first batch only seconds after it was committed,
    # and the Ctrl-C must still land while batches remain.
    cli = (
        "import runpy; from scrapy_simhash.index.sqlite import maintenance as sqlite_maintenance; "
        f"sqlite_maintenance.BATCH_PAGES = {SMALL_BATCH}; "
        "runpy.run_module('scrapy_simhash', run_name='__main__', alter_sys=True)"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", cli, *args, "--index", str(path)],
        cwd=tmp_path,
        env=subprocess_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not started() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:  # pragma: no cover
            process.kill()
    assert process.returncode == 130, (out, err)
    verb = "removing" if command == "expire" else "importing"
    assert f"Interrupted after {verb} " in err and "the index is consistent" in err, err
    done = int(err.split(f"Interrupted after {verb} ")[1].split()[0])
    assert done % SMALL_BATCH == 0 and 0 < done < len(pages), err
    left = count_pages(path)
    assert left == (len(pages) - done if command == "expire" else done)
    assert_consistent(path)


@pytest.mark.parametrize("where", ["before the commit", "after the commit"])
def test_ctrl_c_counts_a_batch_once_it_is_committed(tmp_path, small_batches, where):
    """A Ctrl-C at any moment of a batch: the count it reports is what is committed (a
    signal that lands just after a COMMIT returned once made a command report 0 pages)."""
    import contextlib

    from scrapy_simhash.exceptions import Interrupted

    path = tmp_path / "index.db"
    with SqliteIndex(path) as index:
        index.add_pages(old_pages())
    with SqliteIndex(path, create=False) as index:
        transaction, batches = index.store.db.transaction, []

        @contextlib.contextmanager
        def interrupted_second_batch(immediate: bool = True):
            batches.append(1)
            with transaction(immediate):
                yield
                if len(batches) == 2 and where == "before the commit":
                    raise KeyboardInterrupt
            if len(batches) == 2:
                raise KeyboardInterrupt  # the COMMIT has returned

        index.store.db.transaction = interrupted_second_batch
        with pytest.raises(Interrupted) as excinfo:
            index.expire(2000.0)
    committed = PAGES - count_pages(path)
    assert committed == (SMALL_BATCH if where == "before the commit" else 2 * SMALL_BATCH)
    assert excinfo.value.done == committed
    assert_consistent(path)
