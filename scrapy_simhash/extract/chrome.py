"""Chrome markers: the elements of a page that say they are site chrome, not content.

What the page declares is chrome whatever its size: ``nav``, ``aside``, a ``header`` or
``footer`` of the page (not of an article or section, as ARIA maps them), ARIA roles.
Class and id words (``share``, ``cookie``, ``comments``, ``related``, ``popup``...) are
evidence, not a verdict: an element named so that holds most of the page's text is a
wrapper (``<div class="Page-ad-margins">``, an ASP.NET page inside one ``<form>``), and
ambiguous words (``sidebar``, and ``header``, ``widget``, ``ad`` as whole class tokens)
count only on elements with little text or mostly links. :mod:`scrapy_simhash.extract.main_text`
weighs the text of marked elements down when it looks for the article, and drops them
unless they hold it. Where it finds no article, :func:`without_declared_chrome` gives the
next wider text: the page without only what it declares chrome.

No Scrapy import.
"""

from __future__ import annotations

import re

import lxml.etree

from .text import HEADINGS, block_text, drop_trees, raw_length, text_of, visible_tree

# Paragraph text: text nodes of paragraph length (a menu's link texts are shorter).
_PARAGRAPH_TEXTS = lxml.etree.XPath("/descendant::text()[string-length(normalize-space()) > 80]")
#: Elements that hold site chrome rather than the page's own content.
CHROME_TAGS = ("nav", "aside", "menu", "button", "select", "figcaption")
#: Chrome only when they belong to the page, not to an article or a section in it.
PAGE_TAGS = ("header", "footer")
_SECTIONING = frozenset(["article", "aside", "main", "nav", "section"])
#: ARIA roles of chrome, for pages that do not use HTML5 elements.
CHROME_ROLES = frozenset(
    ["navigation", "banner", "contentinfo", "complementary", "search", "menu", "dialog"]
)
#: Words of a class or id (split at spaces, ``-`` and ``_``) that mark chrome even when
#: the value also says "content" (``comment-body``, ``entry-share``, ``related-posts``)...
ALWAYS_CHROME_WORDS = frozenset(
    [
        # An author's box (bio, photo, "more by"): a copy of the article on another site
        # has another, or none; the byline it also names is chrome too.
        "author",
        "breadcrumb",
        "breadcrumbs",
        "comment",
        "comments",
        "consent",
        "cookie",
        "cookies",
        "disqus",
        "newsletter",
        "overlay",
        "related",
        "share",
        "sharing",
        "social",
    ]
)
#: ... and these, unless it says "content" (``post-header-content``, ``nav-main``).
CHROME_WORDS = ALWAYS_CHROME_WORDS | frozenset(
    [
        "advert",
        "advertisement",
        "adverts",
        "byline",
        "caption",
        "dateline",
        "dialog",
        "footer",
        "login",
        "masthead",
        "menu",
        "menubar",
        "modal",
        "nav",
        "navigation",
        "pager",
        "pagination",
        "popup",
        "skiplink",
        "sponsor",
        "sponsored",
        "subscribe",
        "toolbar",
    ]
)
CONTENT_WORDS = frozenset(["content", "main", "article", "body", "post", "entry", "story", "text"])
#: Words that mark chrome only on elements with little text or mostly links: a site's
#: sidebar is, a documentation page's "sidebar" box of explanations is not.
WEAK_CHROME_WORDS = frozenset(["sidebar"])
#: Whole class tokens that mark chrome on small elements only: page builders use them for
#: wrappers of everything (``elementor-widget-container``, ``header-style-2``).
WEAK_CHROME_TOKENS = frozenset(["header", "widget", "widgets", "ad", "ads", "banner", "promo"])
_NEVER_CHROME = frozenset(["html", "body", "main", "article"])


def _substring_pattern(words: frozenset[str]) -> str:
    """A pattern that finds any of *words* in a string. Words that contain another word
    are left out (the shorter one finds them), and the others make a trie of their letters
    (``b(?:anner|yline)``): the regex engine tries a letter once, not once per word that
    starts with it, in half the time of a plain ``banner|byline|...``."""
    return _trie({w for w in words if not any(o != w and o in w for o in words)})


def _trie(words: set[str]) -> str:
    if "" in words:  # a word ends here: it is found whatever follows
        return ""
    by_first: dict[str, set[str]] = {}
    for word in words:
        by_first.setdefault(word[0], set()).add(word[1:])
    branches = sorted(re.escape(first) + _trie(rest) for first, rest in by_first.items())
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


# Every word that can make a verdict, as a substring ("nav" covers "topnav" and "navbar").
_ANY_CHROME = re.compile(
    _substring_pattern(CHROME_WORDS | WEAK_CHROME_WORDS | WEAK_CHROME_TOKENS | {"nav"})
)

