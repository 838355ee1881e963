"""The containment rule (scrapy_simhash.anchors.contained), at its boundaries."""

from __future__ import annotations

from scrapy_simhash.anchors import MIN_COVER, MIN_SHARE, MIN_SHARED, contained

# (anchors, anchored words, cover per mille) of a page whose text is all long paragraphs.
WHOLE = (8, 800, 1000)


def test_one_shared_paragraph_is_no_evidence():
    assert MIN_SHARED == 2
    assert not contained(1, 400, (1, 400, 1000), (1, 400, 1000))
    assert contained(2, 400, (2, 400, 1000), (2, 400, 1000))


def test_three_quarters_of_the_smaller_pages_anchors_counted_and_by_words():
    assert MIN_SHARE == 0.75
    assert contained(6, 600, WHOLE, WHOLE)
    assert not contained(5, 600, WHOLE, WHOLE)
    assert not contained(6, 599, WHOLE, WHOLE)
    # The smaller page decides: 3 of its 4 anchors are shared, and 300 of its 400 words.
    assert contained(3, 300, (4, 400, 1000), WHOLE)


def test_the_shared_paragraphs_are_most_of_the_smaller_pages_text():
    assert MIN_COVER == 0.6
    # All 8 anchors shared, but the long paragraphs are only 59% of the page's words.
    assert not contained(8, 800, (8, 800, 590), (8, 800, 590))
    assert contained(8, 800, (8, 800, 600), (8, 800, 600))
    # A page is told by its own text: the other's cover does not make it contained.
    assert not contained(4, 400, (4, 400, 590), (8, 900, 1000))


def test_either_page_may_be_the_one_contained():
    # The same 8 anchors: the page whose long paragraphs are all of its text is contained
    # in the one that also holds code and lists, whichever was stored first.
    assert contained(8, 646, (8, 646, 591), (8, 646, 1000))
    assert contained(8, 646, (8, 646, 1000), (8, 646, 591))
    # A page all of whose anchors the other holds, but which is mostly other text, is not.
    assert not contained(4, 400, (4, 400, 500), (8, 800, 1000))
