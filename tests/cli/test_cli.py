"""The scrapy-simhash command, through click's test runner, on a real SQLite index."""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from prose import contents_entries

from scrapy_simhash import open_index
from scrapy_simhash.cli import main, parse_cutoff
from scrapy_simhash.cli.feeds import with_progress
from scrapy_simhash.dedup import Deduplicator, analyse_text
from scrapy_simhash.index.base import Match, StoredPage
from scrapy_simhash.index.skip_rules import SkippedRequest, skip_rules_for
from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.feeds import read_feed
from scrapy_simhash.tools.fingerprinted import fingerprinted_text, item_from_page, page_title

SITE = Path(__file__).resolve().parents[1] / "sites" / "middleware" / "site"
PAGES = ["tram.html", "drought.html", "only-via-copy.html", "only-via-mirror.html"]


def url(name: str) -> str:
    return f"https://news.example/{name}"


@pytest.fixture
def index_uri(tmp_path) -> str:
    """An index like a crawl leaves it: four pages kept, two copies dropped (audit log)."""
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    config = SimhashSettings()

    with open_index(uri) as index:
        dedup = Deduplicator(index, config.fingerprinter, min_terms=config.min_terms)
        for name in [*PAGES, "tram-copy.html", "drought-mirror.html"]:
            # As a crawl with the default SIMHASH_TEXT_FIELDS would: the page's title, then
            # the page.
            page = item_from_page((SITE / name).read_text(encoding="utf-8"), url(name), config)
            text = fingerprinted_text(page, config)
            verdict = dedup.check_text(text, url(name))
            if verdict.match:
                index.record_drop(url(name), verdict.match)
        assert dedup.check_text("Short notice", url("short")).match is None
    return uri


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no Scrapy project here
    # get_project_settings() sets SCRAPY_SETTINGS_MODULE: setenv first, so that teardown
    # removes it again, whatever the command did.
    monkeypatch.setenv("SCRAPY_SETTINGS_MODULE", "")
    monkeypatch.delenv("SCRAPY_SETTINGS_MODULE")
    monkeypatch.setattr(sys, "path", list(sys.path))
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None, code: int = 0):
        result = runner.invoke(main, list(args), input=input, catch_exceptions=False)
        assert result.exit_code == code, result.output
        return result

    return invoke


def test_every_command_has_help_with_an_example(run):
    assert sorted(main.commands) == sorted(
        [
            "calibrate",
            "check",
            "dedup",
            "dropped",
            "expire",
            "explain",
            "export",
            "forget",
            "import",
            "rebuild",
            "report",
            "rules",
            "secret",
            "text",
            "stats",
            "upgrade",
            "vacuum",
        ]
    )
    for name in main.commands:
        result = run(name, "--help")
        assert "Example:" in result.output, name
        assert f"scrapy-simhash {name}" in result.output, name
    assert "Example:" in run("--help").output


def test_python_dash_m():
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "Usage: scrapy-simhash" in done.stdout


# -- errors ------------------------------------------------------------------------------


def test_missing_index_is_a_one_line_error(run, tmp_path):
    result = run("stats", "--index", str(tmp_path / "nope.db"), code=1)
    assert result.output == (
        f"Error: No index at {tmp_path / 'nope.db'} (from --index); check the path or URI\n"
    )
    assert not (tmp_path / "nope.db").exists(), "a command that reads never creates an index"


def test_default_index_outside_a_project(run):
    result = run("stats", code=1)
    assert result.output == (
        "Error: No index at .scrapy/simhash.db (the pipeline's default, looked for in "
        f"{Path.cwd()}, no Scrapy project). cd into the Scrapy project that crawled, or point "
        "at the index with --index URI\n"
    )


def test_default_index_from_the_project(run, tmp_path, index_uri):
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = cli_test_project.settings\n")
    package = tmp_path / "cli_test_project"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(f"SIMHASH_INDEX_URI = {index_uri!r}\n")
    result = run("stats", "--json")
    assert json.loads(result.output)["index"] == str(tmp_path / "index.db")


def test_a_bad_setting_a_command_does_not_use_does_not_break_it(run, tmp_path, index_uri):
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = cli_bad_project.settings\n")
    package = tmp_path / "cli_bad_project"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(
        f"SIMHASH_INDEX_URI = {index_uri!r}\nSIMHASH_EXTRACTOR = 'readability'\n"
    )
    assert json.loads(run("stats", "--json").output)["pages"] == 5
    # A command that fingerprints does need it, and says so.
    result = run("check", "some text to check", code=1)
    assert "SIMHASH_EXTRACTOR='readability' is not one of" in result.output


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["-s", "SIMHASH_MAX_DISTANCE=4", "import", "backup.simhash"],
            "-s SIMHASH_MAX_DISTANCE: 'import' cannot use it; a new index takes the export's "
            "parameters",
        ),
        (
            ["-s", "SIMHASH_TOP_N=64", "stats"],
            "-s SIMHASH_TOP_N: 'stats' cannot use it; it reads the index as it was built",
        ),
        (
            ["-s", "SIMHASH_INDEX_URI=sqlite:///x.db", "dedup", "items.jl"],
            "its index is --index (memory: by default), not SIMHASH_INDEX_URI",
        ),
        (
            ["-s", "SIMHASH_TEXT_FIELD=body", "dedup", "items.jl"],
            "-s SIMHASH_TEXT_FIELD is not a setting of scrapy-simhash; did you mean "
            "SIMHASH_TEXT_FIELDS?",
        ),
        (["-s", "LOG_LEVEL=DEBUG", "stats"], "-s LOG_LEVEL: 'stats' cannot use it"),
    ],
)
def test_settings_a_command_cannot_honour_are_refused(run, args, expected):
    # -s SIMHASH_MAX_DISTANCE=4 import ... silently ignored the setting.
    result = run(*args, code=2)
    assert expected in " ".join(result.output.split())


