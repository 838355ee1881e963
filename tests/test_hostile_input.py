"""Hostile values in items, exports, feeds, URIs and command options: each ends in a
counted outcome or a one-line error, never a traceback, a leaked password, or a change
to an index that was refused."""

from __future__ import annotations

import json
import math
import os
import struct
import sys
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pytest
from click.testing import CliRunner
from pipelines import ARTICLE, make_pipeline, simhash_stats
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash import NearDuplicate, open_index
from scrapy_simhash.cli import main
from scrapy_simhash.exceptions import ExportFormatError, SimhashError
from scrapy_simhash.index.base import StoredPage
from scrapy_simhash.index.memory import MemoryIndex
from scrapy_simhash.transfer import MAGIC, export_index, read_pages

# -- items whose values raise when printed or compared -----------------------------------


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for you")

    __repr__ = __str__


class Uncomparable:
    """Raises on ``==``, as a numpy array of several values does in a truth test."""

    def __eq__(self, other: object) -> bool:
        raise TypeError("cannot compare")

    __hash__ = object.__hash__


def _nested(depth: int) -> list:
    value: list = ["x"]
    for _ in range(depth):
        value = [value]
    return value


HOSTILE_VALUES = {
    "10**5000": lambda: 10**5000,
    "__str__ raises": Unprintable,
    "== raises": Uncomparable,
    "a list nested 50,000 deep": lambda: _nested(50_000),
    "a numpy array": lambda: np.arange(12),
    "an empty numpy array": lambda: np.zeros(0),
}
OUTCOMES = ("simhash", "short", "empty", "errors/analysis")


@pytest.mark.parametrize("field", ["url", "content", "title"])
@pytest.mark.parametrize("name", sorted(HOSTILE_VALUES))
@deferred_f_from_coro_f
async def test_hostile_values_end_in_exactly_one_counted_outcome(tmp_path, field, name):
    pipeline = make_pipeline(tmp_path)
    item = {"url": "https://example.com/a", "title": "A title", "content": ARTICLE}
    item[field] = HOSTILE_VALUES[name]()
    try:
        result = await pipeline.process_item(item)
    except NearDuplicate:  # pragma: no cover - a fresh index
        pytest.fail("dropped on an empty index")
    assert result is item
    counted = simhash_stats(pipeline)
    assert counted["checked"] == 1, counted
    assert sum(counted.get(kind, 0) for kind in OUTCOMES) == 1, counted
    pipeline.close_spider()


# -- passwords ---------------------------------------------------------------------------

PASSWORD = "ZQXJ!p@ss:w/rd#?"


def test_no_command_prints_a_redis_password(make_redis_server, tmp_path, monkeypatch):
    server = make_redis_server("--requirepass", PASSWORD)
    secret = quote(PASSWORD, safe="")
    base = f"redis://:{secret}@127.0.0.1:{server.port}/0"
    monkeypatch.chdir(tmp_path)
    source = str(tmp_path / "source.db")
    with open_index(source) as index:
        for i in range(20):
            index.add_if_new(i * 0x0101_0101_0101_0101 + 7, f"page{i}")
    runner = CliRunner()
    outputs = []
    for args in (
        ["rebuild", "--index", source, "--max-distance", "5", "--into", base + "?prefix=k5"],
        ["rebuild", "--index", source, "--max-distance", "5", "--into", base + "?prefix=k5"],
        ["stats", "--index", base + "?prefix=k5"],
        ["export", str(tmp_path / "out.simhash"), "--index", base + "?prefix=k5"],
        ["import", str(tmp_path / "out.simhash"), "--index", base + "?prefix=copy"],
        ["expire", "--older-than", "1000d", "--yes", "--index", base + "?prefix=copy"],
        ["vacuum", "--index", base + "?prefix=copy"],
        ["dropped", "--index", base + "?prefix=copy"],
        ["rebuild", "--index", base + "?prefix=k5", "--max-distance", "4", "--into", base],
    ):
        result = runner.invoke(main, args)
        outputs.append(result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            args,
            result.output,
        )
    text = "\n".join(outputs)
    assert "Built" in text and "Imported 20 pages" in text, text
    for shown in (PASSWORD, secret, "ZQXJ"):
        assert shown not in text, text


# -- rebuild --into an index that is not its own ----------------------------------------


