"""The main text of an HTML page: the article a reader came for, not the site around it.

Pages of one site share navigation, sidebars, teasers and footers; fingerprinted, they make
distinct pages of the site look alike, and they make two copies of one article on two sites
look different. :func:`main_text` keeps the article, in four steps over one lxml tree:

1. **Chrome markers.** Elements that say what they are: ``nav``, ``aside``, a ``header`` or
   ``footer`` of the page (not of an article or section, as ARIA maps them), ARIA roles,
   and class or id words (``share``, ``cookie``, ``comments``, ``related``...). A marker is
   evidence, not a verdict: an element named so that holds most of the page's text is a
   wrapper (``<div class="Page-ad-margins">``, an ASP.NET page inside one ``<form>``);
   ambiguous words (``sidebar``, and ``header``, ``widget``, ``ad`` as whole class tokens)
   count only on elements with little text or mostly links.
2. **The article's region.** Blocks with long runs of text (not link text) score for
   their parent and, halved, for their grandparent (as readability does); text inside
   marked chrome scores less. The best-scoring element grows to its ancestors until it
   holds 80% of the page's long text, so an article split into several blocks is kept
   whole. Nothing that contains the region is removed as chrome.
3. **Lines.** The region's text, one block per line, is judged line by line: a line that is
   mostly link text is navigation (menus, related links, tag clouds); short lines before
   the first long line and after the last (bylines, share bars, "read more") are dropped,
   except paragraphs of their own. Image captions, bylines and datelines are dropped:
   copies of one article carry them differently.
4. **Never a fragment.** When what is left is a small share of the page's visible text, or
   has fewer distinct words than a fingerprint needs while the page has many, extraction
   failed: the whole page's filtered text is used, and failing that all visible text.
   :attr:`MainText.fallback` says so, and the crawl counts it.

No Scrapy import.
"""

from __future__ import annotations

import functools
import re

import lxml.etree

from .text import block_text, drop_tree, strip_tags, visible_text, visible_tree

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
        "breadcrumb",
        "breadcrumbs",
        "comment",
        "comments",
        "consent",
        "cookie",
        "cookies",
        "disqus",
        "newsletter",
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
        "footer",
        "masthead",
        "menu",
        "menubar",
        "nav",
        "navigation",
        "pager",
        "pagination",
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
_WORD_SPLIT = re.compile(r"[\s_-]+")

#: An element with more than this share of the page's text is a wrapper, not chrome.
WRAPPER_SHARE = 0.5
#: Weakly marked elements with more text than this (and few links) are kept.
WEAK_MAX_CHARS = 200
#: A text block this long (in characters of its own text) is a paragraph of content.
PARAGRAPH_CHARS = 80
#: The region grows until it holds this share of the page's paragraph text.
REGION_SHARE = 0.8
#: Paragraphs inside marked chrome score this much of their length.
CHROME_WEIGHT = 0.3
#: A line with more than this share of link text is navigation.
LINK_LINE_SHARE = 0.4
#: The main text is a failure below this share of the visible text, unless it is at least
#: FALLBACK_CHARS long.
FALLBACK_SHARE = 0.1
FALLBACK_CHARS = 2000

# Link text is marked with two private-use characters before the text is serialised, so
# that each line knows how much of it is link text.
_LINK_START, _LINK_END = "\ue000", "\ue001"
_LINK_TEXT = re.compile("\ue000([^\ue001]*)\ue001?")
_LINK_MARKS = re.compile("[\ue000\ue001\ue002]")
_PARA = "\ue002"
# CJK characters carry about as much as a short word each; counting them three times
# makes a Chinese sentence as "long" as its English translation.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WORDS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{1,2}|[^\W\u3400-\u9fff\uf900-\ufaff]+")
_INLINE = frozenset(
    [
        "a",
        "abbr",
        "b",
        "big",
        "cite",
        "code",
        "em",
        "font",
        "i",
        "label",
        "mark",
        "q",
        "s",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "time",
        "u",
    ]
)
_WITH_NAMES = lxml.etree.XPath("//*[@role or @class or @id]")
_LONG_TEXTS = lxml.etree.XPath("//text()[string-length(normalize-space(.)) > 20]")
_TEXT_LENGTH = lxml.etree.XPath("string-length(normalize-space())")
# Without normalising spaces: half the time, and the shares it is used for are alike.
_RAW_LENGTH = lxml.etree.XPath("string-length()")


