from __future__ import annotations

import pytest

from scrapy_simhash.extract.chrome import _STRONG, _WEAK, _words_verdict, captions, chrome_elements
from scrapy_simhash.extract.text import parse_html

FILLER = "<p>" + "Words of the article that make the page long enough. " * 20 + "</p>"


def _marked(html: str) -> tuple[set[str], set[str]]:
    """The ids of the elements chrome_elements finds declared and only named."""
    declared, named = chrome_elements(parse_html(html))
    return {e.get("data-x") for e in declared}, {e.get("data-x") for e in named}


def test_class_id_and_role_of_one_element_are_judged_together():
    declared, named = _marked(
        "<html><body>"
        # A strong id beside a weak class: strong, so chrome however long its text (below
        # half of the page's).
        '<div data-x="strong-id" class="sidebar" id="share">' + FILLER + "</div>"
        # A chrome role wins over the class: declared, not named.
        '<div data-x="role" role=" Navigation " class="share">x</div>'
        # A content word in the class does not undo a strong id.
        '<div data-x="content-class" class="entry-content" id="comments">y</div>'
        # Weak by class, few characters: chrome.
        '<div data-x="weak" class="header">z</div>'
        # Nothing in either.
        '<div data-x="plain" class="entry" id="top">w</div>'
        # A role that is not chrome leaves the names to judge.
        '<div data-x="main-role" role="main" class="cookie-banner">v</div>'
        + FILLER * 3
        + "</body></html>"
    )
    assert declared == {"role"}
    assert named == {"strong-id", "content-class", "weak", "main-role"}


def test_verdicts_are_the_same_when_remembered():
    html = '<html><body><div data-x="a" class="Share-Bar">x</div>' + FILLER + "</body></html>"
    assert _marked(html) == _marked(html) == (set(), {"a"})


@pytest.mark.parametrize(
    ("value", "verdict"),
    [
        # Words are split at runs of spaces of any kind, "-" and "_", at either end too.
        ("post\u00a0share", _STRONG),
        ("entry\tcontent\nmenu", 0),  # a content word undoes "menu"...
        ("entry__content--comments", _STRONG),  # ... not "comments"
        ("--sidebar--", _WEAK),
        ("_topnav_", _STRONG),  # a word that starts or ends in "nav"
        ("canvas-navy", _STRONG),
        ("canvas caravan", 0),  # "nav" inside no word's start or end
        ("unavailable", 0),
        ("author-info text-center", _STRONG),  # an author's box, whatever else it says
        ("entry-author", _STRONG),
        ("authority", 0),  # a word, not a part of one
        ("ad", _WEAK),  # weak tokens are whole tokens between spaces only
        ("ad-slot", 0),
        ("x\u2003ad", _WEAK),
        ("", 0),
        ("- _ -", 0),
    ],
)
def test_words_of_a_value(value, verdict):
    assert _words_verdict(value) == verdict


def test_forms_the_reader_writes_in_are_named_chrome():
    _, named = _marked(
        "<html><body>"
        + FILLER
        + '<form data-x="comment"><p>Leave a reply</p><textarea></textarea></form>'
        + '<form data-x="newsletter"><input type="email"><button>Subscribe</button></form>'
        # A search box is a form too, but a small one, judged as before (weak).
        + '<form data-x="search"><input type="search"></form>'
        + FILLER * 2
        + "</body></html>"
    )
    assert {"comment", "newsletter"} <= named
    assert "search" in named  # weak and short: chrome


def test_captions_are_the_short_text_beside_an_image():
    long = "A long legend that explains what the picture shows, in more words than a credit. " * 2
    root = parse_html(
        "<html><body>"
        '<div data-x="credit"><img src="a.jpg"><span>Photo: AFP</span></div>'
        '<figure data-x="figure"><div><picture><img src="b.jpg"></picture></div>'
        "<div><span>Rome, 2020</span></div></figure>"
        f'<div data-x="legend"><img src="c.jpg"><div>{long}</div></div>'
        '<p data-x="inline">Short words <img src="smile.png"> inline.</p>'
        '<a href="/x"><div data-x="card"><img src="d.jpg"><span>A teaser</span></div></a>'
        '<div><div><div><div><div data-x="deep"><img src="e.jpg"></div></div></div></div>'
        "<span>Too far up</span></div>"
        "</body></html>"
    )
    assert {box.get("data-x") for box in captions(root)} == {"credit", "figure"}
