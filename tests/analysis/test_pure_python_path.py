"""The whole analysis gives the same terms, weights and fingerprints with the C accelerator
and without it (SCRAPY_SIMHASH_PURE_PYTHON=1, in a process of its own), on generated texts
that exercise every compiled step at once (the sketch's shingles included)."""

from __future__ import annotations

import random

import pytest
from pipelines import run_pure_python

from scrapy_simhash.analysis.fingerprint import Fingerprinter, format_fingerprint
from scrapy_simhash.analysis.heaviest import heaviest_compiled
from scrapy_simhash.dedup import Analyser

_PIECES = [
    "Source: Reuters",
    "By Jane Doe",
    "© 2024 Example",
    "All rights reserved",
    "转载请注明出处",
    "责任编辑：王小明",
    "2024-03-15 10:23",
    "see https://example.com/a?b=1 or www.example.org",
    "mail admin@example.com",
    "北京大学的研究人员发布了新研究",
    "地铁线路的扩建显著减少了交通拥堵",
    "ＡＢＣ１２３，（全角）",
    "e\u0301 ｶﾞ \u200b\u00ad\ufeff",
    "Debian Debian packages apt dpkg",
    "the city council approved a tram",
    "el gobierno de la ciudad que",
    "und die Regierung der Stadt",
    "\U0001f600 emoji \U0001d400",
    "ſource İmage",
    "3.11 42 ٣٤",
    "_ __ a_b x y z",
    "\ud800 lone",
]


def texts() -> list[str]:
    rng = random.Random(15)
    out = []
    for _ in range(150):
        lines = []
        for _ in range(rng.randint(1, 25)):
            words = rng.choices(_PIECES, k=rng.randint(1, 4))
            lines.append(rng.choice([" ", "", "  -- "]).join(words))
        out.append("\n".join(lines))
    return out


def analyse_all(items: list[str]) -> list[list[object]]:
    fingerprinter = Fingerprinter(segmenter="rjieba")
    analyser = Analyser(fingerprinter)
    results = []
    for text in items:
        terms = [[term, weight.hex()] for term, weight in fingerprinter.terms(text)]
        analysis = analyser.analyse(text)
        sketch = analysis.sketch
        shingles = [sketch.level, sketch.shingles, list(sketch.values)] if sketch else None
        results.append([terms, format_fingerprint(analysis.value), analysis.kind, shingles])
    return results


@pytest.mark.slow
@pytest.mark.skipif(heaviest_compiled is None, reason="the C accelerator is not built")
def test_same_analysis_with_and_without_the_accelerator():
    pytest.importorskip("rjieba")
    items = texts()
    code = (
        "import json, sys\n"
        "sys.path[:0] = ['tests', 'tests/analysis']\n"
        "from test_pure_python_path import analyse_all\n"
        "from scrapy_simhash.analysis import heaviest\n"
        "assert heaviest.heaviest_compiled is None\n"
        "print(json.dumps(analyse_all(json.load(sys.stdin))))"
    )
    pure = run_pure_python(code, items)
    compiled = analyse_all(items)
    assert len(pure) == len(compiled) == len(items)
    for text, slow, fast in zip(items, pure, compiled, strict=True):
        assert slow == fast, text
    # The texts reach the steps they are meant for: kinds of both sorts, capped weights.
    assert {kind for _, _, kind, _ in compiled} == {"simhash", "short"}
