"""The main text of an HTML page: the article a reader came for, not the site around it.

Pages of one site share navigation, sidebars, teasers and footers; fingerprinted, they make
distinct pages of the site look alike, and they make two copies of one article on two sites
look different. :func:`main_text` keeps the article, in four steps over one lxml tree:

1. **Chrome markers** (:mod:`scrapy_simhash.extract.chrome`). Elements that say what they are:
   ``nav``, ``aside``, a page's ``header`` or ``footer``, ARIA roles, and class or id words
   (``share``, ``cookie``, ``comments``, ``related``, ``popup``...). A marker is evidence,
   not a verdict: a wrapper of most of the page is not chrome, and a marked element that
   holds most of the article's paragraphs (``<div class="entry share">``) is kept.
   Teaser grids (:mod:`scrapy_simhash.extract.teasers`) go first, whatever their names: runs of
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
3. **Lines.** The region's text, one block per line (a line break in the page's source is
   a space, as a browser shows it), is judged line by line: a line that is mostly link
   text is navigation (menus, related links, tag clouds), and a short line right above
   one is that list's title ("Related articles"); short lines before the first long line
   and after the last (bylines, share bars, "read more") are dropped, except a ``p`` of
   its own, the headline block above the first paragraph, and list items below the last;
   a heading with nothing under it titled a box that was removed ("Most read") and goes
   too. Lines broken by ``<br>`` are judged as their block. Image captions (the short
   text beside an image, :func:`~scrapy_simhash.extract.chrome.captions`), bylines and datelines
   are dropped: copies of one article carry them differently.
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

from .body import Line, body_of, reading_length
from .chrome import captions, chrome_elements, without_declared_chrome
from .marks import (
    BR,
    HEADING_MARKS,
    HEADING_RANK,
    ITEM,
    LINK_END,
    LINK_START,
    LINK_TEXT,
    MARK_CHARS,
    MARKS,
    PARA,
    mark_blocks,
    mark_links,
)
from .own_blocks import with_own_blocks, without_chrome
from .region import PARAGRAPH_CHARS, find_region
from .teasers import drop_teasers
from .text import (
    block_text,
    composed,
    drop_trees,
    page_text,
    raw_length,
    strip_tags,
    text_length,
    text_of,
    visible_tree,
)

#: A marked element holding this share of the region's paragraph text is kept.
ARTICLE_SHARE = 0.5
#: A line with more than this share of link text is navigation.
LINK_LINE_SHARE = 0.4
#: A line shorter than this right above a link list is the list's title.
TITLE_CHARS = 60
#: The main text is a failure below this share of the visible text, unless it is at least
#: FALLBACK_CHARS long.
FALLBACK_SHARE = 0.1
FALLBACK_CHARS = 2000

#: A heading longer than this is not a section's title (a site's headline of a teaser
#: can be a heading of any length).
HEADING_CHARS = 200
#: Lines above the first paragraph searched for the heading the article starts with.
HEADLINE_LINES = 4
# Words read one by one before the rest of a text is read at once (see _has_words).
_WORDS_ONE_BY_ONE = 1000
_WORDS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{1,2}|[^\W\u3400-\u9fff\uf900-\ufaff]+")


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
    :mod:`scrapy_simhash.extract.body`): what is fingerprinted.

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
    region = _region_without_chrome(root)
    mark_links(root, region)
    # The article's lead can sit beside the block of the rest (outside a paywall's
    # container): the paragraphs right before and after the region belong to it, as
    # readability adds a candidate's paragraph siblings.
    before, after = _adjacent_paragraphs(region)
    parts = [*before, region, *after]
    mark_blocks(parts, region)
    # Only needed when the main text looks short: parsed again then (the tree has lost
    # its chrome by now).
    everything = functools.cache(lambda: page_text(html))

    def complete(text: str) -> bool:
        if len(text) < FALLBACK_SHARE * visible and len(text) < FALLBACK_CHARS:
            return False
        return _has_words(text, min_words) or not _has_words(everything(), 2 * min_words)

    own = functools.cache(lambda: composed(without_chrome(html)))

    lines = _good_lines("\n".join(block_text(part) for part in parts))
    text = _text(lines)
    if complete(text):
        widened = with_own_blocks(lines, text, own)
        if widened is None:
            return MainText.of(body_of(lines, text) if body else text)
        return MainText.of(widened, "own")
    if region is not root:
        lines = _good_lines(block_text(root))
        text = _text(lines)
        if complete(text):
            widened = with_own_blocks(lines, text, own)
            return MainText.of(text, "region") if widened is None else MainText.of(widened, "own")
    # Wider, but not yet the site's menus and footer: those are on every page of a site
    # and would make its short pages near-duplicates of each other. Then the page's own
    # blocks: all that is not marked chrome, its lists of links included (an index's, a
    # table of contents' entries).
    if complete(own()):
        return MainText.of(own(), "own")
    text = without_declared_chrome(html)
    if complete(text):
        return MainText.of(text, "chrome")
    return MainText.of(everything(), "page")


def _region_without_chrome(root: lxml.etree._Element) -> lxml.etree._Element:
    """The first steps of :func:`main_text`: drop the teasers, captions and chrome of
    *root* that are not around the article, and return the article's region."""
    # Teasers first: their leads would otherwise count as the page's paragraph text, and
    # the region would grow to hold them.
    drop_teasers(root)
    drop_trees(captions(root))
    declared, named = chrome_elements(root)
    region, article = find_region(root, set(declared) | set(named))
    keep = set(region.iterancestors())
    keep.add(region)
    dropped = drop_trees(element for element in declared if element not in keep)
    # An element only named like chrome that holds most of the region's paragraphs is the
    # article under a misleading name (``<div class="entry share">``): its name is
    # evidence, its content the verdict. (What the page declares, a ``nav``, stays chrome.)
    most = ARTICLE_SHARE * article.get(region, 0)
    drop_trees(
        (
            element
            for element in named
            if element not in keep and not (most and article.get(element, 0) >= most)
        ),
        dropped,
    )
    return region


