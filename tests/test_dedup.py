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


def _story(count: int) -> list[str]:
    """*count* sentences of distinct words, a paragraph each, as a newswire story's."""
    import random

    rng = random.Random(3)
    vocabulary = [f"{a}{b}{c}" for a in "bdklmprst" for b in "aeiou" for c in "nrst"]
    return [
        " ".join(rng.choice(vocabulary) for _ in range(28)).capitalize() + "." for _ in range(count)
    ]


STORY = _story(16)


def wrapped_story(paragraphs: list[str], width: int) -> str:
    import textwrap

    return "\n".join(textwrap.fill(p, width, initial_indent="    ") for p in paragraphs)


def test_a_wrapped_story_cut_short_and_rewrapped_is_contained_in_the_original():
    dedup = Deduplicator(MemoryIndex(), Fingerprinter())
    assert dedup.check_text(wrapped_story(STORY, 70), "original").status == "new"
    verdict = dedup.check_text(wrapped_story(STORY[:12], 64), "resent")
    assert verdict.is_duplicate and verdict.match.key == "original"
    assert verdict.match.shared, "found by containment, not by distance"


def test_a_partly_translated_page_is_not_contained_in_the_original():
    english = [p for p in STORY[:8]]
    chinese = [
        f"第{n}段：委员会在会议上原则同意修改去年签署的一揽子计划条款，官员们表示，"
        f"这项安排将在未来几个月内逐步落实，并由各地政府负责具体执行。" * 2
        for n in range(5)
    ]
    dedup = Deduplicator(MemoryIndex(), Fingerprinter())
    assert dedup.check_text("\n".join(english), "en").status == "new"
    translated = "\n".join(english[:3] + chinese)
    assert dedup.check_text(translated, "zh").status == "new"


def test_without_anchors_a_copy_cut_short_is_kept():
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(), anchors=0)
    assert dedup.check_text(wrapped_story(STORY, 70), "original").status == "new"
    assert dedup.check_text(wrapped_story(STORY[:8], 70), "half").status == "new"
