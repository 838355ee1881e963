"""``dedup`` archive jobs on hostile inputs, outputs and servers (issue #43, items 4-7):
a truncated or corrupt archive is refused, never read as complete; an output that is the
input under another name (a hard link) is refused; a scheduler that never answers or
refuses is one line after a bounded wait; no password is ever printed."""

from __future__ import annotations

import io
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from scrapy_simhash.cli import main


def dedup(*args: str):
    return CliRunner().invoke(main, ["dedup", *args])


def assert_one_line_error(result, *needles: str) -> str:
    """Exit non-zero through click (no exception escaping), no traceback, one line."""
    assert result.exit_code not in (0, None), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.exception,
        result.output,
    )
    text = result.output
    assert "Traceback" not in text, text
    errors = [line for line in text.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, text
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


def page_text(i: int) -> str:
    # Distinct pages: each its own words, long enough to be fingerprinted.
    return " ".join(f"topic{i}x{j} word{(i * 31 + j * 7) % 101}" for j in range(120))


def write_warc(path: Path, count: int = 30, *, gzip: bool = True) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=gzip)
        writer.write_record(writer.create_warcinfo_record(path.name, {"software": "test"}))
        for i in range(count):
            page = f"<html><body><p>{page_text(i)}</p></body></html>".encode()
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
            )
            writer.write_record(
                writer.create_warc_record(
                    f"https://example.com/{i}",
                    "response",
                    payload=io.BytesIO(page),
                    http_headers=headers,
                )
            )


def write_feed(path: Path, count: int = 20) -> bytes:
    lines = [
        json.dumps({"url": f"https://example.com/{i}", "content": page_text(i % 12)}) + "\n"
        for i in range(count)
    ]
    data = "".join(lines).encode()
    path.write_bytes(data)
    return data


# -- 4. a truncated or corrupt WARC ------------------------------------------------------


@pytest.mark.parametrize("suffix", [".warc.gz", ".warc"])
@pytest.mark.parametrize("fraction", [2 / 3, 0.5, 0.97])
def test_a_truncated_warc_is_refused_and_nothing_is_written(tmp_path, suffix, fraction):
    pytest.importorskip("warcio", reason="needs the [warc] extra")
    whole = tmp_path / f"whole{suffix}"
    write_warc(whole, gzip=suffix.endswith(".gz"))
    complete = dedup(str(whole), "--fields", "body")
    assert complete.exit_code == 0 and "30 records" in complete.output, complete.output
    data = whole.read_bytes()
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(data[: int(len(data) * fraction)])
    result = dedup(str(cut), "--fields", "body")
    line = assert_one_line_error(result, str(cut))
    assert "truncated" in line, line
    assert not (tmp_path / f"cut.kept{suffix}").exists()
    assert not (tmp_path / f"cut{suffix}.decisions.csv").exists()


def test_a_warc_gz_cut_inside_its_last_gzip_trailer_is_refused(tmp_path):
    # The last record's text is all there, only the end of its gzip member is missing.
    pytest.importorskip("warcio", reason="needs the [warc] extra")
    whole = tmp_path / "whole.warc.gz"
    write_warc(whole)
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(whole.read_bytes()[:-4])
    assert_one_line_error(dedup(str(cut), "--fields", "body"), str(cut), "truncated")


def test_a_corrupt_warc_gz_is_one_line_without_its_bytes(tmp_path):
    pytest.importorskip("warcio", reason="needs the [warc] extra")
    whole = tmp_path / "whole.warc.gz"
    write_warc(whole)
    data = whole.read_bytes()
    bad = tmp_path / "bad.warc.gz"
    bad.write_bytes(data[:1000] + b"\x00garbage" * 100 + data[2000:])
    line = assert_one_line_error(dedup(str(bad), "--fields", "body"), str(bad))
    assert line.isprintable(), line
    assert not (tmp_path / "bad.kept.warc.gz").exists()


@pytest.mark.slow  # a Dask cluster; the fast lane has the local engine's
def test_a_truncated_warc_is_refused_on_dask(tmp_path):
    pytest.importorskip("warcio", reason="needs the [warc] extra")
    pytest.importorskip("distributed", reason="needs the [dask] extra")
    whole = tmp_path / "whole.warc.gz"
    write_warc(whole)
    data = whole.read_bytes()
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    result = dedup(str(cut), "--fields", "body", "--engine", "dask", "--workers", "1")
    assert_one_line_error(result, str(cut), "truncated")
    assert not (tmp_path / "cut.kept.warc.gz").exists()


# -- weak spots: Parquet that is not, a field that is not there --------------------------


def test_a_parquet_that_is_not_parquet_is_one_line(tmp_path):
    pytest.importorskip("pyarrow", reason="needs the [parquet] extra")
    fake = tmp_path / "fake.parquet"
    fake.write_text("url,content\nhttps://example.com/,hello\n")
    assert_one_line_error(dedup(str(fake)), str(fake), "Parquet")


def test_a_parquet_without_the_text_field_warns_naming_the_fields(tmp_path):
    pa = pytest.importorskip("pyarrow", reason="needs the [parquet] extra")
    import pyarrow.parquet as pq

    path = tmp_path / "pages.parquet"
    pq.write_table(
        pa.Table.from_pylist(
            [{"url": f"https://example.com/{i}", "body": page_text(i)} for i in range(6)]
        ),
        path,
    )
    result = dedup(str(path), "--fields", "content")
    assert result.exit_code == 0, result.output
    warning = [line for line in result.output.splitlines() if "warning" in line.lower()]
    assert warning, result.output
    assert "content" in warning[0] and "body" in warning[0] and "url" in warning[0], warning


