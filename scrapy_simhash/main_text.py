"""The main text of an HTML page: the article a reader came for, not the site around it.

Pages of one site share navigation, sidebars, teasers and footers; fingerprinted, they make
distinct pages of the site look alike, and they make two copies of one article on two sites
look different. :func:`main_text` keeps the article, in four steps over one lxml tree:

1. **Chrome markers** (:mod:`scrapy_simhash.chrome`). Elements that say what they are:
   ``nav``, ``aside``, a page's ``header`` or ``footer``, ARIA roles, and class or id words
   (``share``, ``cookie``, ``comments``, ``related``, ``popup``...). A marker is evidence,
   not a verdict: a wrapper of most of the page is not chrome, and a marked element that
   holds most of the article's paragraphs (``<div class="entry share">``) is kept.
   Teaser grids (:mod:`scrapy_simhash.teasers`) go first, whatever their names: runs of
   short sibling cards of one kind, each with a link and text of its own (a lead, a date)
   in blocks of their own, as "more articles" lists show them; their leads would otherwise
   count as the page's paragraphs.
2. **The article's region.** Blocks with long runs of text (not link text) score for
   their parent and, halved, for their grandparent (as readability does); text inside
   marked chrome scores less, and so does text outside what the page declares its content
   (``main``, ``role="main"``, schema.org's ``articleBody``, an ``article`` that is not
   one of a list of them). The
   best-scoring element grows to its ancestors until it holds 80% of the page's long text
   (so weighed), so an article split into several blocks is kept whole. Nothing that
   contains the region is removed as chrome.
3. **Lines.** The region's text, one block per line, is judged line by line: a line that is
   mostly link text is navigation (menus, related links, tag clouds), and a short line
   right above one is that list's title ("Related articles"); short lines before
   the first long line and after the last (bylines, share bars, "read more") are dropped,
   except paragraphs of their own. Lines broken by ``<br>`` are judged as their block.
   Image captions, bylines and datelines are dropped: copies of one article carry them
   differently.
4. **Never a fragment.** When what is left is a small share of the page's visible text, or
   has fewer distinct words than a fingerprint needs while the page has many, extraction
   failed: the whole page's filtered text is used; failing that, the page without only what
   it declares chrome (its menus, sidebars, header and footer: on every page of the site,
   they would make the site's short pages near-duplicates); failing that, all visible
   text. :attr:`MainText.fallback` says so (``region``, ``chrome``, ``page``), and the
   crawl counts it.

No Scrapy import.
"""

from __future__ import annotations

import functools
import re

import lxml.etree

from .body import Line, body_of
from .chrome import chrome_elements, without_declared_chrome
from .teasers import drop_teasers
from .text import (
    INLINE_TAGS,
    block_text,
    composed,
    drop_tree,
    page_text,
    strip_tags,
    text_length,
    visible_tree,
    within,
)

#: A text block this long (in characters of its own text) is a paragraph of content.
PARAGRAPH_CHARS = 80
#: The region grows until it holds this share of the page's paragraph text.
REGION_SHARE = 0.8
#: A marked element holding this share of the region's paragraph text is kept.
ARTICLE_SHARE = 0.5
#: Paragraphs inside marked chrome score this much of their length.
CHROME_WEIGHT = 0.3
#: On a page that declares where its content is (``main``, ``role="main"``,
#: ``itemprop="articleBody"``, an ``article`` that is not one of a list of articles) and
#: has paragraphs there, paragraphs outside it score this much.
OUTSIDE_WEIGHT = 0.2
#: A line with more than this share of link text is navigation.
LINK_LINE_SHARE = 0.4
#: A line shorter than this right above a link list is the list's title.
TITLE_CHARS = 60
#: The main text is a failure below this share of the visible text, unless it is at least
#: FALLBACK_CHARS long.
FALLBACK_SHARE = 0.1
FALLBACK_CHARS = 2000

# Link text is marked with two private-use characters before the text is serialised, so
# that each line knows how much of it is link text.
_LINK_START, _LINK_END = "\ue000", "\ue001"
_LINK_TEXT = re.compile("\ue000([^\ue001]*)\ue001?")
_LINK_MARKS = re.compile("[\ue000-\ue004]")
_BR = "\ue003"
_PARA = "\ue002"
_ITEM = "\ue004"  # a list item or table cell: structured content (specifications, steps)
# CJK characters carry about as much as a short word each; counting them three times
# makes a Chinese sentence as "long" as its English translation.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_WORDS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{1,2}|[^\W\u3400-\u9fff\uf900-\ufaff]+")
# "/descendant::" is "//" (the whole document) without its extra step over every node. Most
# text nodes are short (the spaces between tags): their length rules them out before a
# normalised copy of them is made.
_LONG_TEXTS = lxml.etree.XPath(
    "/descendant::text()[string-length() > 20][string-length(normalize-space()) > 20]"
)


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


