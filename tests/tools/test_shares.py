"""The shares of an audit log's drops, as `calibrate` shows them (scrapy_simhash.tools.shares)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from scrapy_simhash import open_index
from scrapy_simhash.cli import main
from scrapy_simhash.index.base import DropRecord, Match
from scrapy_simhash.tools.shares import render_shares, summarise_shares


def record(key: str, share: float | None, shared: int = 0, **extra) -> DropRecord:
    return DropRecord(key, "kept", 1, False, 0.0, shared=shared, share=share, **extra)


def test_drops_are_counted_by_share_and_the_what_if_counts_what_a_higher_bar_keeps():
    drops = [
        record("a", 1.0),
        record("b", 0.97),
        record("c", 0.83, shared=2),
        record("d", None),
        record("e", 0.5, unchanged=True),  # a re-visit: not a drop of another page
        DropRecord("f", "kept", 0, True, 0.0),  # an exact text: no share
    ]
    summary = summarise_shares(drops, 0.8)
    assert summary.by_share() == [("100", 1), ("90-99", 1), ("80-89", 1)]
    assert summary.unknown == 1
    assert summary.lowest[0] == (0.83, "c", "kept", "contained")
    assert summary.kept_at(0.85) == 1 and summary.kept_at(0.99) == 2
    lines = render_shares(summary)
    assert "SIMHASH_MIN_SHARE = 0.85 would have kept 1 of these 3 drops." in lines
    assert any(line.startswith("  0.83  c  ~  kept  (contained)") for line in lines)
    assert render_shares(summarise_shares([], 0.8)) == []


def test_calibrate_shows_the_shares_of_the_drops(tmp_path):
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    with open_index(uri) as index:
        index.check_and_add(1, "https://a.example/kept")
        for key, share in [("https://a.example/1", 1.0), ("https://a.example/2", 0.86)]:
            index.record_drop(key, Match("https://a.example/kept", 1, 0, 0.0, share=share))
    runner = CliRunner()
    result = runner.invoke(main, ["calibrate", "--index", uri])
    assert result.exit_code == 0, result.output
    assert "Share of each dropped page's text that the kept page holds" in result.output
    assert "SIMHASH_MIN_SHARE = 0.9 would have kept 1 of these 2 drops." in result.output
    data = json.loads(runner.invoke(main, ["calibrate", "--index", uri, "--json"]).output)
    assert list(data["shares"]["by_share"].items()) == [("100", 1), ("80-89", 1)]
    assert data["shares"]["kept_at"]["0.9"] == 1
