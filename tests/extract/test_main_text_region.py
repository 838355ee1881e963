"""Where the built-in extractor looks for the article: what the page declares its content,
and blocks whose lines are broken by <br>."""

from __future__ import annotations

from scrapy_simhash.extract.main_text import main_text

# Distinct sentences, each a paragraph of its own (about 200 characters).
ARTICLE = [
    f"Paragraph {n} of the report: the harbour authority counted {n * 7} ships in the "
    f"first week of the season, and the pilots' association asked for {n + 2} more boats "
    "to guide them through the narrow channel at night."
    for n in range(1, 7)
]
# Long texts of a consent box or of a slideshow (about 350 characters each).
CONSENT = [
    f"Purpose {n}: playback of embedded videos. Processing: collection of connection data, "
    "of data about your browser and about the content you view; placement of advertising "
    "cookies by the video platform; processing of the data collected in countries outside "
    "the union. Storage: until you leave the website. Legal basis: your consent, which you "
    f"may withdraw at any time (service {n})."
    for n in range(1, 4)
]
SLIDES = [
    f"Slide {n}: the new ferry terminal opens in spring, with room for {n * 100} cars "
    "and their drivers a day."
    for n in range(1, 4)
]


def html(body: str) -> str:
    return f'<html><head><meta charset="utf-8"></head><body>{body}</body></html>'


def test_long_texts_outside_what_the_page_declares_its_content_are_left_out():
    # A consent box's long texts outside <main> would otherwise hold a third of the page's
    # paragraph text, and the article's region would grow to the whole page to hold them.
    consent = '<div class="privacy-settings">' + "".join(f"<p>{t}</p>" for t in CONSENT)
    page = html(
        consent
        + "</div><main><h1>Ships</h1>"
        + "".join(f"<p>{t}</p>" for t in ARTICLE[:5])
        + "</main>"
    )
    text = main_text(page)
    assert text.fallback is None
    assert all(paragraph in text for paragraph in ARTICLE[:5])
    assert not any(t[:40] in text for t in CONSENT)


def test_schema_org_article_body_is_declared_content():
    # The same consent box, with the article in a plain <div> that schema.org's microdata
    # names the article's body (as many news CMSs write it).
    consent = '<div class="privacy-settings">' + "".join(f"<p>{t}</p>" for t in CONSENT)
    body = "".join(f"<p>{t}</p>" for t in ARTICLE[:5])
    for itemprop, declared in (("articleBody", True), ("text articleBody", True), ("x", False)):
        page = html(f'{consent}</div><div itemprop="{itemprop}">{body}</div>')
        text = main_text(page)
        assert all(paragraph in text for paragraph in ARTICLE[:5])
        assert any(t[:40] in text for t in CONSENT) is not declared, itemprop


def test_a_list_of_sibling_articles_is_not_the_declared_content():
    # A slideshow of <article> elements is a list (other posts): the post beside it, in a
    # plain <div>, is the page's content, and the slides are not.
    slides = "".join(f"<article><p>{t}</p></article>" for t in SLIDES)
    page = html(
        f'<div class="slider">{slides}</div><div class="post">'
        + "".join(f"<p>{t}</p>" for t in ARTICLE)
        + "</div>"
    )
    text = main_text(page)
    assert all(paragraph in text for paragraph in ARTICLE)
    assert not any(slide[:30] in text for slide in SLIDES)


def test_a_single_article_is_the_declared_content():
    # The same page with one <article>: its text is the content, the post outside it
    # weighs less (it is not kept when the article holds enough of the page).
    page = html(
        "<article>"
        + "".join(f"<p>{t}</p>" for t in ARTICLE)
        + '</article><div class="box">'
        + "".join(f"<p>{t}</p>" for t in CONSENT[:1])
        + "</div>"
    )
    text = main_text(page)
    assert all(paragraph in text for paragraph in ARTICLE)
    assert CONSENT[0][:40] not in text


def test_hard_wrapped_prose_before_the_first_paragraph_is_kept():
    # Lines broken by <br> are one block: each line is short, the block is prose.
    wrapped = (
        "After Mary Magdalene, a follower who was depicted as a penitent<br>\n"
        "weeping for her sins; her name became synonymous with tearful<br>\n"
        "sentimentality, and the word came to mean overly sentimental."
    )
    page = html(
        f"<article><h1>maudlin</h1><div>{wrapped}</div>"
        + "".join(f"<p>{t}</p>" for t in ARTICLE[:3])
        + "</article>"
    )
    text = main_text(page)
    for line in ("After Mary Magdalene", "weeping for her sins", "sentimentality, and"):
        assert line in text


def test_short_lines_of_a_paragraph_after_the_last_long_one_are_kept():
    # A paragraph of a heading and short lines (a product's specifications) is the
    # article's, like any paragraph after the last long one; a short block that is no
    # paragraph there is not (a share bar's label).
    page = html(
        "<article>"
        + "".join(f"<p>{t}</p>" for t in ARTICLE[:3])
        + "<p><strong>ACCURACY</strong><br>\nClass 0.5s<br>\nCertified meters</p>"
        + "<div>Share this<br>\nPrint</div></article>"
    )
    text = main_text(page)
    for line in ("ACCURACY", "Class 0.5s", "Certified meters"):
        assert line in text
    assert "Share this" not in text
