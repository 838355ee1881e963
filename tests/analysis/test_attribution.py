"""Attribution lines (sources, bylines, copyright, repost notices, bare dates) are not
features; lines of content that look a little like them are."""

from __future__ import annotations

import re

import pytest
from code_points import every_character_text
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_simhash import fingerprint, hamming_distance
from scrapy_simhash.analysis.attribution import (
    _BYLINE,
    _KEYWORDS,
    _NOTICES,
    _OTHER_CASE_FORMS,
    has_attribution,
    is_attribution,
    strip_attribution,
)
from scrapy_simhash.analysis.terms import TermExtractor


@pytest.mark.parametrize(
    "line",
    [
        "Source: Example Wire Service",
        "Read more: https://example.com/news/2024/03/15/story-12345",
        "Copyright 2024 Example Media. All rights reserved.",
        "© Getty Images",
        "Foto: dpa",
        "Quelle: Landesregierung",
        "By Jane Doe",
        "By Staff Writer, with wire reports | March 15, 2024",
        "Von Anna Muster",
        "2024-03-15 10:23:45",
        "15.03.2024",
        "2024年3月15日",
        "转载请注明出处：本文来源于某某网",
        "责任编辑：王小明",
        "原文链接：http://example.com/a/1",
    ],
)
def test_attribution_lines(line):
    assert is_attribution(line)


@pytest.mark.parametrize(
    "line",
    [
        # Wrapped newswire text and names in a sentence.
        "by June 30. There had been some doubts on Wall Street that the",
        "De Croo, here for talks with Administration officials and",
        "by Royal Dutch/Shell Group <RD> <ST>, scheduled its annual",
        # Prices and figures are not dates.
        "48-5/8.",
        "421.50/422.",
        "32768, 98304, 163840, 229376",
        # "编辑" inside a sentence.
        "然后它们将所需的参数存储到vars文件中，可以不加注释和编辑：",
        # Long lines are content whatever their start.
        "Source code of the kernel is kept in a separate package, which the build system "
        "unpacks, patches and compiles for every architecture that the distribution supports.",
        "",
    ],
)
def test_content_lines(line):
    assert not is_attribution(line)


def test_strip_keeps_everything_else_in_order():
    text = "First line of content.\nBy Jane Doe\nSecond line.\n© 2024 Example"
    assert strip_attribution(text) == "First line of content.\nSecond line."
    plain = "no attribution here\nnor here"
    assert strip_attribution(plain) is plain


def test_terms_ignore_attribution_lines():
    extractor = TermExtractor()
    body = "Scientists found a new frog species in the cloud forests of Peru last spring."
    counts = extractor.term_counts(body + "\n转载请注明出处：某某网\nSource: Example Wire")
    assert counts == extractor.term_counts(body)
    assert extractor.tokens(body + "\nBy Jane Doe") == extractor.tokens(body)


def test_repost_footer_moves_a_long_text_by_nothing():
    paragraphs = [
        f"Paragraph {i} describes the harbour district, its trams, the market and the "
        f"university campus number {i} in some detail for the readers of the city paper."
        for i in range(12)
    ]
    article = "\n".join(paragraphs)
    repost = article + "\n转载请注明出处：本文来源于某某网\n2024-03-15 10:23:45 责任编辑：王小明"
    assert hamming_distance(fingerprint(article), fingerprint(repost)) == 0


def _line_by_line(text: str) -> str:
    """strip_attribution as it was before it looked for candidate lines first."""
    lines = text.split("\n")
    kept = [line for line in lines if not is_attribution(line)]
    return text if len(kept) == len(lines) else "\n".join(kept)


# Lines that are, almost are, or hide attribution lines: leading punctuation and blank
# lines before a byline, notices in upper case or in a long line, the other case forms of
# "i" and "s", Turkish dotless i.
_LINES = [
    "By Jane Doe",
    "  -- BY STAFF | March 15",
    "by June 30. There had been some doubts",
    "Source: Example Wire",
    "SOURCES | Reuters",
    "   ",
    "",
    "* * *",
    "2024-03-15 10:23",
    "15.03.2024",
    "48-5/8.",
    "Copyright 2024 Example",
    "ALL RIGHTS RESERVED by the publisher",
    "All rıghts reserved",
    "all rightſ reserved",
    "ALL RİGHTS RESERVED",
    "(C) 2024 Example Media",
    "the (c) clause of the contract",
    "责任编辑：王小明",
    "转载请注明出处",
    "然后它们将所需的参数存储到vars文件中，可以不加注释和编辑：",
    "Paragraph of content that mentions All Rights Reserved in passing and goes on for long "
    "enough to be content rather than a notice of any kind at all.",
    "Ordinary content line about trams and harbours.",
    "Photo: Jane Doe",
    "\u00a0Read more: https://example.com",
    "2024年3月15日",
    " 10:23 Uhr",
    "12.1.1. RAID",
    "3 - 4 ٣",
    "12:30 __",
    "© 2024 Example",
    "x\nMore content, then (c) 2024 Example Media",
]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_LINES) | st.text(max_size=30), max_size=12))
def test_candidate_search_strips_what_every_line_test_strips(lines):
    text = "\n".join(lines)
    assert strip_attribution(text) == _line_by_line(text)
    assert has_attribution(text) == (_line_by_line(text) != text)


@pytest.mark.parametrize("line", _LINES)
def test_candidate_search_on_each_line_in_any_position(line):
    for text in (line, f"content\n{line}", f"{line}\ncontent", f"a\n\n--\n{line}\nb"):
        assert strip_attribution(text) == _line_by_line(text)


def test_keyword_letters_have_no_other_case_forms_than_those_listed():
    # line_starts() matches the keywords' ASCII letters in either case only: right while
    # every other character matching one of them case-insensitively, as the patterns do, is
    # one of _OTHER_CASE_FORMS (a text holding one is tested line by line). A keyword's
    # non-ASCII first character ("ź") needs nothing: every such line is a candidate.
    everything = every_character_text()
    for letter in sorted({c for keyword in _KEYWORDS for c in keyword if c.isascii()}):
        for match in re.findall(re.escape(letter), everything, re.IGNORECASE):
            assert match in (letter.lower(), letter.upper()) or match in _OTHER_CASE_FORMS


def test_keywords_are_the_starts_the_patterns_need():
    # Every way _LABELLED and _BYLINE can start is a keyword (or a non-ASCII letter).
    starts = "|".join(_KEYWORDS)
    for line in ("Sources: x", "Written by: x", "Images: x", "Credit: x", "Bron: x", "编辑：x"):
        assert re.match(rf"\W*(?:{starts})", line, re.IGNORECASE) and is_attribution(line)
    bylines = re.search(r"\(\?:([^)]*)\)", _BYLINE.pattern).group(1).split("|")
    assert "Door" in bylines
    for name in bylines:
        assert name.lower() in _KEYWORDS


def test_notice_letters_have_no_other_case_forms_than_those_listed():
    # has_attribution() looks for the notices in the lower-cased text: right only while
    # every character that matches a notice's letter case-insensitively lower-cases to it,
    # or is one of _OTHER_CASE_FORMS (a text holding one is tested line by line).
    everything = every_character_text()
    for letter in sorted(set("".join(_NOTICES))):
        for match in re.findall(re.escape(letter), everything, re.IGNORECASE):
            assert match.lower() == letter or match in _OTHER_CASE_FORMS, (letter, match)
