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
    assert table.distances(probe).tolist() == [
        hamming_distance(probe, p.fingerprint) for p in pages
    ]
    assert table.nearest(probe, 1)[0][:2] == (3, "k17")


@pytest.mark.skipif(hasattr(np, "bitwise_count"), reason="NumPy 2 has np.bitwise_count")
def test_numpy_1_uses_the_fallback():
    assert calibrate_module.popcount is popcount_swar


def test_advice_gives_the_commands_to_run():
    from collections import Counter

    from scrapy_simhash.tools.calibrate import Calibration, advice

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
    assert "--into NEW-INDEX-URI" in remote[1]