class MainText(str):
    """The text an extractor kept (a ``str``), with :attr:`fallback` set to the reason
    when the main text could not be found and a wider text was used instead."""

    fallback: str | None = None

    @classmethod
    def of(cls, text: str, fallback: str | None = None) -> MainText:
        result = cls(text)
        result.fallback = fallback
        return result

    def __reduce__(self):  # pickled to and from worker processes with its reason
        return MainText.of, (str(self), self.fallback)


def main_text(html: str, *, min_words: int = 20) -> MainText:
    """The main text of *html*, one block per line (see the module's description).

    *min_words*: main text with fewer distinct words, on a page with at least twice as
    many, is an extraction failure (the fingerprint would be that of a fragment).
    Malformed HTML never raises."""
    root = visible_tree(html)
    if root is None:
        return MainText.of(strip_tags(html) if html and html.strip() else "")
    visible = _TEXT_LENGTH(root)
    if not visible:
        return MainText.of("")
    chrome = _chrome(root, _RAW_LENGTH(root))
    region = _region(root, set(chrome))
    keep = set(region.iterancestors())
    keep.add(region)
    for element in chrome:
        if element not in keep and element.getparent() is not None:
            drop_tree(element)
    for link in root.iter("a"):
        link.text = _LINK_START + (link.text or "")
        link.tail = _LINK_END + (link.tail or "")
    for paragraph in region.iter("p"):
        paragraph.text = _PARA + (paragraph.text or "")
    # Only needed when the main text looks short: parsed again then (the tree has lost
    # its chrome by now).
    everything = functools.cache(lambda: visible_text(html, remove_boilerplate=False))

    def complete(text: str) -> bool:
        if len(text) < FALLBACK_SHARE * visible and len(text) < FALLBACK_CHARS:
            return False
        return _has_words(text, min_words) or not _has_words(everything(), 2 * min_words)

    text = _good_lines(block_text(region))
    if complete(text):
        return MainText.of(text)
    if region is not root:
        text = _good_lines(block_text(root))
        if complete(text):
            return MainText.of(text, "region")
    return MainText.of(everything(), "page")


def _chrome(root: lxml.etree._Element, visible: int) -> list[lxml.etree._Element]:
    """The elements to drop as chrome (their text also scores less in :func:`_region`)."""
    # What the page declares (HTML5 elements, ARIA roles) is chrome whatever its size...
    declared = list(root.iter(*CHROME_TAGS))
    sectioned: dict = {}  # element -> whether it is inside an article, section...
    for element in root.iter(*PAGE_TAGS):
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
            declared.append(element)
    named = []  # ... what its class or id names may be a wrapper of the whole page
    weak = list(root.iter("form"))  # chrome, or (ASP.NET) the whole page
    for element in _WITH_NAMES(root):
        role = element.get("role")
        if role and role.strip().lower() in CHROME_ROLES:
            declared.append(element)
            continue
        if element.tag in _NEVER_CHROME:
            continue
        verdict = _words_verdict(element.get("class"))
        if verdict != "strong":
            verdict = _words_verdict(element.get("id")) or verdict
        if verdict == "strong":
            named.append(element)
        elif verdict == "weak":
            weak.append(element)
    chrome = declared + [e for e in named if _RAW_LENGTH(e) <= WRAPPER_SHARE * visible]
    for element in weak:
        length = _RAW_LENGTH(element)
        if length <= WEAK_MAX_CHARS or (
            length <= WRAPPER_SHARE * visible
            and sum(_RAW_LENGTH(a) for a in element.iter("a")) >= 0.5 * length
        ):
            chrome.append(element)
    return chrome


@functools.lru_cache(maxsize=8192)
def _words_verdict(names: str | None) -> str | None:
    # Each class or id value is judged once per process: a site repeats them on every page.
    if not names:
        return None
    tokens = names.lower().split()
    words = set(_WORD_SPLIT.split(" ".join(tokens)))
    if not words.isdisjoint(ALWAYS_CHROME_WORDS):
        return "strong"
    if not words.isdisjoint(WEAK_CHROME_WORDS):
        return "weak"
    if not words.isdisjoint(CONTENT_WORDS):
        return None
    if any(w in CHROME_WORDS or w.startswith("nav") or w.endswith("nav") for w in words):
        return "strong"  # a word starting or ending in "nav" counts too (topnav, navbar)
    if not WEAK_CHROME_TOKENS.isdisjoint(tokens):
        return "weak"
    return None


