"""The built-in main-text extractor on the failure modes of real templates."""

from __future__ import annotations

import logging
import sys
import unicodedata

import pytest
from pipelines import make_pipeline, simhash_stats
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash import Deduplicator, Fingerprinter, open_index
from scrapy_simhash.analysis.fingerprint import fingerprint, format_fingerprint
from scrapy_simhash.extract.extractors import get_extractor, visible_text
from scrapy_simhash.extract.main_text import MainText, main_text

BUDGET = (
    "The city council approved the budget for next year after a debate that lasted until "
    "midnight. Spending on schools rises by four percent, while the road maintenance fund "
    "is cut to pay for two new libraries in the northern districts."
)
FROG = (
    "Biologists working in the cloud forests of southern Peru have described a new species "
    "of frog no longer than a fingernail. It lives in moss on the trunks of old trees and "
    "calls only in the hour after sunset, which is why it went unnoticed for so long."
)
SECOND = (
    "The mayor said the decision was difficult but necessary, and promised a review of the "
    "spending plan in the spring once the tax receipts of the winter months are known."
)
CHROME = (
    "<nav><a href='/'>Home</a> <a href='/news'>News</a> <a href='/sport'>Sport</a></nav>"
    "<p>Advertisement</p>"
    "<div class='cookie-banner'>We use cookies to improve your experience. Accept all</div>"
    "<a href='#main'>Skip to content</a>"
)


def article(*paragraphs: str) -> str:
    return "<article>" + "".join(f"<p>{p}</p>" for p in paragraphs) + "</article>"


def page(body: str) -> str:
    return f'<html><head><meta charset="utf-8"></head><body>{CHROME}{body}</body></html>'


@pytest.mark.parametrize(
    "wrapper",
    [
        '<div class="Page-ad-margins">{}</div>',
        '<div class="non-ad-column-l">{}</div>',
        '<div class="m-advertisement-off-canvas--pusher">{}</div>',
        '<div class="elementor-widget-container">{}</div>',
        '<div class="widget Blog" id="Blog1">{}</div>',
        '<div class="header-style-header-2">{}</div>',
        '<div class="with-sidebar-right">{}</div>',
        '<form id="aspnetForm" action="/default.aspx">{}</form>',
    ],
)
def test_a_wrapper_named_like_chrome_keeps_its_article(wrapper):
    text = main_text(page(wrapper.format(article(BUDGET, SECOND))))
    assert text.splitlines() == [BUDGET, SECOND]
    assert text.fallback is None


def test_distinct_articles_in_a_chrome_named_wrapper_are_not_duplicates():
    # Before, the wrapper was removed with the article, what was left ("Advertisement", a
    # cookie banner) took the exact-match path, and the second article was dropped.
    ex = get_extractor("builtin")
    wrap = '<div class="Page-ad-margins">{}</div><p>Advertisement</p>'
    a, b = ex(page(wrap.format(article(BUDGET)))), ex(page(wrap.format(article(FROG))))
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter())
        assert dedup.check_text(a, "a").match is None
        assert dedup.check_text(b, "b").match is None


