"""The one duration grammar (Redis ttl=, the CLI's --older-than and --since)."""

from __future__ import annotations

import pytest

from scrapy_simhash.durations import duration, parse_cutoff


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("3600", 3600), ("90s", 90), ("45m", 2700), ("12h", 43200), ("30D", 2_592_000)],
)
def test_durations(text, seconds):
    assert duration(text) == seconds


@pytest.mark.parametrize("bad", ["", "0", "0d", "-5m", "5 days", "soon", "1y"])
def test_bad_durations(bad):
    with pytest.raises(ValueError, match="is not a duration"):
        duration(bad)


def test_cutoffs():
    assert parse_cutoff("2w", now=2_000_000) == 2_000_000 - 14 * 86400
    assert parse_cutoff("2026-01-31") == 1_769_817_600
    with pytest.raises(ValueError, match="neither a duration"):
        parse_cutoff("last week")