def _adjacent_paragraphs(
    region: lxml.etree._Element,
) -> tuple[list[lxml.etree._Element], list[lxml.etree._Element]]:
    """The ``p`` elements right before and right after *region*, in document order, up to
    the first sibling that is not a paragraph of at least ``PARAGRAPH_CHARS`` characters,
    mostly not link text."""

    def run(siblings) -> list:
        found = []
        for sibling in siblings:
            if not isinstance(sibling.tag, str):
                continue  # a comment ("<!-- ad slot -->") between paragraphs
            if sibling.tag != "p":
                break
            length = len(text_of(sibling).strip())
            links = sum(raw_length(link) for link in sibling.iter("a"))
            if length < PARAGRAPH_CHARS or links > LINK_LINE_SHARE * length:
                break
            found.append(sibling)
        return found

    if region.getparent() is None:
        return [], []
    return run(region.itersiblings(preceding=True))[::-1], run(region.itersiblings())


def _good_lines(text: str) -> list[Line]:
    """The lines of *text* that are content: no link lists, no short lines before the
    first paragraph or after the last unless they are blocks of the article's own kind
    (see :func:`_chosen`), no heading without a section under it."""
    lines: list[Line] = []
    paragraphs = []
    headings = []  # each line's heading rank, 0 for a line that is not a heading
    first = last = None
    after_links = False  # whether the line before was a link line
    split = text.split("\n")
    blocks = _broken_blocks(split) if BR in text else {}
    for number, line in enumerate(split):
        # The marks are private-use characters: an ASCII line has none (30,694 of the
        # 57,680 lines of the handbook's pages in six languages), and is not searched.
        marked = not line.isascii()
        if marked and not line.strip(MARK_CHARS):
            # Marks without text (a link around blocks leaves its start on a line of its
            # own): nothing a reader sees, and no line between a list and its title.
            continue
        block = blocks.get(number)
        paragraph = (marked and PARA in line) or (block is not None and block[1])
        links = 0
        item, heading = False, None
        if marked:
            if LINK_START in line:
                # The marks themselves are not text: an image link is a line of marks only.
                links = len(MARKS.sub("", "".join(LINK_TEXT.findall(line))))
            item = ITEM in line
            heading = HEADING_MARKS.search(line)
            if paragraph or links or item or heading or LINK_END in line or BR in line:
                line = MARKS.sub("", line)
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
                headings.pop()
            after_links = True
            continue
        after_links = False
        size = block[0] if block is not None else reading_length(line)
        if size >= PARAGRAPH_CHARS:
            if first is None:
                first = len(lines)
            last = len(lines)
        own = size if block is None else reading_length(line)
        lines.append(Line(line, own, block and (block[2], block[0]), item))
        paragraphs.append(paragraph)
        headings.append(HEADING_RANK[heading.group()] if heading else 0)
    if first is None:
        return lines
    chosen = _chosen(lines, paragraphs, headings, first, last)
    return [lines[number] for number in _without_empty_sections(chosen, lines, headings)]