def test_rebuild_into_an_unrelated_index_is_refused_untouched(tmp_path):
    source, target = tmp_path / "source.db", tmp_path / "project.db"
    with open_index(str(source)) as index:
        for i in range(300):
            index.add_if_new(i * 0x0123_4567_89AB_CDEF & (2**64 - 1), f"https://a.example/{i}")
    with open_index(str(target), max_distance=5) as index:
        for i in range(10):
            index.add_if_new((i + 1) * 0x1111_0000_1111_0001, f"https://b.example/{i}")
    before = target.read_bytes()
    result = CliRunner().invoke(
        main, ["rebuild", "--index", str(source), "--max-distance", "5", "--into", str(target)]
    )
    assert result.exit_code == 1, result.output
    assert "not empty" in result.output and "Traceback" not in result.output
    assert target.read_bytes() == before
    with open_index(str(target)) as index:
        assert len(index) == 10


def test_rebuild_into_its_own_earlier_rebuild_completes_it(tmp_path):
    source, target = tmp_path / "source.db", tmp_path / "k5.db"
    with open_index(str(source)) as index:
        for i in range(50):
            index.add_if_new(i * 0x0123_4567_89AB_CDEF & (2**64 - 1), f"p{i}")
        pages = list(index.pages())
        features = index.parameters.features
    with open_index(str(target), max_distance=5, features=features) as partial:
        partial.add_pages(pages[:20])
    result = CliRunner().invoke(
        main, ["rebuild", "--index", str(source), "--max-distance", "5", "--into", str(target)]
    )
    assert result.exit_code == 0, result.output
    with open_index(str(target)) as index:
        assert len(index) == 50


# -- import: every field validated, nothing left behind ---------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def export_with(path: Path, *, base: float, deltas: list[int], header: dict | None = None):
    """An export whose pages have the base time *base* and these microsecond *deltas*."""
    import zlib

    features = MemoryIndex().parameters.features
    head = {"format": 1, "max_distance": 3, "blocks": 5, "features": features}
    head |= {"pages": len(deltas), "exported_at": 0.0} | (header or {})
    raw = json.dumps(head).encode()
    keys = [f"https://example.com/{i}".encode() for i in range(len(deltas))]
    body = b"".join(
        [
            b"".join(_varint(1) for _ in deltas),  # fingerprints 1, 2, 3...
            bytes(len(deltas)),
            struct.pack("<d", base),
            b"".join(_varint(d) for d in deltas),
            b"".join(_varint(len(k)) for k in keys),
            b"".join(keys),
        ]
    )
    path.write_bytes(MAGIC + bytes([1]) + len(raw).to_bytes(4, "big") + raw + zlib.compress(body))


BAD_TIMES = {
    "1e300": (1e300, [0, 0]),
    "-1e18": (-1e18, [0, 0]),
    "a 2**64-1 microsecond delta": (1.7e9, [0, 2**64 - 1]),
    "NaN": (math.nan, [0, 0]),
    "infinity": (math.inf, [0, 0]),
}