def test_chrome_of_a_template_is_removed():
    body = (
        '<div class="sidebar-content"><h3>Popular</h3><ul>'
        + "".join(f"<li><a href='/p{i}'>Popular story number {i}</a></li>" for i in range(8))
        + "</ul></div>"
        "<main><article><header><h1>Budget approved</h1>"
        "<p class='lead'>Schools win, roads lose in next year's budget.</p></header>"
        f"<p>{BUDGET}</p>"
        "<figure><img src='x.jpg'><figcaption>The council chamber. Photo: J. Doe</figcaption>"
        f"</figure><p>{SECOND}</p>"
        "<div class='share-bar'><a href='#'>Share on Facebook</a> <a href='#'>Tweet</a></div>"
        "<div class='related-posts'><h4>Related</h4><ul>"
        "<li><a href='/a'>Council raises parking fees in the old town</a></li>"
        "<li><a href='/b'>New library opens in the north</a></li></ul></div>"
        # An author's box: long enough to pass for a paragraph, and "text" in its class.
        "<div class='author-info text-center'><h2>About Jane Roe</h2><p>Jane Roe covers the "
        "city council and the county budget. Before joining Example News she reported on "
        "schools for ten years. She lives in the old town with two cats.</p></div>"
        "</article>"
        "<section id='comments'><h3>3 comments</h3><p>Great article, thanks for sharing! I "
        "always wondered where the money for the libraries would come from, now I know.</p>"
        "</section></main>"
        "<div class='newsletter'>Sign up for our newsletter and never miss a story.</div>"
        "<footer>Copyright 2024 Example News. All rights reserved. Imprint. Privacy.</footer>"
    )
    text = main_text(page(body))
    assert BUDGET in text and SECOND in text
    for chrome in (
        "Popular",
        "Photo: J. Doe",
        "Share on Facebook",
        "Council raises parking fees",
        "Great article",
        "About Jane Roe",
        "covers the city council",
        "newsletter",
        "Copyright",
        "cookies",
        "Skip to content",
        "Home",
    ):
        assert chrome not in text, chrome


def test_a_header_inside_the_article_is_the_article_s_own():
    # As ARIA maps them: a <header> or <footer> is the page's banner only outside an
    # article or section.
    lead = "The council met for eleven hours before the vote on the budget was taken."
    body = f"<header>Example News</header><article><header><p>{lead}</p></header>"
    text = main_text(page(body + f"<p>{BUDGET}</p></article>"))
    assert text.splitlines() == [lead, BUDGET]


def test_a_documentation_sidebar_inside_the_text_is_kept():
    note = (
        "BACK TO BASICS Quota. The term quota refers to a limit on machine resources that a "
        "user is allowed to use, most often disk space. The administrator sets a soft limit, "
        "which may be exceeded for a grace period, and a hard limit, which never may be."
    )
    body = f"<div class='section'><p>{BUDGET}</p><div class='sidebar'><p>{note}</p></div>"
    text = main_text(page(body + f"<p>{SECOND}</p></div>"))
    assert text.splitlines() == [BUDGET, note, SECOND]


def test_chinese_article_without_its_sidebar():
    story = (
        "北岭县各乡镇春耕备耕工作全面铺开。在县城以东的石桥镇育秧工厂里，一条自动化育秧流水线"
        "正在满负荷运转，铺土、播种、覆土、洒水一气呵成，每小时可完成八百盘秧盘的播种作业。"
    )
    more = "县农业农村局表示，将继续扩大农业社会化服务覆盖面，让缺少劳动力的农户也能把地种好。"
    body = (
        "<div id='sidebar'><h3>热门文章</h3><ul>"
        + "".join(f"<li><a href='/{i}'>热门新闻标题第{i}条</a></li>" for i in range(6))
        + f"</ul></div><div class='content'><p>{story}</p><p>{more}</p></div>"
        "<div class='footer'>版权所有 © 2024 某某新闻网 京ICP备12345678号</div>"
    )
    assert main_text(page(body)).splitlines() == [story, more]


def test_list_pages_of_one_template_are_distinct():
    # Tag and archive pages: a list of teasers, mostly links, in the site's template.
    def tag_page(tag: str, titles: list[str]) -> str:
        teasers = "".join(
            f"<div class='teaser'><h2><a href='/{i}'>{t}</a></h2><p>{t}: the full story "
            f"inside, filed under {tag}.</p></div>"
            for i, t in enumerate(titles)
        )
        return page(f"<h1>Posts tagged {tag}</h1><div class='list'>{teasers}</div>")

    sport = tag_page(
        "sport",
        [
            "Local team wins the regional cup final after extra time",
            "Marathon route changes because of the bridge repairs",
            "Swimming pool reopens with a new diving board",
            "Youth football league finds new sponsors for next season",
            "Cycling race through the hills draws record crowds",
        ],
    )
    science = tag_page(
        "science",
        [
            "New species of frog found in the cloud forests of Peru",
            "Telescope on the mountain records a rare meteor shower",
            "University lab grows crystals in the space station",
            "Glaciers in the Alps lost a tenth of their ice in two years",
            "Bees learn to count to four in a surprising experiment",
        ],
    )
    ex = get_extractor("builtin")
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter())
        assert dedup.check_text(ex(sport), "sport").match is None
        assert dedup.check_text(ex(science), "science").match is None


