"""``scrapy-simhash dedup`` as an archive job: feeds, WARC and Parquet in, kept records in
the input's format and a decisions table out, the same decisions as the pipeline."""

from __future__ import annotations

import csv
import io
import json

import pytest
from archive_feeds import feed_items, pipeline_verdicts
from click.testing import CliRunner

from scrapy_simhash.cli import main
from scrapy_simhash.index import open_index
from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.feeds import read_feed, write_feed

pytestmark = pytest.mark.corpus


@pytest.fixture
def items(corpora):
    return feed_items(corpora, seed=31, limit=80)


@pytest.fixture(scope="module")
def config():
    return SimhashSettings.from_settings({})


def dedup(*args: str):
    result = CliRunner().invoke(main, ["dedup", *args], catch_exceptions=False)
    return result


def decisions(path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_an_archive_job_keeps_what_the_one_feed_dedup_keeps(items, tmp_path):
    feed = tmp_path / "items.jl"
    write_feed(feed, items)
    old = dedup(str(feed), "-o", str(tmp_path / "old.jl"))
    assert old.exit_code == 0, old.output
    new = dedup(str(feed), "--engine", "local", "-o", str(tmp_path / "new.jl"), "--json")
    assert new.exit_code == 0, new.output
    assert (tmp_path / "new.jl").read_bytes() == (tmp_path / "old.jl").read_bytes()
    summary = json.loads(new.stdout)
    assert summary["records"] == len(items) and summary["dropped"] > 5
    assert set(summary["stages"]) >= {"fingerprint", "plan", "decide"}
    rows = decisions(tmp_path / "items.jl.decisions.csv")
    assert len(rows) == len(items)
    dropped = [r for r in rows if r["decision"] == "dropped"]
    assert len(dropped) == summary["dropped"]
    assert all(r["matched_record"].startswith("items.jl@") and r["distance"] for r in dropped)


def test_an_archive_job_writes_the_clusters_report_writes(items, tmp_path):
    feed = tmp_path / "items.jl"
    write_feed(feed, items)
    table = tmp_path / "clusters.jl"
    done = dedup(str(feed), "--engine", "local", "--clusters", str(table))
    assert done.exit_code == 0, done.output
    assert f"Clusters: {table}" in done.output
    rows = [json.loads(line) for line in table.read_text(encoding="utf-8").splitlines()]
    assert list(rows[0]) == ["cluster", "key", "kept", "reason", "distance", "share"]
    decided = {r["key"]: r for r in decisions(tmp_path / "items.jl.decisions.csv")}
    assert {r["key"] for r in rows} == set(decided)
    cluster_of_kept = {r["key"]: r["cluster"] for r in rows if r["reason"] == "kept"}
    for row in rows:
        decision = decided[row["key"]]
        if row["reason"] == "kept":
            assert decision["decision"] == "kept" and row["kept"] == row["key"]
        else:
            assert decision["decision"] == "dropped" and row["kept"] == decision["matched_key"]
            assert row["cluster"] == cluster_of_kept[row["kept"]]
            assert row["distance"] == int(decision["distance"])
    assert sum(r["reason"] != "kept" for r in rows) > 5


def test_clusters_is_for_an_archive_job(tmp_path):
    feed = tmp_path / "items.jl"
    feed.write_text('{"url": "a", "content": "x"}\n', encoding="utf-8")
    done = dedup(str(feed), "--clusters", str(tmp_path / "c.csv"))
    assert done.exit_code == 1 and "--clusters is for an archive job" in done.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--engine", "local", "--report", "r.csv"], "Error: --report is the one-feed "),
        (["--decisions", "d.csv"], "Error: --decisions is for an archive job"),
        (["--add-kept"], "Error: --add-kept is for an archive job"),
    ],
)
def test_the_options_of_the_other_mode_are_refused(tmp_path, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    feed = tmp_path / "items.jl"
    feed.write_text('{"url": "a", "content": "x"}\n', encoding="utf-8")
    done = dedup(str(feed), *args)
    assert done.exit_code == 1 and message in done.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["items.jl"]  # nothing written


def warc_of(items: list[dict], path) -> None:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with open(path, "wb") as f:
        writer = WARCWriter(f, gzip=True)
        writer.write_record(writer.create_warcinfo_record("x.warc.gz", {"software": "test"}))
        for item in items:
            page = f"<html><body><p>{item.get('content', '')}</p></body></html>".encode()
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", "text/html; charset=utf-8")], protocol="HTTP/1.1"
            )
            writer.write_record(
                writer.create_warc_record(
                    item["url"], "response", payload=io.BytesIO(page), http_headers=headers
                )
            )