#: An element with more than this share of the page's text is a wrapper, not chrome.
WRAPPER_SHARE = 0.5
#: Weakly marked elements with more text than this (and few links) are kept.
WEAK_MAX_CHARS = 200
#: The text beside an image, up to this length, is its caption or credit.
CAPTION_CHARS = 100
#: Elements searched above an image for its caption.
CAPTION_LEVELS = 4
_NOT_CAPTION_BOXES = frozenset(
    [*HEADINGS, "p", "a", "li", "td", "th", "button", "article", "main", "body", "html"]
)

# Every role, class and id value of the document, in document order, each a "smart" string
# that knows its attribute's name and element: one XPath in C, and no Python call per
# element to read three attributes, which took nearly as long as the search. "/descendant::*" is
# the "//*" of the whole document (a page can have a second top-level <html> beside the
# root) without the extra step over every node that "//" takes first.
_NAMES = lxml.etree.XPath("/descendant::*/@role | /descendant::*/@class | /descendant::*/@id")
#: Class and id values judged at most before the judgements are forgotten (a crawl of one
#: site sees a few hundred; a set of many sites' pages, ~150 new ones per page).
VERDICTS_KEPT = 32768
_STRONG, _WEAK = 2, 1
_FOR_WRITING = lxml.etree.XPath("boolean(descendant::textarea | descendant::input[@type='email'])")
_VERDICTS: dict[str, int] = {}


def chrome_elements(
    root: lxml.etree._Element, wrappers: list | None = None
) -> tuple[list[lxml.etree._Element], list[lxml.etree._Element]]:
    """The elements of *root* marked as chrome (see the module's description): those the
    page declares chrome (by tag or role), and those only named so (by class or id).
    Elements named chrome that hold too much of the page to be taken for chrome are
    appended to *wrappers*, if given."""
    visible = raw_length(root)
    # What the page declares (HTML5 elements, ARIA roles) is chrome whatever its size...
    verdicts: dict = {}  # element -> its strongest verdict, or None for a chrome role
    declared, page_tags, weak = _by_tag(root, verdicts)
    declared += _of_the_page(page_tags)
    # ... what its class or id names may be a wrapper of the whole page.
    _judge_names(root, verdicts)
    named = []
    for element, verdict in verdicts.items():
        if verdict is None:
            declared.append(element)
        # The tag only for the few elements with a verdict: reading it makes a string.
        elif element.tag not in _NEVER_CHROME:
            (named if verdict == _STRONG else weak).append(element)
    return declared, _not_wrappers(named, weak, visible, wrappers)


def _by_tag(root: lxml.etree._Element, verdicts: dict) -> tuple[list, list, list]:
    """Step one of :func:`chrome_elements`, in one walk of the tree, not three: the
    elements of a chrome tag, those of a page tag (chrome if they belong to the page), and
    the forms that may be chrome; a form the reader writes in gets its verdict in
    *verdicts*."""
    declared: list = []
    page_tags: list = []
    weak: list = []  # forms: chrome, or (ASP.NET) the whole page
    for element in root.iter(*CHROME_TAGS, *PAGE_TAGS, "form"):
        tag = element.tag
        if tag == "form":
            # A form the reader writes in (a comment, a newsletter's address) is named
            # chrome by what it holds, as strongly as by a class word; other forms can
            # wrap a whole page.
            if _FOR_WRITING(element):
                verdicts[element] = _STRONG
            else:
                weak.append(element)
        else:
            (page_tags if tag in PAGE_TAGS else declared).append(element)
    return declared, page_tags, weak


def _of_the_page(page_tags: list) -> list:
    """Step two of :func:`chrome_elements`: the ``header`` and ``footer`` elements of
    *page_tags* that are not inside an article, a section...: the page's own."""
    own = []
    sectioned: dict = {}  # element -> whether it is inside an article, section...
    for element in page_tags:
        # Up to the first ancestor already known: linear in the tree, however deeply a
        # (hostile) page nests thousands of headers.
        path = []
        node = element.getparent()
        while node is not None and node not in sectioned and node.tag not in _SECTIONING:
            path.append(node)
            node = node.getparent()
        inside = node is not None and (node.tag in _SECTIONING or sectioned[node])
        sectioned.update(dict.fromkeys(path, inside))
        if not inside:
            own.append(element)
    return own


def _judge_names(root: lxml.etree._Element, verdicts: dict) -> None:
    """Step three of :func:`chrome_elements`: each element's strongest verdict by its
    class and id words, into *verdicts* (``None`` for a chrome role, which wins). Most
    values mark nothing, and their elements are never asked for."""
    for value in _NAMES(root):
        if value.attrname == "role":
            if value.strip().lower() in CHROME_ROLES:
                verdicts[value.getparent()] = None
            continue
        verdict = _VERDICTS.get(value)
        if verdict is None:
            verdict = _judge(str(value))  # a plain str: the smart one holds its tree
        if verdict:
            element = value.getparent()
            known = verdicts.get(element, 0)
            if known is not None and known < verdict:
                verdicts[element] = verdict