def test_a_page_without_a_main_text_falls_back_to_its_own_blocks():
    # Only links: there is no paragraph to find, and what the rules keep is a fragment.
    # The page's own blocks are its entries: all of it but what is marked chrome.
    links = "".join(
        f"<li><a href='/d/{i}'>Download dataset number {i} (CSV)</a></li>" for i in range(40)
    )
    text = main_text(page(f"<h1>Open data</h1><ul>{links}</ul>"))
    assert isinstance(text, MainText)
    assert text.fallback == "own"
    assert "Download dataset number 39 (CSV)" in text and "Open data" in text
    assert "Sport" not in text  # the <nav>
    assert "We use cookies" not in text  # named chrome


def test_a_page_that_is_mostly_declared_chrome_falls_back_to_all_its_text():
    def links(name: str) -> str:
        return "".join(f"<li><a href='/{name}/{i}'>{name} section {i}</a></li>" for i in range(25))

    html = page(
        f"<nav><ul>{links('menu')}</ul></nav><h1>Open data</h1><footer>{links('map')}</footer>"
    )
    text = main_text(html)
    assert text.fallback == "page"
    assert "menu section 24" in text and "map section 24" in text and "Open data" in text


def _photo_page(caption: str, details: list[str]) -> str:
    """A page of a photo site: a caption and a few short lines of details, in a template
    of many more words (a menu and a footer on every page of the site)."""
    menu = "".join(f"<li><a href='/album/{i}'>Album of the month {i}</a></li>" for i in range(80))
    footer = "".join(
        f"<li><a href='/page/{i}'>About the site, page {i}</a></li>" for i in range(20)
    )
    lines = "".join(f"<li>{line}</li>" for line in details)
    return page(
        f"<nav><ul>{menu}</ul></nav><main><h1>Photo of the day</h1><p>{caption}</p>"
        f"<ul class='exif'>{lines}</ul></main>"
        f"<footer><ul>{footer}</ul><p>Copyright 2024 The Photo Site. All rights reserved.</p>"
        "</footer>"
    )


def test_short_pages_of_one_site_are_not_fingerprinted_by_its_menus_and_footer():
    # The rules keep only the caption, too small a share of the page to trust; the text
    # fingerprinted instead leaves out the menu and footer the page declares, which every
    # page of the site shares: two photos are two pages, not near-duplicates.
    aurora = _photo_page(
        "Northern lights over the fjord near Tromso, seen from the old harbour on a cold "
        "night in January, with the lights of the fishing boats below.",
        ["Camera: Nikon D850", "Exposure: 30 seconds", "Place: Tromso harbour", "By Ingrid"],
    )
    fox = _photo_page(
        "A red fox crossing the frozen river at dawn, photographed by a reader from the "
        "stone bridge in the town centre before the first bus came.",
        ["Camera: Canon R6", "Exposure: 1/500 second", "Place: Kastelbrug", "By Piet"],
    )
    ex = get_extractor("builtin")
    texts = [ex(aurora), ex(fox)]
    # A caption and a list of details: the page's own blocks, without its chrome.
    assert [t.fallback for t in texts] == ["own", "own"]
    assert "Album of the month" not in texts[0] and "About the site" not in texts[0]
    assert "Exposure: 30 seconds" in texts[0]
    # What a fallback keeps is fingerprinted: a change of it is deliberate (TERMS_VERSION).
    assert format_fingerprint(fingerprint(texts[0])) == "8b895a2fc285719e"
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter())
        assert dedup.check_text(texts[0], "aurora").match is None
        assert dedup.check_text(texts[1], "fox").match is None
        assert dedup.check_text(ex(aurora), "aurora again").match is not None


