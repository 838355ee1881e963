"""The article's region: the element of a page that holds its article.

Every block with a long run of text (not link text) scores for its parent and, halved, for
its grandparent, as readability scores candidates; text inside marked chrome scores less,
and so does text outside what the page declares its content (``main``, ``role="main"``,
schema.org's ``articleBody``, an ``article`` that is not one of a list of them). The
best-scoring element grows to its ancestors until it holds 80% of the page's long text (so
weighed), so that an article split into several blocks is kept whole.
:mod:`scrapy_simhash.extract.main_text` takes the region's text.

No Scrapy import.
"""

from __future__ import annotations

import lxml.etree

from .text import INLINE_TAGS

#: A text block this long (in characters of its own text) is a paragraph of content.
PARAGRAPH_CHARS = 80
#: The region grows until it holds this share of the page's paragraph text.
REGION_SHARE = 0.8
#: Paragraphs inside marked chrome score this much of their length.
CHROME_WEIGHT = 0.3
#: On a page that declares where its content is (``main``, ``role="main"``,
#: ``itemprop="articleBody"``, an ``article`` that is not one of a list of articles) and
#: has paragraphs there, paragraphs outside it score this much.
OUTSIDE_WEIGHT = 0.2
# "/descendant::" is "//" (the whole document) without its extra step over every node. Most
# text nodes are short (the spaces between tags): their length rules them out before a
# normalised copy of them is made.
_LONG_TEXTS = lxml.etree.XPath(
    "/descendant::text()[string-length() > 20][string-length(normalize-space()) > 20]"
)


def find_region(root: lxml.etree._Element, penalised: set) -> tuple[lxml.etree._Element, dict]:
    """The element that holds the article (the root when no paragraph is found), and
    for each element that holds paragraphs, the characters of paragraph text it holds."""
    paragraphs = _paragraphs(root)
    if not paragraphs:
        return root, {}
    parent_of, top_down = _ancestors(paragraphs)
    weights = _weights(paragraphs, parent_of, top_down, penalised)
    held, plain, scores = _scores(paragraphs, weights, parent_of, top_down)
    if not scores:
        return root, plain
    region = max(scores, key=scores.get)
    # The paragraphs' tops: the root, and any other top-level element of a malformed page
    # (a second <html> after the first) whose paragraphs the root does not hold.
    total = sum(held[element] for element in top_down if parent_of[element] is None)
    while held.get(region, 0) < REGION_SHARE * total and region.getparent() is not None:
        region = region.getparent()
    return region, plain


def _paragraphs(root: lxml.etree._Element) -> dict:
    """The first step of :func:`find_region`: each block of *root* whose own long texts
    (inline markup included, link text not) make a paragraph -> their characters."""
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
    return {e: length for e, length in own.items() if length >= PARAGRAPH_CHARS}


def _ancestors(paragraphs: dict) -> tuple[dict, list]:
    """The paragraphs and their ancestors: each one's parent (``None`` for the top), and
    all of them from the top down. Found by walking up from each paragraph only until a
    known ancestor: linear in the tree, however deeply a (hostile) page nests thousands
    of paragraphs."""
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
    return parent_of, sorted(depth, key=depth.__getitem__)


def _weights(paragraphs: dict, parent_of: dict, top_down: list, penalised: set) -> dict:
    """Each paragraph -> the weight of its text: less inside *penalised* (marked chrome),
    and less outside what the page declares its content, if it declares any."""
    in_chrome: dict = {}  # element -> whether it or an ancestor is chrome
    in_main: dict = {}  # element -> whether it is in what the page declares its content
    for element in top_down:
        parent = parent_of[element]
        in_chrome[element] = element in penalised or (parent is not None and in_chrome[parent])
        in_main[element] = (parent is not None and in_main[parent]) or declared_main(element)
    # What the page declares its content is evidence, as chrome markers are: a consent
    # box's or a slideshow's long texts outside it weigh less than its paragraphs.
    outside = OUTSIDE_WEIGHT if any(in_main[e] for e in paragraphs) else 1.0
    weights = {}
    for element in paragraphs:
        weight = CHROME_WEIGHT if in_chrome[element] else 1.0
        if not in_main[element]:
            weight *= outside
        weights[element] = weight
    return weights


def _scores(
    paragraphs: dict, weights: dict, parent_of: dict, top_down: list
) -> tuple[dict, dict, dict]:
    """The paragraph text each element holds, weighed and not (``held``, ``plain``), and
    the elements' scores: as readability does, a paragraph scores for its parent and,
    halved, for its grandparent, so the best element is the one that holds the
    paragraphs."""
    held: dict = dict.fromkeys(parent_of, 0.0)  # element -> paragraph text in its subtree
    plain: dict = dict.fromkeys(parent_of, 0)  # the same, chrome text not weighed down
    scores: dict = {}
    for element, length in paragraphs.items():
        weight = weights[element]
        held[element] += length * weight
        plain[element] += length
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
    return held, plain, scores


def declared_main(element: lxml.etree._Element) -> bool:
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
