"""A page is dropped only on evidence that covers its own content: pages that share a note,
a sidebar, a quote or a licence footer with their siblings are kept."""

from __future__ import annotations

from fragment_sites import (
    BLOG_TAG_BALCONY,
    BLOG_TAG_RYE,
    CALC,
    DRAW,
    NOTE,
    doc_site,
    quotes_tag_page,
)

from scrapy_simhash import Deduplicator, Fingerprinter, open_index
from scrapy_simhash.extract.extractors import get_extractor


def second_verdict(first: str, second: str):
    """The verdict on page *second* after page *first*, as the default extractor reads
    them."""
    extract = get_extractor("builtin")
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter())
        dedup.check_text(extract(first), "first")
        return dedup.check_text(extract(second), "second")


def test_menu_pages_sharing_a_note_box_are_two_pages():
    extract = get_extractor("builtin")
    text = extract(CALC)
    assert text.fallback == "own"
    # The page's own blocks: its heading, its menus and their descriptions.
    assert "Calc menus" in text and "Sorts, filters and validates ranges of cells." in text
    assert second_verdict(DRAW, CALC).status == "new"


def test_the_note_alone_is_still_a_copy_of_the_note():
    page = f'<html><head><meta charset="utf-8"></head><body><p>{NOTE}</p></body></html>'
    assert second_verdict(page, page).status == "duplicate"


def test_blog_list_pages_sharing_a_sidebar_are_two_pages():
    extract = get_extractor("builtin")
    text = extract(BLOG_TAG_RYE)
    assert "Dark rye for the winter" in text
    # The sidebar's "about" box, the longest text of the page, is not what is compared.
    assert "Leipzig" not in text
    assert second_verdict(BLOG_TAG_RYE, BLOG_TAG_BALCONY).status == "new"


def test_a_blog_list_page_crawled_twice_is_a_copy():
    assert second_verdict(BLOG_TAG_RYE, BLOG_TAG_RYE).status == "duplicate"


def test_tag_pages_sharing_their_one_quote_are_two_pages():
    verdict = second_verdict(quotes_tag_page("thinking"), quotes_tag_page("world"))
    assert verdict.status == "new"


def test_index_pages_sharing_a_licence_footer_are_two_pages():
    site = doc_site()
    extract = get_extractor("builtin")
    text = extract(site["genindex-Y.html"])
    assert "ycor() (in module turtle)" in text and "Copyright" not in text
    assert second_verdict(site["genindex-Y.html"], site["genindex-Q.html"]).status == "new"
    assert second_verdict(site["genindex-Q.html"], site["contents.html"]).status == "new"


def test_an_article_is_still_fingerprinted_by_its_main_text():
    site = doc_site()
    text = get_extractor("builtin")(site["tutorial.html"])
    assert text.fallback is None
    assert "Copyright" not in text and "Show Source" not in text
    assert second_verdict(site["tutorial.html"], site["tutorial-3.1.html"]).status == "duplicate"