def test_a_short_page_is_not_a_failure():
    text = main_text(page(f"<p>{BUDGET}</p>"))
    assert text.endswith(BUDGET) and text.fallback is None


def test_main_text_survives_pickling_with_its_reason():
    import pickle

    text = MainText.of("some text", "page")
    copy = pickle.loads(pickle.dumps(text))
    assert copy == "some text" and copy.fallback == "page"


@deferred_f_from_coro_f
async def test_the_pipeline_counts_and_logs_pages_without_a_main_text(tmp_path, caplog):
    pipeline = make_pipeline(tmp_path, SIMHASH_TEXT_FIELDS=["html"])
    links = "".join(f"<li><a href='/d/{i}'>Dataset {i} of the survey</a></li>" for i in range(40))
    with caplog.at_level(logging.INFO, logger="scrapy_simhash"):
        item = {"url": "https://a.example/data", "html": page(f"<ul>{links}</ul>")}
        assert await pipeline.process_item(item) is item
        item = {"url": "https://a.example/budget", "html": page(article(BUDGET, SECOND))}
        assert await pipeline.process_item(item) is item
    stats = simhash_stats(pipeline)
    assert stats["extraction/fallback"] == 1
    assert stats["kept"] == 2
    messages = [r.getMessage() for r in caplog.records if "No main text" in r.getMessage()]
    assert len(messages) == 1 and "https://a.example/data" in messages[0]


class _OverBudget(Exception):
    pass