@pytest.mark.parametrize(
    "args",
    [
        ["calibrate", "--sample", "-5"],
        ["calibrate", "--seed", "-1"],
        ["dropped", "--limit", "-1"],
        ["explain", "a", "b", "--top", "-1"],
        ["check", "x", "--limit", "0"],
        ["expire", "--older-than", "soon"],
    ],
)
def test_numeric_options_are_validated(run, args):
    result = run(*args, code=2)
    assert "Error: Invalid value for" in result.output
    assert "Traceback" not in result.output


def test_a_missing_path_is_an_error_not_text(run, index_uri):
    result = run("check", "pages/tram.htm", "--index", index_uri, code=1)
    assert result.output.startswith("Error: No such file: pages/tram.htm.")
    result = run("explain", "saved/repost", "some text", code=1)
    assert result.output.startswith("Error: No such file: saved/repost.")


def test_not_an_index(run, tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("not sqlite")
    result = run("stats", "--index", str(path), code=1)
    assert result.output.startswith(f"Error: {path} is not a SQLite file")
    assert result.output.count("\n") == 1
    assert path.read_text() == "not sqlite"


def test_other_fingerprint_settings_are_refused(run, index_uri):
    result = run("-s", "SIMHASH_TOP_N=64", "check", "some text", "--index", index_uri, code=1)
    assert "holds fingerprints of features" in result.output
    assert result.output.count("\n") == 1


def test_bad_duration(run, index_uri):
    result = run("expire", "--older-than", "soon", "--index", index_uri, code=2)
    assert "neither a duration" in result.output


def test_parse_cutoff():
    assert parse_cutoff("30d", now=1_000_000_000) == 1_000_000_000 - 30 * 86400
    assert parse_cutoff("1.5h", now=10_000) == 10_000 - 5400
    assert parse_cutoff("2026-01-31") == 1_769_817_600
    assert parse_cutoff("2026-01-31T01:00:00+01:00") == 1_769_817_600


# -- stats, check, explain ---------------------------------------------------------------


def test_stats(run, index_uri):
    data = json.loads(run("stats", "--index", index_uri, "--json").output)
    assert (data["pages"], data["fingerprints"], data["exact_texts"]) == (5, 4, 1)
    assert (data["max_distance"], data["blocks"], data["tables"]) == (3, 5, 10)
    assert data["drops"] == 2
    assert data["drops_by_distance"] == {"0": 2}
    text = run("stats", "--index", index_uri).output
    assert "Pages       5 (4 fingerprints, 1 exact texts)" in text
    assert "Parameters  max distance 3, 5 blocks, 10 tables of 25-26-bit keys" in text
    assert "Drops       2 (2 near, 0 contained, 0 exact); by distance 0: 2" in text


def test_check_a_stored_page(run, index_uri):
    result = run("check", url("tram.html"), "--index", index_uri)
    lines = result.output.splitlines()
    assert lines[0].startswith(f"{url('tram.html')}: stored page, fingerprint ")
    assert "No stored page within distance 3." in lines
    assert lines[-2:] == [
        "Dropped as its duplicates (audit log):",
        f"   0  {url('tram-copy.html')}  100% of its text held",
    ]


def test_unchanged_revisits_are_no_duplicates(run, index_uri):
    """A re-crawl drops unchanged pages and logs them (matched with their own entry):
    stats counts them apart, and check never lists a page as a duplicate of itself."""
    with open_index(index_uri) as index:
        config = SimhashSettings()
        dedup = Deduplicator(index, config.fingerprinter, min_terms=config.min_terms)
        for name in PAGES:
            # The same item as the fixture's crawl: its text has not changed.
            page = item_from_page((SITE / name).read_text(encoding="utf-8"), url(name), config)
            verdict = dedup.check_text(fingerprinted_text(page, config), url(name))
            assert verdict.status == "unchanged"
            index.record_drop(url(name), verdict.match, unchanged=True)
    text = run("stats", "--index", index_uri).output
    assert "Drops       2 (2 near, 0 contained, 0 exact); by distance 0: 2" in text
    assert (
        f"Unchanged   {len(PAGES)} re-visits of stored pages whose text had not changed "
        "(not duplicates)"
    ) in text
    data = json.loads(run("stats", "--index", index_uri, "--json").output)
    assert (data["drops"], data["unchanged_revisits"]) == (2, len(PAGES))
    lines = run("check", url("tram.html"), "--index", index_uri).output.splitlines()
    assert lines[-2:] == [
        "Dropped as its duplicates (audit log):",
        f"   0  {url('tram-copy.html')}  100% of its text held",
    ]
    output = run("calibrate", "--index", index_uri).output
    assert f"({len(PAGES)} re-visits of unchanged pages left out)" in output
    for line in output.splitlines():
        if "~" in line:
            first, _, second = line.partition("  ~  ")
            assert first.split()[-1] != second.strip(), line


def test_check_a_file_and_stdin(run, index_uri):
    result = run("check", str(SITE / "tram-copy.html"), "--index", index_uri, "--json")
    data = json.loads(result.output)
    assert data["kind"] == "simhash"
    assert [(m["key"], m["distance"]) for m in data["matches"]] == [(url("tram.html"), 0)]
    html = (SITE / "drought-mirror.html").read_text(encoding="utf-8")
    result = run("check", "-", "--index", index_uri, input=html)
    assert (
        f"   0  {url('drought.html')}  (a duplicate; 100% of its text held)"
        in result.output.splitlines()
    )


def test_check_text_and_short_text(run, index_uri):
    result = run("check", "short   NOTICE", "--index", index_uri)
    assert result.output.splitlines() == [
        "'short   NOTICE': 2 terms: too short for SimHash, matched on its exact text",
        "Stored pages within distance 3:",
        f"   0  {url('short')}  (a duplicate)",
    ]
    # Beyond the index's threshold every stored fingerprint is scanned.
    text = (SITE / "tram.html").read_text(encoding="utf-8")
    data = json.loads(
        run("check", text, "--max-distance", "64", "--index", index_uri, "--json").output
    )
    assert len(data["matches"]) == 4
    assert [m["distance"] for m in data["matches"]] == sorted(
        m["distance"] for m in data["matches"]
    )


SHORT_PAGE = """<html><head><title>Harbour ferry fares rise in May | Coast News</title></head>
<body><header><h1>Coast News</h1></header><main><p>{body}</p></main></body></html>"""


def test_text_stored_finds_the_title_the_crawl_took(run, tmp_path):
    """A spider that took <title> (the page's first <h1> is a banner), over short pages
    where the title moves the fingerprint: text --stored names that reading, and calls no
    unchanged page changed (#44)."""
    config = SimhashSettings()
    body = " ".join(paragraphs(7, 1))
    page = tmp_path / "ferry.html"
    page.write_text(SHORT_PAGE.format(body=body), encoding="utf-8")
    key = page.as_uri()
    uri = f"sqlite:///{tmp_path / 'short.db'}"
    with open_index(uri) as index:
        dedup = Deduplicator(index, config.fingerprinter, min_terms=config.min_terms)
        crawled = {"url": key, "title": "Harbour ferry fares rise in May | Coast News"}
        crawled["content"] = page.read_text(encoding="utf-8")
        dedup.check_text(fingerprinted_text(crawled, config), key)
        banner = item_from_page(crawled["content"], key, config)
        assert banner["title"] == "Coast News"  # the guess alone would read the banner
        guessed = analyse_text(dedup, fingerprinted_text(banner, config))
        assert guessed.value != analyse_text(dedup, fingerprinted_text(crawled, config)).value
    output = run("text", "--stored", key, "--index", uri).output
    assert (
        "Read as     title from the page's <title>; content: the page (the reading that "
        "gives the stored fingerprint)"
    ) in output
    assert "the same: this is the text that was fingerprinted" in output
    data = json.loads(run("text", "--stored", key, "--index", uri, "--json").output)
    assert (data["stored"]["same"], data["read_as"]) == (
        True,
        "title from the page's <title>; content: the page",
    )


def test_check_a_url_not_stored_is_read_as_text_or_fetched(run, index_uri):
    result = run("check", (SITE / "tram.html").as_uri(), "--index", index_uri)
    assert f"   0  {url('tram.html')}  (a duplicate; 100% of its text held)" in result.output


def test_explain(run, index_uri):
    a, b = str(SITE / "tram.html"), str(SITE / "tram-copy.html")
    data = json.loads(run("explain", a, b, "--index", index_uri, "--json").output)
    assert (data["distance"], data["duplicate"], data["only_a"], data["only_b"]) == (
        0,
        True,
        [],
        [],
    )
    a, b = str(SITE / "tram.html"), str(SITE / "drought.html")
    result = run("explain", a, b, "--index", index_uri)
    lines = [line for line in result.output.splitlines() if not line.startswith("   read as")]
    assert "B would be kept" in lines[2]
    assert lines[5].startswith("Only in A: ") and "line (" in lines[5]
    assert lines[6].startswith("Only in B: ") and "drought" in lines[6]


def paragraphs(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    words = [f"{a}{b}" for a in ("tram", "river", "council", "bridge", "market") for b in "aeiou"]
    words += [f"word{i}" for i in range(300)]
    return [" ".join(rng.choice(words) for _ in range(30)) + "." for _ in range(count)]


def no_anchors_project(tmp_path: Path) -> None:
    """A Scrapy project in *tmp_path* whose settings turn containment off."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = cli_anchors_project.settings\n")
    package = tmp_path / "cli_anchors_project"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text("SIMHASH_ANCHORS = False\n")


def test_explain_is_by_distance_only_when_anchors_are_off(run, tmp_path):
    no_anchors_project(tmp_path)
    # B, checked after A, is all in A: A adds two paragraphs of its own.
    article = paragraphs(1, 6)
    (tmp_path / "a.txt").write_text("\n".join(paragraphs(2, 2) + article), encoding="utf-8")
    (tmp_path / "b.txt").write_text("\n".join(article), encoding="utf-8")
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    data = json.loads(run("explain", a, b, "--index", str(tmp_path / "none.db"), "--json").output)
    assert data["distance"] > 3
    assert data["duplicate"] is False


def test_explain_says_when_one_text_is_contained_in_the_other(run, tmp_path):
    # B, checked after A, is all in A: A adds two paragraphs of its own.
    article = paragraphs(1, 6)
    (tmp_path / "a.txt").write_text("\n".join(paragraphs(2, 2) + article), encoding="utf-8")
    (tmp_path / "b.txt").write_text("\n".join(article), encoding="utf-8")
    a, b = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    index = str(tmp_path / "none.db")
    data = json.loads(run("explain", a, b, "--index", index, "--json").output)
    assert data["distance"] > 3
    assert (data["test"], data["duplicate"]) == ("contained", True)
    assert sorted(data["shared_paragraphs"]) == sorted(article)
    output = run("explain", a, b, "--index", index).output
    assert "B is contained in A" in output
    assert "A holds 100% of B's text, B 7" in output, output  # B holds about 75% of A's
    assert "Shared long paragraphs (contained: duplicates):" in output
    assert f"  {article[0][:150]}" in output
    # The other way, A checked after B: A adds text of its own, and is kept.
    data = json.loads(run("explain", b, a, "--index", index, "--json").output)
    assert (data["test"], data["duplicate"]) == (None, False)
    assert data["share_of_b_in_a"] < 0.8


def test_explain_says_when_two_pages_share_only_a_list(run, tmp_path):
    # A part page and its book's page: each its own paragraph, the same table of contents.
    entries = contents_entries()
    for name, intro in (("part", paragraphs(3, 1)[0]), ("book", paragraphs(4, 1)[0])):
        text = "\n".join(["Reference", intro, *entries])
        (tmp_path / f"{name}.txt").write_text(text, encoding="utf-8")
    a, b = str(tmp_path / "book.txt"), str(tmp_path / "part.txt")
    index = str(tmp_path / "none.db")
    data = json.loads(run("explain", a, b, "--index", index, "--json").output)
    assert data["share_of_b_in_a"] >= 0.8  # the list is most of the part page
    assert (data["test"], data["duplicate"], data["contained"], data["lists_only"]) == (
        None,
        False,
        False,
        True,
    )
    output = run("explain", a, b, "--index", index).output
    assert "B would be kept" in output
    assert "(lists only: neither page's own paragraphs are in the other):" in output


def test_explain_without_an_index_uses_the_settings(run, tmp_path):
    result = run("explain", "one two", "one two", "--index", str(tmp_path / "none.db"))
    assert "Both too short for SimHash: their exact texts are the same." in result.output
    assert not (tmp_path / "none.db").exists()


# -- dropped -----------------------------------------------------------------------------


def test_dropped_formats_and_filters(run, index_uri):
    lines = run("dropped", "--index", index_uri).output.splitlines()
    assert len(lines) == 3 and lines[-1] == "2 drops."
    assert lines[0].endswith(
        f"d=0    {url('tram-copy.html')}  ->  {url('tram.html')}  (100% of its text kept)"
    )
    rows = list(csv.DictReader(io.StringIO(run("dropped", "--index", index_uri, "--csv").output)))
    assert [(r["dropped"], r["kept"], r["distance"]) for r in rows] == [
        (url("tram-copy.html"), url("tram.html"), "0"),
        (url("drought-mirror.html"), url("drought.html"), "0"),
    ]
    result = run("dropped", "--index", index_uri, "--json", "--kept", url("drought.html"))
    (record,) = [json.loads(line) for line in result.output.splitlines()]
    assert record["dropped"] == url("drought-mirror.html")
    assert (
        run("dropped", "--index", index_uri, "--contains", "tram", "--json").output.count("\n") == 1
    )
    assert run("dropped", "--index", index_uri, "--limit", "1", "--json").output.count("\n") == 1
    future = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 2 * 86400))
    assert (
        run("dropped", "--index", index_uri, "--since", future).output
        == "No drops recorded matching the filters.\n"
    )
    assert (
        run("dropped", "--index", index_uri, "--contains", "nowhere").output
        == "No drops recorded matching the filters.\n"
    )


FORMULAS = ['=HYPERLINK("http://evil.example")', "+1+2", "-2+3", "@SUM(A1)", "\tx", "\r=1"]


def test_csv_cells_are_safe_for_spreadsheets(run, tmp_path):
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    with open_index(uri) as index:
        for i, key in enumerate(FORMULAS):
            index.record_drop(key, Match(f"https://news.example/{i}", 1, 2, 0.0))
    rows = list(csv.DictReader(io.StringIO(run("dropped", "--index", uri, "--csv").output)))
    assert [r["dropped"] for r in rows] == ["'" + key for key in FORMULAS]
    assert rows[0]["kept"] == "https://news.example/0"
    rows = list(
        csv.DictReader(io.StringIO(run("dropped", "--index", uri, "--csv", "--raw-csv").output))
    )
    assert [r["dropped"] for r in rows] == FORMULAS


def test_dedup_csv_cells_are_safe_for_spreadsheets(run, tmp_path):
    article = (SITE / "tram.html").read_text(encoding="utf-8")
    feed = tmp_path / "items.csv"
    with feed.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["url", "title", "content"])
        writer.writeheader()
        writer.writerow({"url": "=1+1", "title": "-5", "content": article})
        writer.writerow({"url": "@copy", "title": "plain", "content": article})
    run("dedup", str(feed))
    with (tmp_path / "items.kept.csv").open(newline="", encoding="utf-8") as f:
        assert [(r["url"], r["title"]) for r in csv.DictReader(f)] == [("'=1+1", "'-5")]
    with (tmp_path / "items.duplicates.csv").open(newline="", encoding="utf-8") as f:
        (row,) = csv.DictReader(f)
    assert (row["key"], row["duplicate_of"]) == ("'@copy", "'=1+1")
    run("dedup", str(feed), "--raw-csv")
    with (tmp_path / "items.kept.csv").open(newline="", encoding="utf-8") as f:
        assert [(r["url"], r["title"]) for r in csv.DictReader(f)] == [("=1+1", "-5")]


# -- export / import ---------------------------------------------------------------------


def test_import_into_the_default_index_makes_its_directory_as_a_crawl_does(
    run, index_uri, tmp_path
):
    out = tmp_path / "backup.simhash"
    run("export", str(out), "--index", index_uri)
    # `run` works in tmp_path, no Scrapy project: the default index is .scrapy/simhash.db.
    assert not (tmp_path / ".scrapy").exists()
    run("import", str(out))
    with open_index(f"sqlite:///{tmp_path / '.scrapy' / 'simhash.db'}", create=False) as index:
        assert len(index) == 5


def test_export_then_import_into_a_new_index(run, index_uri, tmp_path):
    out = tmp_path / "backup.simhash"
    data = json.loads(run("export", str(out), "--index", index_uri, "--json").output)
    assert data["pages"] == 5 and data["bytes"] == out.stat().st_size
    copy = f"sqlite:///{tmp_path / 'copy.db'}"
    result = run("import", str(out), "--index", copy)
    assert (
        result.output
        == f"Imported 5 pages from {out} into {tmp_path / 'copy.db'} (0 already stored).\n"
    )
    result = run("import", str(out), "--index", copy, "--json")
    assert json.loads(result.output)["skipped"] == 5
    with open_index(copy) as a, open_index(index_uri) as b:
        assert {(p.key, p.fingerprint) for p in a.pages()} == {
            (p.key, p.fingerprint) for p in b.pages()
        }


def test_import_refuses_other_features(run, index_uri, tmp_path):
    out = tmp_path / "backup.simhash"
    run("export", str(out), "--index", index_uri)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    open_index(other, features="simhash64/other").close()
    result = run("import", str(out), "--index", other, code=1)
    assert result.output.startswith(f"Error: {out} holds fingerprints of other features")
    assert result.output.count("\n") == 1


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"SIMHASHX\x01\x00\x00\x00\x05{}", "truncated"),  # a header of 5 bytes, 2 there
        (b"SIMHASHX\x01\x00\x00\x00\x05{bad}", "damaged"),  # 5 bytes, not JSON
    ],
)
def test_import_a_damaged_file(run, tmp_path, data, what):
    bad = tmp_path / "bad.simhash"
    bad.write_bytes(data)
    result = run("import", str(bad), "--index", f"sqlite:///{tmp_path / 'x.db'}", code=1)
    assert result.output == f"Error: {bad} is {what}: its header cannot be read\n"


# -- expire / forget / vacuum ------------------------------------------------------------


def test_expire(run, tmp_path):
    uri = f"sqlite:///{tmp_path / 'old.db'}"
    with open_index(uri) as index:
        now = time.time()
        index.add_pages(
            [
                StoredPage("old", 1, now - 40 * 86400),
                StoredPage("older", 2**40, now - 400 * 86400),
                StoredPage("new", 2**63, now - 60),
            ]
        )
    result = run("expire", "--older-than", "30d", "--dry-run", "--index", uri)
    assert result.output.startswith("2 pages were stored before ")
    result = run("expire", "--older-than", "30d", "--index", uri, input="n\n", code=1)
    assert "Aborted" in result.output
    result = run("expire", "--older-than", "30d", "--index", uri, input="y\n")
    assert "Removed 2 pages stored before" in result.output and result.output.endswith(
        "; 1 left.\n"
    )
    data = json.loads(run("expire", "--older-than", "30d", "--index", uri, "--json").output)
    assert (data["matching"], data["removed"], data["left"]) == (0, 0, 1)


def test_expire_drops_prunes_the_audit_log_only(run, tmp_path):
    uri = f"sqlite:///{tmp_path / 'audit.db'}"
    with open_index(uri) as index:
        index.check_and_add(2**40, "kept")
        index.record_drop("copy", index.check_and_add(2**40 + 1, "copy").match)
        pages = len(index)
    result = run("expire", "--older-than", "1h", "--drops", "--index", uri, "--dry-run")
    assert result.output.startswith("0 audit-log entries were recorded before ")
    # A cutoff in the future takes every entry recorded so far.
    tomorrow = time.strftime("%Y-%m-%d", time.gmtime(time.time() + 2 * 86400))
    result = run("expire", "--older-than", tomorrow, "--drops", "--index", uri, input="y\n")
    assert "Remove 1 audit-log entries recorded before" in result.output
    assert "Removed 1 audit-log entries recorded before" in result.output
    assert result.output.endswith("; 0 left.\n")
    with open_index(uri) as index:
        assert list(index.drops()) == []
        assert len(index) == pages == 1


def test_forget(run, index_uri):
    result = run("forget", url("tram.html"), "--index", index_uri)
    assert result.output == f"Forgot {url('tram.html')} (1 stored entry).\n"
    result = run("forget", url("drought.html"), url("nothing"), "--index", index_uri, code=1)
    assert result.output.splitlines() == [
        f"Forgot {url('drought.html')} (1 stored entry).",
        f"Error: No page is stored under: {url('nothing')}",
    ]
    data = json.loads(
        run("check", str(SITE / "tram-copy.html"), "--index", index_uri, "--json").output
    )
    assert data["matches"] == [], "a forgotten page is no longer matched"


def test_forget_a_skipped_request(run, index_uri):
    with open_index(index_uri) as index:
        skip_rules_for(index).record_skip(
            SkippedRequest(
                url("tram.html?ref=x"), "news.example", "query:-ref", url("tram.html"), 1.0
            )
        )
    result = run("forget", url("tram.html?ref=x"), "--index", index_uri)
    assert result.output == (
        f"Forgot that {url('tram.html?ref=x')} was skipped as a predicted copy "
        "(scrapy-simhash rules --remove RULE lets a crawl download such URLs again).\n"
    )
    run("forget", url("tram.html?ref=x"), "--index", index_uri, code=1)


def test_rules_lists_removes_and_shows_the_skipped(run, index_uri):
    assert run("rules", "--index", index_uri).output.startswith("No URL rules in ")
    with open_index(index_uri) as index:
        store = skip_rules_for(index)
        store.add("news.example", ["query:-ref"], observations=3)
        store.add("news.example", ["path:-amp"], observations=5, distinct=1)
        store.add("news.example", ["path:-print"], observations=1)
        store.record_skip(
            SkippedRequest(url("a?ref=x"), "news.example", "query:-ref", url("a"), 0.0)
        )
    lines = run("rules", "--index", index_uri).output.splitlines()
    assert lines[0].split() == ["site", "rule", "state", "copies", "distinct", "skipped"]
    assert [line.split() for line in lines[1:]] == [
        ["news.example", "path:-amp", "retired", "5", "1", "0"],
        ["news.example", "query:-ref", "confirmed", "3", "0", "1"],
        ["news.example", "path:-print", "learning", "1", "0", "0"],
    ]
    data = json.loads(
        run("-s", "SIMHASH_SKIP_MIN_COPIES=4", "rules", "--index", index_uri, "--json").output
    )
    assert [(r["rule"], r["state"]) for r in data] == [
        ("path:-amp", "retired"),
        ("query:-ref", "learning"),
        ("path:-print", "learning"),
    ]
    assert run("rules", "--skipped", "--index", index_uri).output.splitlines() == [
        f"1970-01-01 00:00:00  {url('a?ref=x')} -> {url('a')}  (query:-ref)",
        "1 requests skipped as predicted copies.",
    ]
    assert run("rules", "--remove", "path:-amp", "--index", index_uri).output == (
        "Removed the URL rule path:-amp from 1 site(s).\n"
    )
    result = run("rules", "--remove", "path:-amp", "--index", index_uri, code=1)
    assert result.output == "Error: No URL rule 'path:-amp'\n"


def test_vacuum(run, index_uri, tmp_path):
    with open_index(index_uri) as index:
        index.add_pages(StoredPage(f"k{i}", i * 2**40 + 7, 1.0) for i in range(3000))
    run("expire", "--older-than", "1970-01-02", "--yes", "--index", index_uri)
    result = run("vacuum", "--index", index_uri)
    before, after = (
        int(n.replace(",", ""))
        for n in result.output.split(": ")[1].split(" bytes")[0].split(" -> ")
    )
    assert after < before
    assert (
        run("vacuum", "--index", "memory:").output == "The index memory: has nothing to vacuum.\n"
    )


# -- dedup -------------------------------------------------------------------------------


def feed_items() -> list[dict]:
    def page(name):
        return (SITE / name).read_text(encoding="utf-8")

    return [
        {"url": url("tram"), "title": "Tram", "content": page("tram.html")},
        {"url": url("drought"), "title": "Drought", "content": page("drought.html")},
        {"url": url("tram-copy"), "title": "Tram", "content": page("tram-copy.html")},
        {"url": url("note"), "title": "Note", "content": "Short note"},
        {"url": url("note-2"), "title": "note", "content": "short  note"},
        {"url": url("empty"), "title": None, "content": None},
    ]


@pytest.mark.parametrize("suffix", [".jl", ".json", ".csv"])
def test_dedup_a_feed(run, tmp_path, suffix):
    feed = tmp_path / f"items{suffix}"
    items = feed_items()
    if suffix == ".jl":
        feed.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    elif suffix == ".json":
        feed.write_text(json.dumps(items), encoding="utf-8")
    else:
        with feed.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=["url", "title", "content"])
            writer.writeheader()
            writer.writerows(items)
    result = run("dedup", str(feed))
    assert result.output.splitlines()[-3:] == [
        "6 items: kept 4, dropped 2 (1 near-duplicates, 1 exact short texts); "
        "1 without text (kept).",
        f"Kept items: {tmp_path / ('items.kept' + suffix)}",
        f"Duplicates report: {tmp_path / f'items.duplicates{suffix}'}",
    ]
    kept = tmp_path / f"items.kept{suffix}"
    if suffix == ".csv":
        kept_urls = [row["url"] for row in csv.DictReader(kept.open(encoding="utf-8"))]
    elif suffix == ".json":
        kept_urls = [i["url"] for i in json.loads(kept.read_text(encoding="utf-8"))]
    else:
        kept_urls = [json.loads(line)["url"] for line in kept.read_text().splitlines()]
    assert kept_urls == [url("tram"), url("drought"), url("note"), url("empty")]
    # Named as the kept items are, in the feed's format.
    report = read_feed(tmp_path / f"items.duplicates{suffix}")
    assert [(str(r["item"]), r["key"], r["duplicate_of"], r["match"]) for r in report] == [
        ("3", url("tram-copy"), url("tram"), "near"),
        ("5", url("note-2"), url("note"), "exact"),
    ]


def test_dedup_an_empty_report_has_its_header(run, tmp_path):
    feed = tmp_path / "items.csv"
    feed.write_text("url,content\na,one text\nb,another\n", encoding="utf-8")
    run("dedup", str(feed))
    report = (tmp_path / "items.duplicates.csv").read_text(encoding="utf-8")
    assert report.splitlines() == ["item,key,duplicate_of,distance,match"]


def test_dedup_progress_says_how_far_and_how_fast():
    ticks = iter([n / 2 for n in range(100)])  # an item every half second
    runner = CliRunner()

    @click.command()
    def slow():
        assert list(with_progress(range(10), 10, every=1, clock=lambda: next(ticks))) == list(
            range(10)
        )

    lines = runner.invoke(slow).output.splitlines()
    assert lines[0] == "Checked 2 of 10 items (20%), 2.0 items/s, about 4 s left"
    assert len(lines) == 5  # one a second, not one an item
    assert lines[-1] == "Checked 10 items in 5.5 s, 1.8 items/s"
    quiet = list(with_progress(range(3), 3, every=5, clock=lambda: 0.0))
    assert quiet == [0, 1, 2]


def test_dedup_against_an_index_with_other_fields(run, tmp_path, index_uri):
    feed = tmp_path / "items.jl"
    body = (SITE / "drought.html").read_text(encoding="utf-8")
    headline = page_title(body)
    feed.write_text(
        json.dumps({"link": "x", "headline": headline, "body": body}) + "\n", encoding="utf-8"
    )
    out, report = tmp_path / "clean.jl", tmp_path / "dups.jl"
    args = ["--fields", "headline,body", "--key", "link", "-o", str(out), "--report", str(report)]
    data = json.loads(run("dedup", str(feed), *args, "--index", index_uri, "--json").stdout)
    assert (data["kept"], data["dropped"]) == (0, 1)
    assert json.loads(report.read_text())["duplicate_of"] == url("drought.html")
    assert out.read_text() == ""


def test_dedup_bad_feeds(run, tmp_path):
    feed = tmp_path / "items.jl"
    feed.write_text('{"url": "a"}\n{oops\n', encoding="utf-8")
    result = run("dedup", str(feed), code=1)
    assert f"Error: {feed} line 2 is not valid JSON (Expecting property" in result.output
    other = tmp_path / "items.xml"
    other.write_text("<items/>")
    assert "unknown feed format '.xml'" in run("dedup", str(other), code=1).output
    result = run("dedup", str(feed), "-o", str(feed), code=1)
    assert "would overwrite the feed" in result.output


def test_dedup_keys_with_lone_surrogates(run, tmp_path):
    # JSON can escape a lone surrogate ("\\ud800"); json.loads then returns one.
    article = (SITE / "tram.html").read_text(encoding="utf-8")
    feed = tmp_path / "items.jl"
    rows = [{"url": "a\ud800", "content": article}, {"url": "b\udfff", "content": article}]
    feed.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    for index in ("memory:", f"sqlite:///{tmp_path / 'index.db'}"):
        summary = json.loads(run("dedup", str(feed), "--index", index, "--json").stdout)
        assert (summary["kept"], summary["dropped"]) == (1, 1)
        kept = tmp_path / "items.kept.jl"
        assert [json.loads(line) for line in kept.read_text().splitlines()] == rows[:1]
        (duplicate,) = read_feed(tmp_path / "items.duplicates.jl")
        # Written as escapes (the index stores the kept page's key so).
        shown = [
            duplicate[name].encode("utf-8", "backslashreplace").decode()
            for name in ("key", "duplicate_of")
        ]
        assert shown == ["b\\udfff", "a\\ud800"]


# -- calibrate ---------------------------------------------------------------------------


def test_calibrate(run, index_uri, tmp_path):
    report = tmp_path / "calibration.html"
    result = run("calibrate", "--index", index_uri, "--html", str(report))
    lines = result.output.splitlines()
    assert lines[0] == (
        "Nearest stored neighbour of 4 of 4 stored pages, and 2 drops from the audit log; "
        "threshold 3"
    )
    assert lines[3].startswith("       0        2        0  xxxx")
    assert f"   0  dropped, kept  {url('tram-copy.html')}  ~  {url('tram.html')}" in lines
    assert lines[-1] == f"HTML report: {report}"
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "<script" not in page
    assert page.count('<rect class="dropped"') == 1
    assert page.count('<rect class="nearest"') >= 1
    data = json.loads(run("calibrate", "--index", index_uri, "--json").output)
    assert data["dropped"] == {"0": 2} and sum(data["nearest"].values()) == 4


def _png_pixels(data: bytes) -> tuple[int, int, int, bytes]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    out, prev = bytearray(), bytearray(stride)
    for y in range(height):
        kind, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        out += line
        prev = line
    return width, height, bpp, bytes(out)


@pytest.mark.slow  # a real browser; the fast lane checks the same HTML without one
def test_calibration_report_renders_in_chromium(run, index_uri, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("needs chromium (apt-get install chromium) to render the HTML report")
    report = tmp_path / "calibration.html"
    run("calibrate", "--index", index_uri, "--html", str(report))
    shot = tmp_path / "shot.png"
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    command += ["--window-size=800,520", f"--screenshot={shot}", report.as_uri()]
    subprocess.run(command, capture_output=True, timeout=60, check=True)
    _, _, bpp, pixels = _png_pixels(shot.read_bytes())
    counts = {"dropped": 0, "nearest": 0}
    for i in range(0, len(pixels), bpp):
        rgb = tuple(pixels[i : i + 3])
        if rgb == (0xD9, 0x53, 0x4F):
            counts["dropped"] += 1
        elif rgb == (0x33, 0x7A, 0xB7):
            counts["nearest"] += 1
    # The legend's two squares are ~16x16 pixels; the bars add far more.
    assert counts["dropped"] > 1000, counts
    assert counts["nearest"] > 1000, counts


def test_check_a_missing_file_is_an_error_not_text(run, index_uri):
    # A typo in a file name was fingerprinted as the text "nofile.html".
    result = run("check", "nofile.html", "--index", index_uri, code=1)
    assert "No such file: nofile.html" in result.output
    assert "scrapy-simhash check -" in result.output
    # Text that is not one word ending like a file name is still text.
    result = run("check", "short NOTICE", "--index", index_uri)
    assert f"   0  {url('short')}  (a duplicate)" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["calibrate", "--sample", "-5"],
        ["calibrate", "--pairs", "-1"],
        ["dropped", "--limit", "-1"],
        ["dropped", "--limit", "0"],
        ["check", "short NOTICE", "--limit", "0"],
    ],
)
def test_negative_counts_are_refused_with_the_range(run, index_uri, args):
    # --limit -1 printed "No drops recorded." over a log holding drops; --sample -5 a
    # traceback.
    result = run(*args, "--index", index_uri, code=2)
    assert "is not in the range" in result.output


def test_check_says_which_stored_page_contains_the_text(run, tmp_path):
    from scrapy_simhash.analysis.fingerprint import Fingerprinter
    from scrapy_simhash.dedup import Deduplicator

    article = paragraphs(1, 6)
    path = tmp_path / "index.db"
    with open_index(f"sqlite:///{path}") as index:
        longer = "\n".join(paragraphs(2, 2) + article)
        verdict = Deduplicator(index, Fingerprinter()).check_text(longer, "kept")
        assert verdict.status == "new"
    (tmp_path / "b.txt").write_text("\n".join(article), encoding="utf-8")
    data = json.loads(run("check", str(tmp_path / "b.txt"), "--index", str(path), "--json").output)
    assert data["matches"] == []
    assert data["contained"]["key"] == "kept"
    assert sorted(data["contained"]["shared_paragraphs"]) == sorted(article)
    output = run("check", str(tmp_path / "b.txt"), "--index", str(path)).output
    assert "Contained in kept (distance" in output and "100% of its text held" in output
