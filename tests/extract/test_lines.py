"""What the built-in extractor keeps around the article's paragraphs, line by line."""

from __future__ import annotations

import re

from scrapy_simhash.extract.main_text import main_text

LONG = [
    "The city council approved the budget for next year after a debate that lasted until "
    "midnight, and spending on schools rises by four percent.",
    "Road maintenance is cut to pay for two new libraries in the northern districts, which "
    "have waited for them since the last census.",
    "The mayor said the decision was difficult but necessary, and promised a review of the "
    "plan in the spring once the tax receipts of the winter are known.",
]
_PRIVATE_USE = re.compile("[\ue000-\uf8ff]")


def page(article: str) -> str:
    return (
        '<html><head><meta charset="utf-8"></head><body>'
        "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        f"<article>{article}</article></body></html>"
    )


def lines_of(article: str) -> list[str]:
    text = main_text(page(article))
    assert text.fallback is None
    assert not _PRIVATE_USE.search(text)
    return text.split("\n")


def test_a_list_of_links_around_blocks_goes_with_its_title():
    # Source line breaks inside the links' headings once split each card into a line of
    # marks and a line of text that was not a link line: the list and its title stayed.
    cards = "".join(
        f'<li><a href="/story/{n}">\n  <h3>\n    Teaser headline number {n}\n  </h3>\n</a></li>'
        for n in range(4)
    )
    lines = lines_of(f"<p>{LONG[0]}</p><div>Most read</div><ul>{cards}</ul><p>{LONG[1]}</p>")
    assert lines == LONG[:2]


def test_a_paragraph_wrapped_in_the_source_is_one_line():
    wrapped = LONG[0].replace(" after ", "\nafter ").replace(" and ", "\n  and ")
    assert lines_of(f"<p>{wrapped}</p><p>{LONG[1]}</p>") == LONG[:2]


def test_a_heading_with_nothing_under_it_is_dropped():
    lines = lines_of(
        f"<h2>Background</h2><p>{LONG[0]}</p>"
        # A box was removed from under "Most read": the next heading is of its rank.
        "<h2>Most read</h2><h2>The vote</h2>"
        f"<h3>In the chamber</h3><p>{LONG[1]}</p><p>{LONG[2]}</p>"
        "<h2>Leave a comment</h2>"
    )
    assert lines == ["Background", LONG[0], "The vote", "In the chamber", LONG[1], LONG[2]]


def test_a_form_the_reader_writes_in_is_not_text():
    lines = lines_of(
        f"<p>{LONG[0]}</p><p>{LONG[1]}</p>"
        '<form action="/comment"><h3>Leave a reply</h3>'
        "<p>Your email address will not be published. Required fields are marked.</p>"
        '<label>Comment</label><textarea name="comment"></textarea>'
        '<label>Email</label><input type="email" name="email">'
        "<p>Save my name, email, and website in this browser for the next time I comment.</p>"
        "<p>This site reduces spam. Learn how your comment data is processed.</p></form>"
    )
    assert lines == LONG[:2]


def test_a_page_inside_one_form_with_a_comment_box_keeps_its_article():
    html = (
        '<html><body><form id="aspnetForm" action="/default.aspx">'
        + "".join(f"<p>{p}</p>" for p in LONG)
        + '<textarea name="comment"></textarea></form></body></html>'
    )
    assert main_text(html).split("\n") == LONG


def test_around_the_paragraphs_a_p_stays_and_furniture_goes():
    lines = lines_of(
        "<p>A short lead.</p><div>By Staff Writer</div><div>Share this article</div>"
        f"<div>12 May 2024</div><p>{LONG[0]}</p><p>{LONG[1]}</p>"
        "<div>Tags: budget</div><p>Corrected on 13 May.</p><div>Print</div>"
    )
    assert lines == [
        "A short lead.",
        "12 May 2024",  # the line right above the first paragraph
        LONG[0],
        LONG[1],
        "Corrected on 13 May.",
    ]


def test_the_headline_block_above_the_paragraphs_stays():
    lines = lines_of(
        "<div>Breaking</div><h1>Budget approved</h1><div>Schools gain, roads lose</div>"
        f"<div>12 May 2024</div><p>{LONG[0]}</p><p>{LONG[1]}</p>"
    )
    assert lines == ["Budget approved", "Schools gain, roads lose", "12 May 2024", *LONG[:2]]


def test_list_items_that_end_the_article_stay():
    lines = lines_of(
        f"<p>{LONG[0]}</p><p>{LONG[1]}</p>"
        "<ol><li>Preheat the oven.</li><li>Bake for twenty minutes.</li></ol>"
        "<div>Share this recipe</div>"
    )
    assert lines == [*LONG[:2], "Preheat the oven.", "Bake for twenty minutes."]


def test_an_image_caption_is_not_text():
    lines = lines_of(
        f'<p>{LONG[0]}</p><div class="media"><img src="a.jpg"><span>Photo: AFP</span></div>'
        f'<p>{LONG[1]}</p><p>Short words <img src="smile.png" alt=":)"> inline.</p>'
    )
    assert lines == [LONG[0], LONG[1], "Short words inline."]


def test_counting_distinct_words_reads_a_long_text_the_same_way():
    from scrapy_simhash.extract.main_text import _WORDS, _WORDS_ONE_BY_ONE, _has_words

    for repeated in (_WORDS_ONE_BY_ONE - 1, _WORDS_ONE_BY_ONE, _WORDS_ONE_BY_ONE + 5):
        for tail in range(0, 25, 4):
            text = "Budget budget 城市议会 " * repeated + " ".join(f"Word{i}" for i in range(tail))
            distinct = len({word.lower() for word in _WORDS.findall(text)})
            for count in (2, 10, 20, 30):
                assert _has_words(text, count) == (distinct >= count)