def _lines_run(function, *args, budget: int, **kwargs):
    """``function(*args, **kwargs)`` and the number of lines of Python it ran: a count of
    its work that no load on the machine changes (what lxml does in C is not counted).
    Past *budget* lines it stops with _OverBudget, so a quadratic regression fails at once
    instead of running for minutes."""
    count = 0

    def line(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
            if count > budget:
                raise _OverBudget(f"more than {budget} lines of Python")
        return line

    sys.settrace(lambda frame, event, arg: line)
    try:
        result = function(*args, **kwargs)
    finally:
        sys.settrace(None)
    return result, count


def _read_and_extract(page: str) -> tuple[str, MainText]:
    """All the visible text of *page*, and its main text, whose finding must cost at most
    a few times reading the text: the bound is on lines of Python run, not on time. (Linear
    extraction runs about 10 times the lines of reading these pages; the walks up from
    every paragraph or header to the root, quadratic, ran over 100 times.)"""
    everything, reading = _lines_run(
        visible_text, page, remove_boilerplate=False, budget=10_000_000
    )
    text, extracting = _lines_run(main_text, page, budget=30 * reading)
    assert extracting <= 30 * reading
    return everything, text


@pytest.mark.parametrize(
    "body",
    [
        "<div>" * 2000 + f"<p>{BUDGET}</p>" * 2000,
        "<div>" * 2000 + f"<header>Menu</header><p>{BUDGET}</p>" * 2000,
    ],
    ids=["paragraphs nested 2,000 deep", "headers nested 2,000 deep"],
)
def test_deeply_nested_pages_cost_a_few_times_reading_them(body):
    # Walking up from every paragraph or header to the root cost time in proportion to
    # their number times their depth: 11 s and 20 s on pages of 10,000 of them (2-6 MB).
    # Both are linear now: the work is counted on 2,000 of them.
    everything, text = _read_and_extract(f"<html><body>{body}</body></html>")
    assert text.count(BUDGET) == 2000 and len(everything) >= len(text)


_MENU = "".join(f"<li><a href='/{i}'>link number {i} of the menu</a></li>" for i in range(10_000))
_LONG = "A paragraph of more than eighty characters, which counts as the page's paragraph text."


@pytest.mark.slow
@pytest.mark.parametrize(
    ("inside", "after", "fallback"),
    [("", f"<p>{BUDGET[:60]}</p>", "page"), (f"<p>{_LONG}</p>", "", "chrome")],
    ids=["a short line after them", "a paragraph inside them"],
)
def test_nested_declared_chrome_costs_a_few_times_reading_the_page(inside, after, fallback):
    # A page without a main text, its menu inside 240 nested <aside>s: the fallback that
    # leaves out declared chrome measured each of them (15 s on a page like this one,
    # twice as large), and dropped those inside one dropped already again. Where they
    # hold the page's paragraph, each is kept, and each was measured.
    page = (
        "<html><body>"
        + "<aside>" * 240
        + f"<ul>{_MENU}</ul>{inside}"
        + "</aside>" * 240
        + f"{after}</body></html>"
    )
    everything, text = _read_and_extract(page)
    assert text.fallback == fallback and text == everything


def test_the_main_text_is_composed_once(monkeypatch):
    # Composing a run of combining marks costs the square of its length (a hostile page
    # can make it long): done once on the result, not on each text the extractor reads
    # (here the region and, the words being few, all of the page's text).
    calls = []
    normalize = unicodedata.normalize

    def counted(form: str, text: str) -> str:
        calls.append(form)
        return normalize(form, text)

    monkeypatch.setattr(unicodedata, "normalize", counted)
    marks = "a" + "\u0301\u0316" * 1000
    nav = "".join(f"<a href='/{i}'>section {i}</a>" for i in range(30))
    text = main_text(f"<html><body><nav>{nav}</nav><p>{'word ' * 100}{marks}</p></body></html>")
    assert text.endswith(normalize("NFC", marks))
    assert calls == ["NFC"]


def test_a_lead_beside_the_block_of_the_article_is_kept():
    # A paywall's container holds most of the article; its lead paragraphs are its
    # siblings, and so is a line of links, which is not kept.
    rest = "".join(f"<p>{FROG} Part {n} of the story.</p>" for n in range(6))
    links = "".join(f"<a href='/{n}'>Another story about frogs, number {n}</a> " for n in range(3))
    body = (
        f"<div class='article-area'><p>{links}</p><p>{BUDGET}</p><p>{SECOND}</p>"
        f"<!-- ad slot --><div class='paywall'>{rest}</div></div>"
    )
    lines = main_text(page(body)).splitlines()
    assert lines[:2] == [BUDGET, SECOND]
    assert len(lines) == 8 and not any("Another story" in line for line in lines)


BIO = (
    "Anna Weber has covered local politics for this paper since 2009, after ten years as a "
    "radio reporter in the valley; she lives in the old town with two cats and a piano."
)


def test_an_article_under_a_chrome_name_is_kept_whole():
    # "share" marks chrome even beside "entry"; but an element that holds most of the
    # article's paragraphs is the article, whatever its name says.
    # (It holds less than half of the page's text, so it is no wrapper of everything.)
    links = "".join(f"<li><a href='/{n}'>Another story number {n}</a></li>" for n in range(30))
    body = (
        f'<div class="main"><div class="entry share">{article(BUDGET, SECOND, FROG)}</div>'
        f'<div class="about-author"><p>{BIO}</p></div></div><ul>{links}</ul>'
    )
    text = main_text(page(body))
    assert [line for line in text.splitlines() if line != BIO] == [BUDGET, SECOND, FROG]


@pytest.mark.parametrize("name", ["modal", "login-dialog", "sp-privacy-popup", "overlay"])
def test_an_overlay_is_not_the_article(name):
    notice = " ".join(
        f"Paragraph {n} of the notice: we and our partners process personal data such as "
        "your address and the pages you read, for the purposes described below."
        for n in range(1, 3)
    )
    body = f'<div class="{name}"><p>{notice}</p></div>' + article(BUDGET, SECOND)
    text = main_text(page(body))
    assert "the notice" not in text
    assert text.splitlines()[-2:] == [BUDGET, SECOND]


def test_the_title_of_a_link_list_goes_with_it():
    links = "".join(f"<li><a href='/{n}'>Another story number {n}</a></li>" for n in range(4))
    body = (
        f"<article><p>{BUDGET}</p><h3>Read more</h3><ul>{links}</ul>"
        f"<h3>What the mayor said</h3><p>{SECOND}</p></article>"
    )
    assert main_text(page(body)).splitlines() == [BUDGET, "What the mayor said", SECOND]


def teasers(count: int, *, block_links: bool = False) -> str:
    """*count* teaser cards: a linked headline, a lead and a date; with *block_links*,
    each whole card is one link, as many templates write it."""
    cards = []
    for n in range(count):
        inner = (
            f"<h4>Other story number {n}</h4>"
            f"<p>A lead of the other story, which says what it is about. Number {n}.</p>"
            "<span>2 June 2022</span>"
        )
        if block_links:
            cards.append(f"<a class='card' href='/story/{n}'>{inner}</a>")
        else:
            inner = inner.replace("<h4>", f"<a href='/story/{n}'><h4>").replace(
                "</h4>", "</h4></a>"
            )
            cards.append(f"<div class='card'>{inner}</div>")
    return "".join(cards)


@pytest.mark.parametrize("block_links", [False, True])
def test_a_teaser_grid_in_the_article_is_dropped(block_links):
    cards = teasers(4, block_links=block_links)
    body = (
        f"<article><p>{BUDGET}</p><h3>More stories</h3><div>{cards}</div><p>{SECOND}</p></article>"
    )
    text = main_text(page(body))
    assert "Other story" not in text and "A lead of the other story" not in text
    assert BUDGET in text and SECOND in text


@pytest.mark.parametrize(
    "paragraph",
    [
        "<p>{}</p>",
        # A documentation page's paragraphs: divs, one with the link's address in a block.
        "<div class='para'>{}<div class='url'><a href='/doc'>https://example.org/doc</a></div></div>",
    ],
)
def test_paragraphs_with_links_are_not_teasers(paragraph):
    # Short paragraphs that each cite a source are the article's own text.
    paragraphs = [
        paragraph.format(
            f"Point {n} of the plan is explained by <a href='/doc/{n}'>the council's paper</a>, "
            "which the reporters read in full."
        )
        for n in range(5)
    ]
    text = main_text(page(f"<article><p>{BUDGET}</p>{''.join(paragraphs)}</article>"))
    assert all(f"Point {n} of the plan" in text for n in range(5))


def test_two_cards_are_not_a_grid():
    body = f"<article><p>{BUDGET}</p>{teasers(2)}<p>{SECOND}</p></article>"
    assert "A lead of the other story" in main_text(page(body))


def test_an_image_link_is_not_a_link_list():
    # A line of only an image link (a callout mark) is no list: the short line above it,
    # here the last line of a code listing, stays.
    body = (
        f"<article><p>{BUDGET}</p><pre>allow app_t tmp_t:file manage;\nfiletrans(app_t)</pre>"
        f"<p><a href='#note-1'><img src='1.png' alt=''></a></p><p>{SECOND}</p></article>"
    )
    assert "filetrans(app_t)" in main_text(page(body))


def test_paragraphs_in_a_second_top_level_html_are_read_without_an_error():
    # Malformed HTML never raises: a page whose article sits in a second <html> after
    # the first raised a KeyError while the region was measured against the first.
    page = (
        "<html><body><p>short</p></body></html><html><body><div>"
        + "".join(
            "<p>" + f"Paragraph {n} of the article, long enough to count. " * 3 + "</p>"
            for n in range(3)
        )
        + "</div></body></html>"
    )
    text = main_text(page)
    assert "Paragraph 2 of the article" in text and "Paragraph 0 of the article" in text
