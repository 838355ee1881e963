"""``scrapy-simhash report`` without a browser: clusters, the --clusters table, marked
passages and the HTML page, on an index built with a Deduplicator on texts."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from scrapy_simhash import open_index
from scrapy_simhash.cli import main
from scrapy_simhash.dedup import Deduplicator
from scrapy_simhash.exceptions import FeedError
from scrapy_simhash.index.base import DropRecord, Match
from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.clusters import CLUSTER_COLUMNS, clusters_of, index_rows, write_rows
from scrapy_simhash.tools.fingerprinted import fingerprinted_text, item_from_page
from scrapy_simhash.tools.html_report import Limits, gather, render, site_of
from scrapy_simhash.tools.passages import mark, own_passages, shared_fraction
from scrapy_simhash.tools.report_page import bar_chart

SITE = Path(__file__).resolve().parents[1] / "sites" / "middleware" / "site"
PAGES = ["tram.html", "drought.html", "only-via-copy.html", "only-via-mirror.html"]
COPIES = {"tram-copy.html": "tram.html", "drought-mirror.html": "drought.html"}


def page_text(path: Path) -> str:
    """The text a crawl with the default settings fingerprints for the page at *path*."""
    config = SimhashSettings()
    page = item_from_page(path.read_text(encoding="utf-8"), path.as_uri(), config)
    return str(fingerprinted_text(page, config))


def drop(key: str, kept: str, distance: int = 1, **kw) -> DropRecord:
    return DropRecord(key, kept, distance, False, 0.0, **kw)


@pytest.fixture
def pages_dir(tmp_path) -> Path:
    for name in [*PAGES, *COPIES]:
        (tmp_path / name).write_bytes((SITE / name).read_bytes())
    return tmp_path


@pytest.fixture
def index_uri(pages_dir) -> str:
    """Four pages kept, two copies dropped, keyed by their file:// URLs."""
    uri = f"sqlite:///{pages_dir / 'index.db'}"
    config = SimhashSettings()
    with open_index(uri) as index:
        dedup = Deduplicator(index, config.fingerprinter, min_terms=config.min_terms)
        for name in [*PAGES, *COPIES]:
            key = (pages_dir / name).as_uri()
            verdict = dedup.check_text(page_text(pages_dir / name), key)
            if verdict.match:
                index.record_drop(key, verdict.match)
    return uri


def test_clusters_largest_first_and_each_page_once():
    drops = [
        drop("a1", "A"),
        drop("b1", "B", 2),
        drop("b2", "B", 0),
        drop("a1", "A", 3),  # dropped again on a later crawl: its latest drop counts
        drop("A", "A", unchanged=True),  # a re-visit, no copy
    ]
    clusters = clusters_of(drops)
    assert [(c.id, c.kept, [d.key for d in c.copies]) for c in clusters] == [
        (1, "B", ["b2", "b1"]),
        (2, "A", ["a1"]),
    ]
    assert clusters[1].copies[0].distance == 3


def test_cluster_rows_give_every_page_a_cluster(index_uri, pages_dir):
    with open_index(index_uri, read_only=True) as index:
        rows = list(index_rows(index))
    assert len(rows) == len(PAGES) + len(COPIES)
    assert {r["key"] for r in rows} == {(pages_dir / n).as_uri() for n in [*PAGES, *COPIES]}
    copies = {Path(r["key"]).name: r for r in rows if r["reason"] != "kept"}
    assert {n: Path(r["kept"]).name for n, r in copies.items()} == COPIES
    for row in copies.values():
        assert row["cluster"] in (1, 2) and row["distance"] is not None
    singles = [r for r in rows if r["cluster"] > 2]
    assert len(singles) == 2 and all(r["kept"] == r["key"] for r in singles)


@pytest.mark.parametrize("suffix", [".csv", ".jl", ".parquet"])
def test_write_rows(tmp_path, suffix):
    rows = [
        {"cluster": 1, "key": "k", "kept": "k", "reason": "kept", "distance": None, "share": None},
        {"cluster": 1, "key": "=c", "kept": "k", "reason": "distance", "distance": 2, "share": 0.9},
    ]
    path = tmp_path / f"clusters{suffix}"
    assert write_rows(path, rows, CLUSTER_COLUMNS) == 2
    if suffix == ".csv":
        read = list(csv.DictReader(path.open(encoding="utf-8")))
        assert read[0]["distance"] == "" and read[1]["key"] == "'=c"  # spreadsheet-safe
    elif suffix == ".jl":
        assert [json.loads(line) for line in path.open(encoding="utf-8")] == rows
    else:
        pq = pytest.importorskip("pyarrow.parquet")
        assert pq.read_table(path).to_pylist() == rows


def test_mark_shared_and_own_passages():
    kept = "The council approved the new tram line on Monday after a long debate in the hall."
    copy = kept + " Subscribe to our newsletter for more local stories every single week."
    copy_segments, kept_segments = mark(copy, kept)
    assert copy_segments[0] == (kept + " ", True)
    assert own_passages(copy_segments) == [
        "Subscribe to our newsletter for more local stories every single week."
    ]
    assert 0.4 < shared_fraction(copy_segments) < 0.7
    assert kept_segments == [(kept, True)]
    cjk_copy, _ = mark(
        "北岭县启动集中育秧机械插秧工作，今年春耕", "今年北岭县启动集中育秧机械插秧工作"
    )
    assert any(shared and "集中育秧" in text for text, shared in cjk_copy)


