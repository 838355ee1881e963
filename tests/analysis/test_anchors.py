"""The anchors of a text: its units (lines, or a wrapped text's sentences), their sizes
in words, and which of them become anchors."""

from __future__ import annotations

import random
import textwrap

import pytest

from scrapy_simhash.analysis import anchors as analysis_anchors
from scrapy_simhash.analysis.anchors import anchor_form, text_anchors, unit_sizes, units, words
from scrapy_simhash.anchors import DEFAULT_ANCHORS

SENTENCES = [
    "The committee met in New York this afternoon and could put its final stamp of "
    "approval on the deal later today, the bankers said.",
    "They declined to disclose details because two representatives on the panel have "
    "still to obtain the approval of their senior management.",
    "The interest rate on the rescheduling was originally set at one and one eighth "
    "points over Eurodollar rates, but the borrower asked for easier terms.",
    "It also asked for a reduction in the repayments it was due to make over the next "
    "three years, after an earlier request was rebuffed by the banks.",
    "The breakthrough in the talks, which have been going on intermittently for several "
    "months, follows another debt rescheduling pact announced earlier today.",
]


def wrapped(width: int, indent: str = "    ") -> str:
    """SENTENCES as a newswire story: two sentences a paragraph, wrapped at *width*."""
    paragraphs = [" ".join(SENTENCES[i : i + 2]) for i in range(0, len(SENTENCES), 2)]
    return "\n".join(
        textwrap.fill(p, width, initial_indent=indent if n else "")
        for n, p in enumerate(paragraphs)
    )


def test_a_line_of_chinese_counts_each_character_as_a_word():
    assert words("the quick brown fox") == 4
    assert words("中文的句子") == 5 + 1
    assert words("Debian 安装") == 2 + 2
    # A Chinese paragraph outweighs an English line of the same number of characters.
    assert words("系统" * 50) > words("word " * 20)


def test_lines_stay_units_unless_the_text_is_hard_wrapped():
    blocks = ["A heading", "A paragraph of an HTML page, as long as it is. " * 4, "Footer"]
    assert units(blocks) == blocks
    story = wrapped(70)
    assert max(map(len, story.splitlines())) <= 70
    assert units(story.splitlines()) == SENTENCES


def test_a_story_wrapped_at_two_widths_has_the_same_anchors():
    narrow, wide = text_anchors(wrapped(60)), text_anchors(wrapped(78, indent=""))
    assert len(narrow) == len(SENTENCES)
    assert narrow.hashes == wide.hashes


def test_anchors_are_the_largest_units_in_words_not_in_characters():
    english = [f"{n} " + "an untranslated English paragraph of the manual, " * 3 for n in range(8)]
    chinese = [f"{n}" + "这是已经翻译成中文的段落，内容比英文段落多。" * 4 for n in range(8)]
    assert all(len(e) > len(c) for e in english for c in chinese)
    anchors = text_anchors("\n".join(english + chinese))
    by_chinese = text_anchors("\n".join(chinese))
    assert anchors.hashes == by_chinese.hashes


def test_the_compiled_unit_sizes_are_the_python_twins():
    compiled = analysis_anchors._UNIT_SIZES
    if compiled is None:
        pytest.skip(
            "the C accelerator is not built here (SCRAPY_SIMHASH_PURE_PYTHON or no compiler)"
        )
    rng = random.Random(5)
    alphabet = "ab 中文カナ한국\t\u3000\x1c\u2028.,é"
    for _ in range(500):
        lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(5)]
        assert compiled(lines, 10) == unit_sizes(lines, 10)


def test_a_text_without_a_long_unit_has_no_anchors():
    assert not text_anchors("short\nlines\nonly")
    assert len(text_anchors("\n".join(f"{n} {SENTENCES[0]}" for n in range(20)))) == DEFAULT_ANCHORS


def test_the_anchor_form_ignores_case_quotes_and_dashes():
    assert anchor_form("“Quoted” — Text") == anchor_form('"quoted" - text')
