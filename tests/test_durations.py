"""The one duration grammar (Redis ttl=, the CLI's --older-than and --since)."""

from __future__ import annotations

import pytest

from scrapy_simhash.durations import duration, parse_cutoff
from scrapy_simhash.exceptions import UnsupportedIndexURI


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("3600", 3600),
        ("90s", 90),
        ("1min", 60),
        ("45MIN", 2700),
        ("12h", 43200),
        ("30D", 2_592_000),
        ("2w", 1_209_600),
    ],
)
def test_durations(text, seconds):
    assert duration(text) == seconds


@pytest.mark.parametrize("bad", ["", "-5min", "5 days", "soon", "1y", "1mo"])
def test_bad_durations(bad):
    with pytest.raises(ValueError, match=r"is not a duration: .*\(90s, 45min, 12h, 30d, 2w\)"):
        duration(bad)


@pytest.mark.parametrize("ambiguous", ["1m", "30M"])
def test_m_is_refused_with_the_choices(ambiguous):
    """Minutes to some, months to others: refused, saying what to write instead."""
    number = ambiguous[:-1]
    with pytest.raises(ValueError, match=f"is ambiguous: write {number}min for minutes"):
        duration(ambiguous)
    with pytest.raises(ValueError, match=r"\(90s, 45min, 12h, 30d, 2w\), or a date"):
        parse_cutoff(ambiguous)


def test_zero_is_a_cutoff_but_no_ttl():
    # --older-than 0d: everything stored before now.
    assert parse_cutoff("0d", now=1_000_000) == 1_000_000
    with pytest.raises(ValueError, match="'0d' is zero: nothing would be kept at all"):
        duration("0d")


def test_cutoffs():
    assert parse_cutoff("2w", now=2_000_000) == 2_000_000 - 14 * 86400
    assert parse_cutoff("2026-01-31") == 1_769_817_600
    with pytest.raises(ValueError, match="neither a duration"):
        parse_cutoff("last week")


def test_a_redis_ttl_says_what_to_write():
    from scrapy_simhash.index.redis.uri import client_from_uri

    with pytest.raises(UnsupportedIndexURI, match="write 1min for minutes"):
        client_from_uri("redis://localhost:6379/0?ttl=1m")