@pytest.mark.parametrize("name", sorted(BAD_TIMES))
def test_import_refuses_times_out_of_range_and_leaves_nothing(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    base, deltas = BAD_TIMES[name]
    export = tmp_path / "bad.simhash"
    export_with(export, base=base, deltas=deltas)
    target = tmp_path / "new.db"
    result = CliRunner().invoke(main, ["import", str(export), "--index", str(target)])
    assert result.exit_code == 1, result.output
    assert "time" in result.output and "Traceback" not in result.output
    assert not target.exists()


@pytest.mark.parametrize(
    "header",
    [
        {"max_distance": 10**30},
        {"max_distance": -1},
        {"blocks": 10**6},
        {"features": ["not", "text"]},
        {"exported_at": "NaN"},
        {"pages": 1.5},
        {"max_distance": True},
    ],
)
def test_import_refuses_a_header_out_of_range_and_leaves_nothing(tmp_path, monkeypatch, header):
    monkeypatch.chdir(tmp_path)
    export = tmp_path / "bad.simhash"
    export_with(export, base=1.7e9, deltas=[0, 1], header=header)
    target = tmp_path / "new.db"
    result = CliRunner().invoke(main, ["import", str(export), "--index", str(target)])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert not target.exists()


def test_an_imported_export_reads_back_in_stats(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    export = tmp_path / "good.simhash"
    export_with(export, base=1.7e9, deltas=[0, 10**6])
    target = tmp_path / "new.db"
    runner = CliRunner()
    assert runner.invoke(main, ["import", str(export), "--index", str(target)]).exit_code == 0
    result = runner.invoke(main, ["stats", "--index", str(target)])
    assert result.exit_code == 0, result.output


def test_deeply_nested_json_header_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    raw = b"[" * 100_000 + b"]" * 100_000
    export = tmp_path / "nested.simhash"
    export.write_bytes(MAGIC + bytes([1]) + len(raw).to_bytes(4, "big") + raw)
    with pytest.raises(ExportFormatError, match="header"):
        read_pages(export)
    result = CliRunner().invoke(main, ["import", str(export), "--index", str(tmp_path / "x.db")])
    assert result.exit_code == 1 and "header" in result.output, result.output
    assert not (tmp_path / "x.db").exists()


def test_keys_are_capped_and_import_memory_stays_bounded(tmp_path):
    from scrapy_simhash.index.base import MAX_KEY_BYTES, storable_key

    long = "https://example.com/" + "é" * MAX_KEY_BYTES
    stored = storable_key(long)
    assert len(stored.encode("utf-8")) <= MAX_KEY_BYTES and long.startswith(stored)
    index = MemoryIndex()
    index.add_pages([StoredPage(long, 5, 1.7e9)])
    [page] = index.pages()
    assert page.key == stored and index.find(long) == [page]
    export_index(index, tmp_path / "long.simhash")
    _, pages = read_pages(tmp_path / "long.simhash")
    assert [p.key for p in pages] == [stored]


# -- Redis URIs that cannot work ---------------------------------------------------------


def bad_redis_uris(port: int) -> list[str]:
    where = f"127.0.0.1:{port}/0"
    return [
        f"redis://:pa]ss@{where}",
        f"redis://:pa[ss@{where}",
        f"redis://[::1@{where}",
        f"redis://{where}?timeout=-1",
        f"redis://{where}?timeout=0",
        f"redis://{where}?timeout=nan",
        f"redis://{where}?timeout=inf",
        f"redis://{where}?ttl=100000000000000000000000d",
        f"redis://{where}?bucket_bits=100000",
        f"redis://{where}?bucket_bits=-3",
    ]


def test_malformed_redis_uris_are_one_line_errors(redis_server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for uri in bad_redis_uris(redis_server.port):
        with pytest.raises(SimhashError):
            open_index(uri).close()
        result = CliRunner().invoke(main, ["stats", "--index", uri])
        assert result.exit_code == 1, (uri, result.output, result.exception)
        assert result.output.startswith("Error: "), (uri, result.output)


def test_malformed_redis_uri_stops_the_crawl_in_one_line(redis_server, tmp_path):
    from crawls import run_crawl

    for uri in (
        f"redis://:pa]ss@127.0.0.1:{redis_server.port}/0",
        f"redis://127.0.0.1:{redis_server.port}/0?timeout=nan",
    ):
        log = run_crawl(tmp_path, uri, pages=2)
        assert "'finish_reason': 'simhash_setup_error'" in log, log
        assert "Traceback" not in log, log


# -- the CLI on ordinary but large or deep input ----------------------------------------


def test_dedup_a_csv_feed_with_a_field_over_128_kb(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    import csv

    feed = tmp_path / "items.csv"
    with open(feed, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["url", "content"])
        writer.writerow(["https://example.com/big", "<p>" + ARTICLE * 400 + "</p>"])
        writer.writerow(["https://example.com/copy", "<p>" + ARTICLE * 400 + "</p>"])
    assert feed.stat().st_size > 2 * 131072
    result = CliRunner().invoke(main, ["dedup", str(feed), "-o", str(tmp_path / "out.csv")])
    assert result.exit_code == 0, (result.output, result.exception)
    assert "2 items: kept 1, dropped 1" in result.output, result.output


@pytest.mark.parametrize("suffix", [".json", ".jl"])
def test_dedup_a_deeply_nested_json_feed(tmp_path, monkeypatch, suffix):
    monkeypatch.chdir(tmp_path)
    feed = tmp_path / f"items{suffix}"
    deep = "[" * 100_000 + "]" * 100_000
    text = f"[{deep}]" if suffix == ".json" else deep + "\n"
    feed.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["dedup", str(feed), "-o", str(tmp_path / f"out{suffix}")])
    assert result.exit_code == 1, (result.output, result.exception)
    assert result.output.startswith("Error: ") and "nested" in result.output, result.output


@pytest.mark.parametrize("suffix", [".json", ".jl"])
def test_dedup_a_json_feed_with_a_number_of_5000_digits(tmp_path, monkeypatch, suffix):
    monkeypatch.chdir(tmp_path)
    feed = tmp_path / f"items{suffix}"
    item = '{"url": "a", "content": ' + "9" * 5000 + "}"
    feed.write_text(f"[{item}]" if suffix == ".json" else item + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["dedup", str(feed), "-o", str(tmp_path / f"o{suffix}")])
    assert result.exit_code == 1, (result.output, result.exception)
    assert result.output.startswith("Error: ") and "digits" in result.output, result.output


@pytest.mark.parametrize("value", ["99999999999d", "1e400", "99999999999999999999w"])
def test_expire_with_a_duration_out_of_range(tmp_path, monkeypatch, value):
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "index.db"
    with open_index(str(target)) as index:
        index.add_if_new(5, "a")
    result = CliRunner().invoke(
        main, ["expire", "--older-than", value, "--yes", "--index", str(target)]
    )
    assert result.exit_code == 2, (result.output, result.exception)
    assert "--older-than" in result.output, result.output


def test_no_traceback_on_python_dash_m_with_hostile_options(tmp_path):
    import subprocess

    from pipelines import subprocess_env

    out = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "stats", "--index", "redis://:a]b@x:1/0"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=subprocess_env(),
    )
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr


# -- settings that cannot work stop the crawl at its start -------------------------------


@pytest.mark.parametrize(
    ("setting", "value", "says"),
    [
        ("SIMHASH_TOP_N", 10**23, "SIMHASH_TOP_N"),
        ("SIMHASH_WORKERS", 10**9, "SIMHASH_WORKERS"),
        ("SIMHASH_WORKER_TIMEOUT", float("inf"), "SIMHASH_WORKER_TIMEOUT"),
        ("SIMHASH_WORKER_TIMEOUT", float("nan"), "SIMHASH_WORKER_TIMEOUT"),
        ("SIMHASH_INDEX_URI", "sqlite:///{tmp}/x.db?timeout=nan", "timeout"),
        ("SIMHASH_INDEX_URI", "sqlite:///{tmp}/x.db?timeout=inf", "timeout"),
        ("SIMHASH_INDEX_URI", "sqlite:///{tmp}/x.db?timeout=-1", "timeout"),
        ("SIMHASH_INDEX_URI", "redis://127.0.0.1:1/0?ttl=100000000000000000000000d", "ttl"),
    ],
)
def test_settings_that_cannot_work_stop_the_crawl_at_start(tmp_path, caplog, setting, value, says):
    from pipelines import make_crawler
    from scrapy import signals
    from scrapy.exceptions import CloseSpider, NotConfigured

    from scrapy_simhash import SimhashDedupPipeline

    if isinstance(value, str):
        value = value.format(tmp=tmp_path)
    crawler = make_crawler(tmp_path, **{setting: value})
    try:
        pipeline = SimhashDedupPipeline.from_crawler(crawler)
    except NotConfigured:
        # Refused in from_crawler: the crawl is stopped when the spider opens.
        [(_, failure)] = [
            (receiver, result)
            for receiver, result in crawler.signals.send_catch_log(signal=signals.spider_opened)
            if "refuse_to_start" in getattr(receiver, "__qualname__", "")
        ]
        error = failure.value
    else:
        with pytest.raises(CloseSpider) as excinfo:
            pipeline.open_spider()
        error = excinfo.value
    assert isinstance(error, CloseSpider) and error.reason == "simhash_setup_error"
    [line] = [r.getMessage() for r in caplog.records if r.name.startswith("scrapy_simhash")]
    assert says in line and line.endswith("The crawl is stopped before it starts."), line
    assert not (tmp_path / "x.db").exists()


# -- weak spots: FIFOs, crowded tags, weak passphrases -----------------------------------


def test_a_fifo_as_the_index_path_is_refused_not_waited_on(tmp_path):
    import subprocess

    from pipelines import subprocess_env

    fifo = tmp_path / "index.db"
    os.mkfifo(fifo)
    out = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "stats", "--index", str(fifo)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=subprocess_env(),
        timeout=60,
    )
    assert out.returncode == 1, out.stderr
    assert "not a regular file" in out.stderr and "Traceback" not in out.stderr
    from crawls import run_crawl

    log = run_crawl(tmp_path, f"sqlite:///{fifo}", pages=2, timeout=120)
    assert "'finish_reason': 'simhash_setup_error'" in log, log[-2000:]
    assert "not a regular file" in log


def test_an_element_with_300000_attributes_is_cut_and_counted(tmp_path):
    from scrapy_simhash.items import MAX_ATTRIBUTES, cut_crowded_tags

    crowded = " ".join(f'a{i}="v"' for i in range(300_000))
    page = f'<html><body><div {crowded}><p>{ARTICLE}</p></div><img src="x" alt="y"></body>'
    cut, changed = cut_crowded_tags(page)
    assert changed and len(cut) < 1000 + len(ARTICLE)
    assert cut == f'<html><body><div><p>{ARTICLE}</p></div><img src="x" alt="y"></body>'
    # At the cap, nothing is cut; a quoted '>' does not hide the attributes after it.
    enough = " ".join(f"a{i}" for i in range(MAX_ATTRIBUTES - 1))
    assert cut_crowded_tags(f"<div {enough}>x</div>") == (f"<div {enough}>x</div>", False)
    hidden = f'<div title=">" {crowded}><p>{ARTICLE}</p></div>'
    assert cut_crowded_tags(hidden) == (f'<div title="><p>{ARTICLE}</p></div>', True)


@pytest.mark.parametrize("workers", [0, 1])
@deferred_f_from_coro_f
async def test_a_crowded_page_is_counted_as_truncated(tmp_path, workers):
    crowded = " ".join(f'a{i}="v"' for i in range(300_000))
    pipeline = make_pipeline(tmp_path, SIMHASH_WORKERS=workers)
    item = {"url": "u", "content": f"<html><body><div {crowded}><p>{ARTICLE}</p></div></body>"}
    assert await pipeline.process_item(item) is item
    counted = simhash_stats(pipeline)
    assert counted["simhash"] == 1 and counted["truncated"] == 1, counted
    pipeline.close_spider()


def test_weak_passphrases_are_refused_and_random_keys_offered(tmp_path, monkeypatch):
    from scrapy_simhash.fingerprint import seed_from_secret

    for weak in ("password1234", "hunter2hunter2", "abcdefghijkl", "my crawler secret"):
        with pytest.raises(ValueError, match="too easy to guess") as excinfo:
            seed_from_secret(weak)
        assert weak not in str(excinfo.value)
    for strong in ("correct horse battery staple", "ein längeres Passwort für den Crawler"):
        assert len(seed_from_secret(strong)) == 16
    monkeypatch.chdir(tmp_path)
    keys = set()
    for _ in range(2):
        result = CliRunner().invoke(main, ["secret"])
        assert result.exit_code == 0, result.output
        key = result.output.split("'")[1]
        assert seed_from_secret(key) == bytes.fromhex(key)
        keys.add(key)
    assert len(keys) == 2


def test_the_log_stays_bounded_beside_a_reader_of_every_page(tmp_path, monkeypatch):
    """A rebuild, export or expire reads every page, slowly when its target is slow; a
    crawl's commits meanwhile must still be checkpointed. Before pages() read in short
    transactions, the log held every commit made during the read (56 KB each)."""
    import random

    from scrapy_simhash.index import sqlite as sqlite_module
    from scrapy_simhash.index.sqlite import SqliteIndex

    monkeypatch.setattr(sqlite_module, "AUTOCHECKPOINT_PAGES", 100)
    wal_bound = (100 + 64) * 4096
    path = tmp_path / "index.db"
    rng = random.Random(3)
    with SqliteIndex(path) as index:
        index.add_pages(StoredPage(f"p{n}", rng.getrandbits(64), 1.7e9 + n) for n in range(25_000))
    largest = 0
    with SqliteIndex(path, read_only=True) as reader, SqliteIndex(path) as crawl:
        walk = reader.pages()
        read = [next(walk)]
        for n in range(1500):
            crawl.add_if_new(rng.getrandbits(64), f"new{n}")
            if n % 3 == 0:
                read.append(next(walk))  # the reader goes on, slowly
            if n % 50 == 0:
                largest = max(largest, Path(f"{path}-wal").stat().st_size)
        read.extend(walk)
    assert largest < wal_bound, f"the log grew to {largest:,} bytes"
    assert [p.key for p in read] == [f"p{n}" for n in range(25_000)]