def _chosen(
    lines: list[Line], paragraphs: list[bool], headings: list[int], first: int, last: int
) -> list[int]:
    """The numbers of the lines kept around the run of paragraphs from *first* to *last*:
    the whole run; above it, the headline block (from the nearest heading at most
    ``HEADLINE_LINES`` up; else the one line right above, usually a headline or a lead);
    outside it, a ``p`` (a paragraph the author wrote, however short) and, below it, a
    list item or table cell (a recipe's last steps, a list that ends the article). Other
    short lines out there are the page's furniture: bylines, dates, share bars, "read
    more"."""
    top = max(0, first - 1)
    for number in range(first - 1, max(-1, first - 1 - HEADLINE_LINES), -1):
        if headings[number]:
            top = number
            break
    return [
        *(number for number in range(top) if paragraphs[number]),
        *range(top, last + 1),
        *(
            number
            for number in range(last + 1, len(lines))
            if paragraphs[number] or lines[number].item
        ),
    ]


def _without_empty_sections(chosen: list[int], lines: list[Line], headings: list[int]) -> list[int]:
    """*chosen* without the headings that have nothing under them: a heading followed by
    one of the same or a higher rank, or by nothing, titled a box that was removed
    ("Related articles", "Leave a comment", "Most read")."""
    kept: list[int] = []
    following = None  # the rank of the next kept line if a heading, 0 if not, None at the end
    for number in reversed(chosen):
        rank = headings[number]
        if (
            rank
            and len(lines[number].text) <= HEADING_CHARS
            and (following is None or 0 < following <= rank)
        ):
            continue
        kept.append(number)
        following = rank
    return kept[::-1]


def _text(lines: list[Line]) -> str:
    return "\n".join(line.text for line in lines)


def _broken_blocks(lines: list[str]) -> dict[int, tuple[int, bool, int]]:
    """For each line of a block broken by ``<br>`` (its lines after the first start with
    the mark), the block's length, whether it is a paragraph (``p``), and the number of
    its first line: the lines of hard-wrapped prose are short, the block is not."""
    blocks = {}
    start = 0
    for end in range(1, len(lines) + 1):
        if end < len(lines) and lines[end].startswith(BR):
            continue
        if end - start > 1:
            group = lines[start:end]
            length = sum(map(reading_length, group))
            paragraph = PARA in group[0]
            for number in range(start, end):
                blocks[number] = (length, paragraph, start)
        start = end
    return blocks


def _has_words(text: str, count: int) -> bool:
    """Whether *text* has *count* distinct words (pairs of Han characters for Chinese): a
    cheap stand-in for the number of terms a fingerprint would get. Stops reading as soon
    as it knows."""
    seen: set[str] = set()
    for number, match in enumerate(_WORDS.finditer(text)):
        seen.add(match.group().lower())
        if len(seen) >= count:
            return True
        if number == _WORDS_ONE_BY_ONE:
            # A long text of few distinct words (a page that repeats one sentence): the
            # rest in one call, not a Python step per word.
            seen.update(word.lower() for word in _WORDS.findall(text, match.end()))
            return len(seen) >= count
    return False
