"""Analysis (text -> Analysis) apart from the check against an index."""

from __future__ import annotations

from scrapy_simhash.analysis.fingerprint import Fingerprinter
from scrapy_simhash.dedup import (
    Analyser,
    AnalysisParams,
    Deduplicator,
    _analyser,
    analyse_fields,
)
from scrapy_simhash.index.memory import MemoryIndex

TEXT = " ".join(f"word{i} topic{i % 7}" for i in range(60))
PARAMS = AnalysisParams(
    top_n=128, seed=None, segmenter="auto", min_terms=20, max_length=10_000, extractor="none"
)


def test_a_worker_analyses_without_an_index():
    analyser, _ = _analyser(PARAMS)
    assert type(analyser) is Analyser
    assert not hasattr(analyser, "index")
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(), min_terms=20, max_length=10_000)
    assert analyse_fields(PARAMS, [TEXT]) == dedup.analyse(TEXT)


def test_deduplicator_checks_with_its_analyser():
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(), min_terms=5, max_length=50)
    assert (dedup.min_terms, dedup.max_length) == (5, 50)
    assert dedup.analyse(TEXT) == dedup.analyser.analyse(TEXT)
    assert dedup.analyse(TEXT).truncated
    first = dedup.check_text(TEXT, "a")
    assert not first.is_duplicate
    assert dedup.check_text(TEXT, "b").match.key == "a"