def _not_wrappers(named: list, weak: list, visible: int, wrappers: list | None) -> list:
    """The last step of :func:`chrome_elements`: of the elements *named* chrome, those
    with at most ``WRAPPER_SHARE`` of the page's *visible* text (the others are appended
    to *wrappers*, if given); of the *weak* ones, the small ones and those mostly links."""
    chrome = []
    for element in named:
        if raw_length(element) <= WRAPPER_SHARE * visible:
            chrome.append(element)
        elif wrappers is not None:
            wrappers.append(element)
    for element in weak:
        length = raw_length(element)
        if length <= WEAK_MAX_CHARS or (
            length <= WRAPPER_SHARE * visible
            and sum(raw_length(a) for a in element.iter("a")) >= 0.5 * length
        ):
            chrome.append(element)
    return chrome


def _judge(names: str) -> int:
    """The verdict on the class or id value *names* (``_STRONG``, ``_WEAK`` or 0),
    remembered: a site repeats its values on every page."""
    if len(_VERDICTS) >= VERDICTS_KEPT:
        _VERDICTS.clear()
    _VERDICTS[names] = verdict = _words_verdict(names)
    return verdict


def _words_verdict(names: str) -> int:
    # Most values hold no chrome word even as a part: one search in C rules them out.
    if not names:
        return 0
    names = names.lower()
    if not _ANY_CHROME.search(names):
        return 0
    # Words split at spaces, "-" and "_": str.split() splits at the spaces a regex's \s
    # matches, in a third of the time of one.
    words = set(names.replace("-", " ").replace("_", " ").split())
    if not words.isdisjoint(ALWAYS_CHROME_WORDS):
        return _STRONG
    if not words.isdisjoint(WEAK_CHROME_WORDS):
        return _WEAK
    if not words.isdisjoint(CONTENT_WORDS):
        return 0
    if not words.isdisjoint(CHROME_WORDS) or (
        "nav" in names and any(w.startswith("nav") or w.endswith("nav") for w in words)
    ):
        return _STRONG  # a word starting or ending in "nav" counts too (topnav, navbar)
    if not WEAK_CHROME_TOKENS.isdisjoint(names.split()):
        return _WEAK
    return 0


def captions(root: lxml.etree._Element) -> list[lxml.etree._Element]:
    """The captions and credits of the images of *root*, with their images: for each
    ``img``, ``picture`` or ``video``, the nearest element around it that has text, when
    that text is at most ``CAPTION_CHARS`` long ("Photo: AFP", a figure's legend).
    Copies of one article caption their images differently, if at all. The search stops
    at a paragraph, a heading, a link, a list item or a table cell (an image inline in
    text, a teaser's picture) and after ``CAPTION_LEVELS`` elements."""
    found = []
    for image in root.iter("img", "picture", "video"):
        box = image.getparent()
        for _ in range(CAPTION_LEVELS):
            if box is None or box.tag in _NOT_CAPTION_BOXES:
                box = None
                break
            length = len(text_of(box).strip())
            if length:
                break
            box = box.getparent()
        else:
            box = None
        if (
            box is not None
            and length <= CAPTION_CHARS
            and not any(ancestor.tag == "a" for ancestor in box.iterancestors())
        ):
            found.append(box)
    return found


def without_declared_chrome(html: str) -> str:
    """The visible text of *html* without what the page declares chrome (``nav``,
    ``aside``, its own ``header`` and ``footer``, ARIA roles): the next wider text where
    :func:`~scrapy_simhash.extract.main_text.main_text` kept too little. Class and id names are
    not trusted here (they can name a wrapper of the article), nor teaser grids (they can
    be a list page's content), and a declared element holding half of the page's
    paragraph text or more (an article in an ``aside``, a ``header`` around the whole
    page) is kept."""
    root = visible_tree(html)
    if root is None:
        return ""
    # Paragraph text, not a menu's link text: a page with a short article and a long menu
    # has most of its text in the menu.
    held = _paragraph_text_held(root)
    half = 0.5 * held.get(root, 0)
    declared, _ = chrome_elements(root)
    drop_trees(element for element in declared if not (half and held.get(element, 0) >= half))
    return block_text(root)


def _paragraph_text_held(root: lxml.etree._Element) -> dict:
    """Element -> the characters of paragraph text under it, for every element that holds
    some: added up from the bottom in one pass (measuring each element's subtree made
    nested chrome quadratic)."""
    held: dict = {}
    for text in _PARAGRAPH_TEXTS(root):
        element = text.getparent()
        if text.is_tail:
            element = element.getparent()
        if element is not None:
            held[element] = held.get(element, 0) + len(text)
    if held:
        for element in reversed(list(root.iter())):  # descendants before their ancestors
            length = held.get(element)
            parent = element.getparent()
            if length and parent is not None:
                held[parent] = held.get(parent, 0) + length
    return held