def main_text(html: str, *, min_words: int = 20, body: bool = False) -> MainText:
    """The main text of *html*, one block per line (see the module's description).

    *body*: only the body of the main text, where it is most of it (see
    :mod:`scrapy_simhash.body`): what is fingerprinted.

    *min_words*: main text with fewer distinct words, on a page with at least twice as
    many, is an extraction failure (the fingerprint would be that of a fragment).
    Malformed HTML never raises."""
    text = _main_text(html, min_words, body)
    return MainText.of(composed(text), text.fallback)


def _main_text(html: str, min_words: int, body: bool) -> MainText:
    root = visible_tree(html)
    if root is None:
        return MainText.of(strip_tags(html) if html and html.strip() else "")
    visible = text_length(root)
    if not visible:
        return MainText.of("")
    # Teasers first: their leads would otherwise count as the page's paragraph text, and
    # the region would grow to hold them.
    drop_teasers(root)
    declared, named = chrome_elements(root)
    region, article = _region(root, set(declared) | set(named))
    keep = set(region.iterancestors())
    keep.add(region)
    # Not again inside one dropped already: dropping copies the subtree, and nested chrome
    # would make that quadratic.
    dropped: set = set()
    for element in declared:
        if element not in keep and element.getparent() is not None:
            if within(element, dropped):
                continue
            drop_tree(element)
            dropped.add(element)
    # An element only named like chrome that holds most of the region's paragraphs is the
    # article under a misleading name (``<div class="entry share">``): its name is
    # evidence, its content the verdict. (What the page declares, a ``nav``, stays chrome.)
    most = ARTICLE_SHARE * article.get(region, 0)
    for element in named:
        if (
            element not in keep
            and element.getparent() is not None
            and not within(element, dropped)
            and not (most and article.get(element, 0) >= most)
        ):
            drop_tree(element)
            dropped.add(element)
    for link in root.iter("a"):
        link.text = _LINK_START + (link.text or "")
        link.tail = _LINK_END + (link.tail or "")
        # A link around blocks (a whole teaser card) spans several lines: each is marked.
        for inner in link.iterdescendants():
            if inner.text and not inner.text.isspace():
                inner.text = _LINK_START + inner.text
            if inner.tail and not inner.tail.isspace():
                inner.tail = _LINK_START + inner.tail
    # A line after a <br> goes on its block: hard-wrapped prose, or a paragraph's list of
    # short lines, is judged as the block it is.
    for br in region.iter("br"):
        if br.tail and not br.tail.isspace():
            br.tail = _BR + br.tail.lstrip()
    for paragraph in region.iter("p"):
        paragraph.text = _PARA + (paragraph.text or "")
    if body:
        for item in region.iter("li", "td", "th", "dt", "dd"):
            item.text = _ITEM + (item.text or "")
    # Only needed when the main text looks short: parsed again then (the tree has lost
    # its chrome by now).
    everything = functools.cache(lambda: page_text(html))

    def complete(text: str) -> bool:
        if len(text) < FALLBACK_SHARE * visible and len(text) < FALLBACK_CHARS:
            return False
        return _has_words(text, min_words) or not _has_words(everything(), 2 * min_words)

    lines = _good_lines(block_text(region))
    text = _text(lines)
    if complete(text):
        return MainText.of(body_of(lines, text) if body else text)
    if region is not root:
        text = _text(_good_lines(block_text(root)))
        if complete(text):
            return MainText.of(text, "region")
    # Wider, but not yet the site's menus and footer: those are on every page of a site
    # and would make its short pages near-duplicates of each other.
    text = without_declared_chrome(html)
    if complete(text):
        return MainText.of(text, "chrome")
    return MainText.of(everything(), "page")


