"""Hostile exports, feeds, URIs and options given to the command: one-line errors, never
a traceback, a leaked password, or a change to an index that was refused."""

from __future__ import annotations

import json
import math
import struct
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner
from pipelines import ARTICLE

from scrapy_simhash import open_index
from scrapy_simhash.cli import main
from scrapy_simhash.exceptions import ExportFormatError, SimhashError
from scrapy_simhash.index.base import StoredPage
from scrapy_simhash.index.memory import MemoryIndex
from scrapy_simhash.tools.transfer import MAGIC, export_index, read_pages

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
            index.check_and_add(i * 0x0101_0101_0101_0101 + 7, f"page{i}")
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
            index.check_and_add(i * 0x0123_4567_89AB_CDEF & (2**64 - 1), f"https://a.example/{i}")
    with open_index(str(target), max_distance=5) as index:
        for i in range(10):
            index.check_and_add((i + 1) * 0x1111_0000_1111_0001, f"https://b.example/{i}")
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
            index.check_and_add(i * 0x0123_4567_89AB_CDEF & (2**64 - 1), f"p{i}")
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
        index.check_and_add(5, "a")
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


def test_weak_passphrases_are_refused_and_random_keys_offered(tmp_path, monkeypatch):
    from scrapy_simhash.analysis.fingerprint import seed_from_secret

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