def test_a_warc_file_decides_as_the_pipeline_and_keeps_a_valid_warc(items, config, tmp_path):
    pytest.importorskip("warcio", reason="needs the [warc] extra")
    from warcio.archiveiterator import ArchiveIterator

    warc = tmp_path / "crawl.warc.gz"
    warc_of(items, warc)
    result = dedup(str(warc), "--fields", "body")
    assert result.exit_code == 0, result.output
    rows = decisions(tmp_path / "crawl.warc.gz.decisions.csv")
    pages = [
        {"url": i["url"], "body": f"<html><body><p>{i.get('content', '')}</p></body></html>"}
        for i in items
    ]
    verdicts = pipeline_verdicts(
        SimhashSettings.from_settings({"SIMHASH_TEXT_FIELDS": ["body"]}), pages
    )
    assert [r["decision"] == "kept" for r in rows] == [v.match is None for v in verdicts]
    assert [r["matched_key"] for r in rows] == [v.match.key if v.match else "" for v in verdicts]
    with open(tmp_path / "crawl.kept.warc.gz", "rb") as f:
        kept = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)]
    assert kept == [r["key"] for r in rows if r["decision"] == "kept"]


@pytest.mark.slow
def test_parquet_in_parquet_out(items, config, tmp_path):
    pa = pytest.importorskip("pyarrow", reason="needs the [parquet] extra")
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(
        [{"url": i["url"], "title": i.get("title"), "content": i.get("content")} for i in items]
    )
    pq.write_table(table, tmp_path / "items.parquet")
    out = tmp_path / "decisions.parquet"
    result = dedup(str(tmp_path / "items.parquet"), "--decisions", str(out))
    assert result.exit_code == 0, result.output
    verdicts = pipeline_verdicts(config, table.to_pylist())
    kept = pq.read_table(tmp_path / "items.kept.parquet").to_pylist()
    assert [row["url"] for row in kept] == [
        i["url"] for i, v in zip(items, verdicts, strict=True) if v.match is None
    ]
    assert pq.read_table(out).num_rows == len(items)


def test_kept_records_can_be_added_to_an_index(items, config, tmp_path):
    feed = tmp_path / "items.jl"
    write_feed(feed, items)
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    first = dedup(str(feed), "--engine", "local", "--index", uri, "--add-kept", "--json")
    assert first.exit_code == 0, first.output
    summary = json.loads(first.stdout)
    with open_index(uri) as index:
        assert len(index) == summary["added_to_index"] == summary["kept"] - summary["no_text"]
    # The same feed again: every page is already stored, as a second crawl would find.
    again = tmp_path / "again.jl"
    write_feed(again, read_feed(feed))
    second = dedup(str(again), "--engine", "local", "--index", uri, "--json")
    assert second.exit_code == 0, second.output
    assert json.loads(second.stdout)["kept"] == summary["no_text"]
    statuses = {r["status"] for r in decisions(tmp_path / "again.jl.decisions.csv")}
    assert "unchanged" in statuses


def test_one_feed_options_and_archive_options_do_not_mix(items, tmp_path):
    feed = tmp_path / "items.jl"
    write_feed(feed, items[:5])
    report = dedup(str(feed), "--engine", "local", "--report", str(tmp_path / "r.csv"))
    assert report.exit_code != 0 and "--decisions" in report.output
    decided = dedup(str(feed), "--decisions", str(tmp_path / "d.csv"))
    assert decided.exit_code != 0 and "--engine local" in decided.output
    two = dedup(str(feed), str(feed), "-o", str(tmp_path / "x.jl"))
    assert two.exit_code != 0 and "several inputs" in two.output
