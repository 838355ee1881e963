"""The popcount calibrate and check use, on NumPy 1.24 to 1.26 (no np.bitwise_count)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from scrapy_simhash.analysis.fingerprint import hamming_distance
from scrapy_simhash.index.base import StoredPage
from scrapy_simhash.tools import calibrate as calibrate_module
from scrapy_simhash.tools.calibrate import FingerprintTable, popcount_swar

EDGES = [0, 1, (1 << 64) - 1, 1 << 63, 0x5555_5555_5555_5555, 0xAAAA_AAAA_AAAA_AAAA]


def test_fallback_popcount_is_exact():
    rng = random.Random(8)
    values = EDGES + [1 << k for k in range(64)] + [rng.getrandbits(64) for _ in range(20_000)]
    array = np.array(values, dtype=np.uint64)
    counts = popcount_swar(array)
    assert counts.tolist() == [v.bit_count() for v in values]
    if hasattr(np, "bitwise_count"):  # NumPy 2: the same as its own
        assert np.array_equal(counts, np.bitwise_count(array))


def test_nearest_pages_with_the_fallback(monkeypatch):
    # Without np.bitwise_count (NumPy < 2) the table uses popcount_swar.
    monkeypatch.setattr(calibrate_module, "popcount", popcount_swar)
    rng = random.Random(9)
    pages = [StoredPage(f"k{i}", rng.getrandbits(64), float(i)) for i in range(3000)]
    table = FingerprintTable(pages)
    probe = pages[17].fingerprint ^ 0b1011
    # The table holds the pages in the order of their keys.
    assert table.distances(probe).tolist() == [
        hamming_distance(probe, p.fingerprint) for p in sorted(pages, key=lambda p: p.key)
    ]
    assert table.nearest(probe, 1)[0][:2] == (3, "k17")


@pytest.mark.skipif(hasattr(np, "bitwise_count"), reason="NumPy 2 has np.bitwise_count")
def test_numpy_1_uses_the_fallback():
    assert calibrate_module.popcount is popcount_swar


def test_advice_gives_the_commands_to_run():
    from collections import Counter

    from scrapy_simhash.tools.calibrate import Calibration
    from scrapy_simhash.tools.calibration_views import advice

    result = Calibration(3, 100, 100, nearest=Counter({5: 4, 20: 90}), dropped=Counter({3: 2}))
    lines = advice(result, "/data/pages.db")
    assert (
        "  scrapy-simhash rebuild --index /data/pages.db --max-distance 5 --into "
        "/data/pages-k5.db" in lines
    )
    assert "  SIMHASH_MAX_DISTANCE = 2" in lines
    quiet = Calibration(3, 100, 100, nearest=Counter({20: 100}))
    assert advice(quiet, "/data/pages.db") == []
    remote = advice(result, "redis://localhost:6379/0")
    assert any("--into NEW-INDEX-URI" in line for line in remote)


def pair(a: str, b: str, distance: int, dropped: bool):
    from scrapy_simhash.tools.calibrate import Pair

    return Pair(a, b, distance, dropped)


def test_advice_never_lowers_the_threshold_below_drops_in_the_gap():
    """Drops at the threshold far from the nearest kept pages (the example's re-dated
    repost at 3, kept pages 18 apart) are right where the threshold belongs: lowering it
    would only undo them."""
    from collections import Counter

    from scrapy_simhash.tools.calibrate import Calibration
    from scrapy_simhash.tools.calibration_views import advice

    redated = pair("redated.html", "original.html", 3, True)
    mirror = pair("mirror.html", "other.html", 0, True)
    result = Calibration(
        3,
        14,
        14,
        nearest=Counter({18: 2, 24: 12}),
        dropped=Counter({0: 6, 3: 1}),
        examples={0: [mirror], 3: [redated], 18: [pair("a.html", "b.html", 18, False)]},
    )
    lines = advice(result, "/data/pages.db")
    assert not any("SIMHASH_MAX_DISTANCE = 2" in line for line in lines), lines
    assert "keep it" in lines[0] and "nearest kept pages are 18 apart" in lines[0]
    # What a smaller threshold would undo is shown.
    assert "     3  redated.html  ~  original.html" in lines


def test_advice_to_lower_shows_what_it_keeps_and_what_it_still_drops():
    from collections import Counter

    from scrapy_simhash.tools.calibrate import Calibration
    from scrapy_simhash.tools.calibration_views import advice

    result = Calibration(
        3,
        100,
        100,
        nearest=Counter({4: 3, 20: 97}),
        dropped=Counter({1: 5, 3: 2}),
        examples={
            1: [pair("copy.html", "story.html", 1, True)],
            3: [pair("other-story.html", "story.html", 3, True)],
            4: [pair("a.html", "b.html", 4, False)],
        },
    )
    text = "\n".join(advice(result, "/data/pages.db"))
    assert "SIMHASH_MAX_DISTANCE = 2 would keep the pages dropped at 3, such as:" in text
    assert "     3  other-story.html  ~  story.html" in text
    assert "still drop the 5 drops at distance 2 or less (as copy.html ~ story.html" in text
    assert "  SIMHASH_MAX_DISTANCE = 2" in text
    # The larger threshold is offered too, with the pairs it would drop.
    assert "A threshold of 4 would drop one page of each such pair" in text
    assert "     4  a.html  ~  b.html" in text