def _region(root: lxml.etree._Element, penalised: set) -> lxml.etree._Element:
    """The element that holds the article (the root when no paragraph is found)."""
    own: dict = {}  # element -> characters of its own long texts (inline markup included)
    for text in _LONG_TEXTS(root):
        element = text.getparent()
        if text.is_tail:
            element = element.getparent()
        while element is not None and element.tag in _INLINE:
            if element.tag == "a":
                break
            element = element.getparent()
        if element is None or element.tag == "a":
            continue  # link text is not content
        own[element] = own.get(element, 0) + len(text)
    paragraphs = {e: length for e, length in own.items() if length >= PARAGRAPH_CHARS}
    if not paragraphs:
        return root
    # The paragraphs' ancestors, each with its depth, found by walking up from each
    # paragraph only until a known ancestor: linear in the tree, however deeply a
    # (hostile) page nests thousands of paragraphs.
    depth: dict = {}
    parent_of: dict = {}
    for element in paragraphs:
        path = []
        node = element
        while node is not None and node not in depth:
            path.append(node)
            node = node.getparent()
        base = depth[node] if node is not None else -1
        for steps, child in enumerate(reversed(path), start=1):
            depth[child] = base + steps
            parent_of[child] = node
            node = child
    top_down = sorted(depth, key=depth.__getitem__)
    in_chrome: dict = {}  # element -> whether it or an ancestor is chrome
    for element in top_down:
        parent = parent_of[element]
        in_chrome[element] = element in penalised or (parent is not None and in_chrome[parent])
    held: dict = dict.fromkeys(depth, 0.0)  # element -> paragraph text in its subtree
    scores: dict = {}
    for element, length in paragraphs.items():
        weight = CHROME_WEIGHT if in_chrome[element] else 1.0
        held[element] += length * weight
        # As readability does: a paragraph scores for its parent and, halved, for its
        # grandparent, so the best element is the one that holds the paragraphs.
        score = (1 + min(length / 100, 3)) * weight
        parent = parent_of[element]
        if parent is not None:
            scores[parent] = scores.get(parent, 0) + score
            grandparent = parent_of[parent]
            if grandparent is not None:
                scores[grandparent] = scores.get(grandparent, 0) + score / 2
    for element in reversed(top_down):
        parent = parent_of[element]
        if parent is not None:
            held[parent] += held[element]
    if not scores:
        return root
    region = max(scores, key=scores.get)
    total = held[root]
    while held.get(region, 0) < REGION_SHARE * total and region.getparent() is not None:
        region = region.getparent()
    return region


def _good_lines(text: str) -> str:
    """The lines of *text* that are content: no link lists, no short lines before the
    first paragraph or after the last, unless they are paragraphs of their own."""
    lines = []
    paragraphs = []
    first = last = None
    for line in text.split("\n"):
        paragraph = _PARA in line
        links = 0
        if _LINK_START in line:
            links = sum(map(len, _LINK_TEXT.findall(line)))
        if paragraph or links or _LINK_END in line:
            line = _LINK_MARKS.sub("", line)
        if links > LINK_LINE_SHARE * len(line):
            continue
        if len(line) >= PARAGRAPH_CHARS or (
            len(line) + 2 * len(_CJK.findall(line)) >= PARAGRAPH_CHARS
        ):
            if first is None:
                first = len(lines)
            last = len(lines)
        lines.append(line)
        paragraphs.append(paragraph)
    if first is None:
        return "\n".join(lines)
    # One short line before the first paragraph stays: it is usually the headline's lead.
    kept = lines[max(0, first - 1) : last + 1]
    kept += [line for line, p in zip(lines[last + 1 :], paragraphs[last + 1 :], strict=True) if p]
    return "\n".join(kept)


def _has_words(text: str, count: int) -> bool:
    """Whether *text* has *count* distinct words (pairs of Han characters for Chinese): a
    cheap stand-in for the number of terms a fingerprint would get. Stops reading as soon
    as it knows."""
    seen: set[str] = set()
    for match in _WORDS.finditer(text):
        seen.add(match.group().lower())
        if len(seen) >= count:
            return True
    return False