def _region(root: lxml.etree._Element, penalised: set) -> tuple[lxml.etree._Element, dict]:
    """The element that holds the article (the root when no paragraph is found), and
    for each element that holds paragraphs, the characters of paragraph text it holds."""
    own: dict = {}  # element -> characters of its own long texts (inline markup included)
    for text in _LONG_TEXTS(root):
        element = text.getparent()
        if text.is_tail:
            element = element.getparent()
        while element is not None and element.tag in INLINE_TAGS:
            if element.tag == "a":
                break
            element = element.getparent()
        if element is None or element.tag == "a":
            continue  # link text is not content
        own[element] = own.get(element, 0) + len(text)
    paragraphs = {e: length for e, length in own.items() if length >= PARAGRAPH_CHARS}
    if not paragraphs:
        return root, {}
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
    in_main: dict = {}  # element -> whether it is in what the page declares its content
    for element in top_down:
        parent = parent_of[element]
        in_chrome[element] = element in penalised or (parent is not None and in_chrome[parent])
        in_main[element] = (parent is not None and in_main[parent]) or _declared_main(element)
    # What the page declares its content is evidence, as chrome markers are: a consent
    # box's or a slideshow's long texts outside it weigh less than its paragraphs.
    outside = OUTSIDE_WEIGHT if any(in_main[e] for e in paragraphs) else 1.0
    held: dict = dict.fromkeys(depth, 0.0)  # element -> paragraph text in its subtree
    plain: dict = dict.fromkeys(depth, 0)  # the same, chrome text not weighed down
    scores: dict = {}
    for element, length in paragraphs.items():
        weight = CHROME_WEIGHT if in_chrome[element] else 1.0
        if not in_main[element]:
            weight *= outside
        held[element] += length * weight
        plain[element] += length
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
            plain[parent] += plain[element]
    if not scores:
        return root, plain
    region = max(scores, key=scores.get)
    total = held[root]
    while held.get(region, 0) < REGION_SHARE * total and region.getparent() is not None:
        region = region.getparent()
    return region, plain


def _declared_main(element: lxml.etree._Element) -> bool:
    """Whether the page declares *element* its content: ``main``, ``role="main"``, the
    schema.org ``articleBody``, or an ``article`` without sibling articles (a run of them
    is a list: slides, teasers)."""
    if element.tag == "main" or element.get("role") == "main":
        return True
    itemprop = element.get("itemprop")
    if itemprop and "articleBody" in itemprop.split():
        return True
    if element.tag != "article":
        return False
    # The nearest sibling article on each side, not a count of them all: every article of
    # a run asks, and a count would make a run of thousands quadratic.
    return (
        next(element.itersiblings("article"), None) is None
        and next(element.itersiblings("article", preceding=True), None) is None
    )


def _good_lines(text: str) -> list[Line]:
    """The lines of *text* that are content: no link lists, no short lines before the
    first paragraph or after the last, unless they are paragraphs of their own. (List
    items and table cells are marked only where the body is asked for.)"""
    lines: list[Line] = []
    paragraphs = []
    first = last = None
    after_links = False  # whether the line before was a link line
    split = text.split("\n")
    blocks = _broken_blocks(split) if _BR in text else {}
    for number, line in enumerate(split):
        block = blocks.get(number)
        paragraph = _PARA in line or (block is not None and block[1])
        links = 0
        if _LINK_START in line:
            # The marks themselves are not text: an image link is a line of marks only.
            links = len(_LINK_MARKS.sub("", "".join(_LINK_TEXT.findall(line))))
        item = _ITEM in line
        if paragraph or links or item or _LINK_END in line or _BR in line:
            line = _LINK_MARKS.sub("", line)
        if links > LINK_LINE_SHARE * len(line):
            # A short line right above a list of links is that list's title ("Related
            # articles", "Mehr zum Thema"): it goes with its list.
            if (
                lines
                and not after_links
                and len(lines[-1].text) < TITLE_CHARS
                and not paragraphs[-1]
                and last != len(lines) - 1
            ):
                lines.pop()
                paragraphs.pop()
            after_links = True
            continue
        after_links = False
        size = block[0] if block is not None else _reading_length(line)
        if size >= PARAGRAPH_CHARS:
            if first is None:
                first = len(lines)
            last = len(lines)
        own = size if block is None else _reading_length(line)
        lines.append(Line(line, own, block and (block[2], block[0]), item))
        paragraphs.append(paragraph)
    if first is None:
        return lines
    # One short line before the first paragraph stays: it is usually the headline's lead.
    kept = lines[max(0, first - 1) : last + 1]
    kept += [line for line, p in zip(lines[last + 1 :], paragraphs[last + 1 :], strict=True) if p]
    return kept


def _text(lines: list[Line]) -> str:
    return "\n".join(line.text for line in lines)


def _broken_blocks(lines: list[str]) -> dict[int, tuple[int, bool, int]]:
    """For each line of a block broken by ``<br>`` (its lines after the first start with
    the mark), the block's length, whether it is a paragraph (``p``), and the number of
    its first line: the lines of hard-wrapped prose are short, the block is not."""
    blocks = {}
    start = 0
    for end in range(1, len(lines) + 1):
        if end < len(lines) and lines[end].startswith(_BR):
            continue
        if end - start > 1:
            group = lines[start:end]
            length = sum(map(_reading_length, group))
            paragraph = _PARA in group[0]
            for number in range(start, end):
                blocks[number] = (length, paragraph, start)
        start = end
    return blocks


def _reading_length(line: str) -> int:
    """The length of *line*, each CJK character counted three times (see ``_CJK``)."""
    return len(line) + 2 * len(_CJK.findall(line))


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