# -- 5. an output hard-linked to the input -----------------------------------------------


@pytest.mark.parametrize(
    ("engine", "option"),
    [(None, "-o"), (None, "--report"), ("local", "-o"), ("local", "--decisions")],
)
def test_an_output_hard_linked_to_the_input_is_refused(tmp_path, engine, option):
    feed = tmp_path / "a.jl"
    data = write_feed(feed)
    other = tmp_path / "sub" / "hard.jl"
    other.parent.mkdir()
    os.link(feed, other)
    args = [str(feed), option, str(other)]
    if engine:
        args += ["--engine", engine]
    line = assert_one_line_error(dedup(*args), str(other))
    assert "is the same file as" in line or "would overwrite" in line, line
    assert feed.read_bytes() == data


def test_a_hard_linked_input_given_twice_is_not_overwritten_by_its_kept_file(tmp_path):
    # Several inputs write NAME.kept.EXT beside each; one input's kept file must not be a
    # hard link to another input.
    first = tmp_path / "a.jl"
    data = write_feed(first)
    second = tmp_path / "b.jl"
    write_feed(second, 5)
    (tmp_path / "b.kept.jl").unlink(missing_ok=True)
    os.link(first, tmp_path / "b.kept.jl")
    result = dedup(str(first), str(second))
    assert_one_line_error(result, "b.kept.jl")
    assert first.read_bytes() == data


# -- 6. a scheduler that never answers, or refuses ---------------------------------------


@pytest.fixture
def silent_server():
    """A TCP server that accepts connections and never says a word."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted = []
    stop = threading.Event()

    def serve():
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def test_a_scheduler_that_never_answers_is_one_line_after_the_timeout(tmp_path, silent_server):
    pytest.importorskip("distributed", reason="needs the [dask] extra")
    port, accepted = silent_server
    feed = tmp_path / "a.jl"
    write_feed(feed)
    start = time.monotonic()
    result = dedup(str(feed), "--scheduler", f"tcp://127.0.0.1:{port}", "--connect-timeout", "2")
    took = time.monotonic() - start
    assert accepted, "the client never connected"
    assert_one_line_error(result, f"127.0.0.1:{port}", "2")
    assert took < 20, took
    assert not (tmp_path / "a.kept.jl").exists()


@pytest.mark.slow  # a Dask scheduler and workers
def test_a_real_scheduler_still_runs_the_job(tmp_path):
    # The bounded first connection must not get in the way of a scheduler that answers.
    distributed = pytest.importorskip("distributed", reason="needs the [dask] extra")
    feed = tmp_path / "a.jl"
    write_feed(feed)
    local = dedup(str(feed), "--engine", "local", "-o", str(tmp_path / "local.jl"))
    assert local.exit_code == 0, local.output
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        result = dedup(
            str(feed), "--scheduler", cluster.scheduler_address, "-o", str(tmp_path / "d.jl")
        )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d.jl").read_bytes() == (tmp_path / "local.jl").read_bytes()


def test_a_refused_scheduler_with_credentials_is_one_line_without_them(tmp_path):
    pytest.importorskip("distributed", reason="needs the [dask] extra")
    feed = tmp_path / "a.jl"
    write_feed(feed)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nobody listens there
    for address in (f"tcp://127.0.0.1:{port}", f"tcp://user:Pw-S3cr3t-xyzzy@127.0.0.1:{port}"):
        start = time.monotonic()
        result = dedup(str(feed), "--scheduler", address, "--connect-timeout", "1")
        assert time.monotonic() - start < 20
        assert_one_line_error(result, f"127.0.0.1:{port}")
        assert "Pw-S3cr3t" not in result.output, result.output


@pytest.mark.slow  # a child process; the fast lane has the same timeout in this one
def test_connect_timeout_on_the_command_line_in_a_real_process(tmp_path, silent_server):
    # The real command, as a user runs it: a bounded wait, one line on stderr, exit 1.
    import subprocess

    from pipelines import subprocess_env

    pytest.importorskip("distributed", reason="needs the [dask] extra")
    port, _ = silent_server
    feed = tmp_path / "a.jl"
    write_feed(feed)
    scheduler = f"tcp://127.0.0.1:{port}"
    command = ["dedup", str(feed), "--scheduler", scheduler, "--connect-timeout", "2"]
    out = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", *command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=subprocess_env(),
        timeout=120,
    )
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.stderr.count("Error:") == 1, out.stderr


# -- 7. --add-kept never prints the Redis password ---------------------------------------

PASSWORD = "Pw-S3cr3t-xyzzy"


@pytest.mark.parametrize("user", ["", "default"])
def test_add_kept_never_prints_the_redis_password(make_redis_server, tmp_path, user):
    server = make_redis_server("--requirepass", PASSWORD)
    uri = f"redis://{user}:{quote(PASSWORD, safe='')}@127.0.0.1:{server.port}/0?prefix=k{user}"
    feed = tmp_path / "a.jl"
    write_feed(feed)
    for extra in ([], ["--json"]):
        result = dedup(str(feed), "--engine", "local", "--index", uri, "--add-kept", *extra)
        assert result.exit_code == 0, result.output
        assert "Added" in result.output or "added_to_index" in result.output, result.output
        assert PASSWORD not in result.output and "S3cr3t" not in result.output, result.output
