"""Attribution lines (sources, bylines, copyright, repost notices, bare dates) are not
features; lines of content that look a little like them are."""

from __future__ import annotations

import pytest

from scrapy_simhash import fingerprint, hamming_distance
from scrapy_simhash.attribution import is_attribution, strip_attribution
from scrapy_simhash.terms import TermExtractor


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