def test_site_of():
    assert site_of("https://News.example/a") == "news.example"
    assert site_of("file:///tmp/a.html") == "file:"
    assert site_of("some-key") == "(no site)"


def test_bar_chart_titles_each_bar():
    svg = bar_chart([("0", 3), ("1", 0), ("2", 1)], label="x", colour="#000", css_class="c")
    assert svg.count("<rect") == 2 and "<title>0: 3</title>" in svg


def test_render_with_and_without_texts(index_uri, pages_dir):
    with open_index(index_uri, read_only=True) as index:
        report = gather(index, sample=10)
    page = render(report, lambda key: page_text(Path(key.removeprefix("file://"))))
    assert page.count('<section class="cluster"') == 2
    assert page.count('<div class="pair">') == 2 and "<mark>" in page
    assert "Every cluster is shown" in page and "<script>" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    bare = render(report, None, limits=Limits(clusters=1), clusters_file="all.csv")
    assert bare.count('<section class="cluster"') == 1 and '<div class="pair">' not in bare
    assert "the <strong>1 largest</strong> of 2 clusters; the rest are in all.csv" in bare
    assert "No text of" not in bare  # no texts asked for: nothing to say about them
    unreadable = render(report, lambda key: None)
    assert unreadable.count("No text of") == 2 and '<div class="pair">' not in unreadable


def test_report_command(index_uri, pages_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    out, table = tmp_path / "report.html", tmp_path / "clusters.jl"
    result = CliRunner().invoke(
        main,
        ["report", "-o", str(out), "--index", index_uri, "--clusters", str(table)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    assert "2 of 2 clusters with copies" in result.output
    assert "Clusters: " in result.output and "(6 pages)" in result.output
    assert out.read_text("utf-8").count('<div class="pair">') == 2  # read from file:// again
    assert len(table.read_text("utf-8").splitlines()) == 6


def test_report_refuses_a_bad_table_suffix(index_uri, tmp_path):
    result = CliRunner().invoke(
        main,
        ["report", "-o", str(tmp_path / "r.html"), "--index", index_uri, "--clusters", "x.txt"],
    )
    assert result.exit_code == 1 and ".csv, .jl or .parquet" in result.output


def test_match_share_reaches_the_page(tmp_path):
    with open_index(f"sqlite:///{tmp_path / 'i.db'}") as index:
        index.check_and_add(2**40, "https://a.example/kept")
        index.record_drop(
            "https://b.example/copy", Match("https://a.example/kept", 1, 2, 0.0, (1, 2), 0.8)
        )
        hostile = 'https://c.example/"><script>alert(1)</script>'
        index.record_drop(hostile, Match("https://a.example/kept", 1, 1, 0.0))
        report = gather(index, sample=5)
    page = render(report)
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page
    assert "contained in the kept page: 2 long paragraphs shared" in page
    assert "80% of its text is in the kept page" in page
    assert 'data-filter="b.example"' in page


def test_page_texts_from_a_feed_then_from_files(tmp_path):
    from scrapy_simhash.tools.page_texts import PageTexts

    feed = tmp_path / "kept.jl"
    feed.write_text('{"url": "https://a.example/1", "body": "from the feed"}\n\n', "utf-8")
    page = tmp_path / "p.html"
    page.write_text("<html><body><p>from the file</p></body></html>", "utf-8")
    read = []

    def text_of(value):
        read.append(value)
        return "text of " + (value if isinstance(value, str) else value.decode())

    texts = PageTexts(text_of, feeds=[feed])
    assert texts("https://a.example/1").startswith('text of {"url"')
    assert "from the file" in texts(page.as_uri())
    assert texts("https://b.example/not-fetched") is None  # no --fetch
    assert texts((tmp_path / "gone.html").as_uri()) is None and texts.failures == 1
    texts(page.as_uri())
    assert len(read) == 2  # each page read once
    bad = tmp_path / "bad.jl"
    bad.write_text("not json\n", "utf-8")
    with pytest.raises(FeedError, match=r"bad\.jl:1: not a JSON line"):
        PageTexts(text_of, feeds=[bad])


def test_the_report_counts_the_requests_skipped_as_predicted_copies(index_uri):
    from scrapy_simhash.index.skip_rules import skip_rules_for
    from scrapy_simhash.url_rules import SkippedRequest

    with open_index(index_uri) as index:
        assert "not downloaded" not in render(gather(index))
        store = skip_rules_for(index)
        for n in range(3):
            store.record_skip(
                SkippedRequest(
                    f"https://docs.example/p/{n}.html?utm_source=feed",
                    "docs.example",
                    "query:-utm_source",
                    f"https://docs.example/p/{n}.html",
                    1.0 + n,
                )
            )
        report = gather(index)
        page = render(report)
    assert report.site_skips == {"docs.example": 3}
    assert "<strong>3</strong> requests were not downloaded" in page
    # The site has no drop, and its row says what was saved.
    assert '<td>docs.example</td><td class="n">0</td><td class="n">3</td>' in page
