"""Turn HTML and text into the plain text that gets fingerprinted (the text of an item's
fields is read in :mod:`scrapy_simhash.extract.fields`).

Two jobs, both free of Scrapy so that scripts and the CLI can call them:

* :func:`page_text` reduces an HTML document or fragment to what a reader sees: scripts,
  styles and hidden elements are removed (the page's main content, without the site's
  navigation, header, footer and sidebars, is found by
  :mod:`scrapy_simhash.extract.main_text`: those parts are shared by every page of a site,
  and fingerprinting them makes distinct pages of one site look alike).
* :func:`normalize_text` makes visually identical text byte-identical (NFKC folds
  full-width and compatibility forms, zero-width characters are removed, whitespace is
  collapsed), so that such variants of a page are still duplicates.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from html import unescape

import lxml.etree

from ..analysis.confusables import fold_confusables
from ..analysis.nfkc import marked_runs, nfkc, table_runs

#: Elements whose content a reader never sees as page text, and ruby annotations (``rt``,
#: ``rp``: the readings printed over a word, which one copy of an article carries and
#: another does not; the word itself is the text).
INVISIBLE_TAGS = (
    *("script", "style", "noscript", "template", "svg", "iframe", "object", "head"),
    *("rt", "rp"),
)
#: A ``<noscript>`` holding one text node this long (a paragraph) holds the page's content
#: for readers without scripts (a blog platform's post, say), not a notice.
NOSCRIPT_CONTENT_CHARS = 200
#: Headings, by rank.
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Block-level elements end a line, so that words of adjacent blocks are not glued together.
_BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "blockquote",
        "br",
        "dd",
        "div",
        "dl",
        "dt",
        "figcaption",
        "figure",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "td",
        "th",
        "tr",
        "ul",
    ]
)


def text_of(element: lxml.etree._Element) -> str:
    """The text of *element* (its descendants' text, not its tail): XPath's ``string()``.
    libxml2 collects it with the same function; an XPath call costs a few microseconds
    before it starts, which is most of the time on the small elements measured here."""
    return lxml.etree.tostring(element, method="text", encoding="unicode", with_tail=False)


def raw_length(element: lxml.etree._Element) -> int:
    """The length of *element*'s text, as is (without normalising spaces: half the time of
    :data:`text_length`, and the shares it is used for are alike)."""
    return len(text_of(element))


#: The length of an element's text, runs of spaces counted as one.
text_length = lxml.etree.XPath("string-length(normalize-space())")
#: Elements that flow inside a line of text rather than make a block of their own.
INLINE_TAGS = frozenset(["a", "abbr", "b", "big", "cite", "code", "em", "font", "i", "label"])
INLINE_TAGS |= {"mark", "q", "s", "small", "span", "strong", "sub", "sup", "time", "u"}
_HTML_HINT = re.compile(
    r"<\s*(?:!doctype|html|body|div|p|br|span|a|article|main|h[1-6]|li|table)\b", re.IGNORECASE
)
# Zero-width and invisible formatting characters that leave the rendered text unchanged.
_INVISIBLE_CHARS = re.compile("[\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
_HOLDS_PARAGRAPH = lxml.etree.XPath(
    f"boolean(descendant::text()[string-length(normalize-space()) >= {NOSCRIPT_CONTENT_CHARS}])"
)
# The block end block_text writes: a carriage return, which libxml2 has already turned
# into a line break wherever the page had one.
_BLOCK_END = "\r"
# What tidy_whitespace makes a space, and runs of spaces it makes one.
_OTHER_SPACES = ("\t", "\r", "\f", "\v", "\u00a0")
_SPACES = re.compile("  +")

# libxml2 stops at 256 levels of nesting unless asked for "huge" trees, and then silently
# drops the deeper text; real pages (and hostile ones) can be nested deeper than that.
# Text is handed to lxml as UTF-8 bytes: lxml refuses a str that starts with an XML
# encoding declaration (as XHTML pages do).
# lxml.etree's parser rather than lxml.html's: its elements need no Python-level class
# lookup, which took a tenth of the time of a page. No table of id attributes (nothing
# looks elements up by id): 5% of the parse.
_PARSER = lxml.etree.HTMLParser(
    encoding="utf-8", huge_tree=True, remove_comments=True, remove_pis=True, collect_ids=False
)
_LIBXML2_MAX_DEPTH = 2048 - 8
_INVISIBLE_BLOCKS = re.compile(
    r"<(script|style|noscript|template)\b.*?</\1\s*>|<!--.*?-->", re.IGNORECASE | re.DOTALL
)
_TAG = re.compile(r"</?\s*([a-zA-Z][a-zA-Z0-9]*)[^>]*>")
# Characters XML does not allow: control characters other than tab and line breaks, and
# the two non-characters U+FFFE and U+FFFF. The control characters are replaced in the
# UTF-8 bytes, a few times faster than a regex on the text: they are single bytes that
# UTF-8 uses for nothing else.
_CONTROL_TO_SPACE = bytes.maketrans(bytes(c for c in range(32) if c not in b"\t\n\r"), b" " * 29)
_NOT_XML_CHARACTERS = ("\ufffe", "\uffff")
# The same characters written as character references (&#1;, &#x1f;, &#65535;), which the
# parser decodes into the tree, and the carriage return (&#13;): libxml2 turns the page's
# own ones into line breaks, and block_text ends its blocks with it. libxml2 reads a
# reference's digits as far as they go, with or without the closing semicolon ("&#x01b"
# is U+001B), so the pattern does too.
_NOT_XML_REFERENCES = re.compile(
    rb"&#(?:0*(?:[1-8]|1[1-9]|2[0-9]|3[01]|6553[45])(?![0-9])"
    rb"|[xX]0*(?:[1-8b-fB-F]|1[0-9a-fA-F]|[fF]{3}[eEfF])(?![0-9a-fA-F]));?"
)
# Whether an element is that many levels below the root: "*/*/..." finds it in C, one level
# at a time.
_DEEPEST = lxml.etree.XPath("boolean(" + "/".join(["*"] * (_LIBXML2_MAX_DEPTH - 1)) + ")")


def looks_like_html(value: str) -> bool:
    """Return True if *value* seems to contain HTML markup rather than plain text."""
    return _HTML_HINT.search(value[:10_000]) is not None


def page_text(html: str) -> str:
    """All the text of *html* a reader sees, one block per line, not yet :func:`composed`."""
    root = visible_tree(html)
    if root is None:
        return strip_tags(html) if html and html.strip() else ""
    return block_text(root)


def visible_tree(html: str) -> lxml.etree._Element | None:
    """The tree of *html* (see :func:`parse_html`) without the elements a reader never
    sees (:data:`INVISIBLE_TAGS`), or ``None`` where there is no tree."""
    root = parse_html(html)
    if root is not None:
        # A <noscript> is parsed as HTML: an unclosed tag in it (<noscript><div></noscript>)
        # makes it swallow the rest of the page. One that holds most of the page's text is
        # such an artefact, and its content is the page. One that holds a paragraph is the
        # content a reader without scripts gets, which is what a crawl reads.
        invisible = list(root.iter(*INVISIBLE_TAGS))  # one walk for both loops
        noscripts = [element for element in invisible if element.tag == "noscript"]
        if noscripts:
            half = 0.5 * raw_length(root)
            page = {
                element
                for element in noscripts
                if raw_length(element) > half or _HOLDS_PARAGRAPH(element)
            }
            for element in page:
                element.tag = "div"
            invisible = [element for element in invisible if element not in page]
        for element in invisible:
            if element.getparent() is not None:
                drop_tree(element)
    return root


def parse_html(html: str) -> lxml.etree._Element | None:
    """The lxml tree of *html*, or ``None`` when there is no element to build it from
    (empty input, only a comment) or lxml cannot parse it. Never raises."""
    if not html or html.isspace():
        return None
    # lxml keeps characters XML does not allow (_CONTROL_TO_SPACE) in the tree but refuses
    # them when text is written back (as block_text and drop_tree do): a form feed in a
    # page would fail it. They become spaces.
    # The non-characters are looked for in the str, not in its UTF-8 bytes: a str whose
    # characters are all below U+FFFE answers at once, and a search of the bytes for
    # their three-byte form took nearly a tenth of the parse.
    for character in _NOT_XML_CHARACTERS:
        if character in html:
            html = html.replace(character, " ")
    data = html.encode("utf-8", errors="replace").translate(_CONTROL_TO_SPACE)
    if b"&#" in data:
        data = _NOT_XML_REFERENCES.sub(b" ", data)
    try:
        root = lxml.etree.fromstring(data, parser=_PARSER)
    except (lxml.etree.ParserError, lxml.etree.XMLSyntaxError, ValueError):
        return None
    # A page with fewer tags than libxml2's depth limit cannot reach it (the common case,
    # no walk); a deeper one lost its deepest text in the parse, so it has no usable tree.
    if root is not None and data.count(b"<") >= _LIBXML2_MAX_DEPTH and _too_deep(root):
        return None
    return root


def drop_tree(element: lxml.etree._Element) -> None:
    """Remove *element* and its content, keeping the text that follows it (its tail)."""
    parent = element.getparent()
    if element.tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + element.tail
        else:
            parent.text = (parent.text or "") + element.tail
    parent.remove(element)


def drop_trees(elements: Iterable[lxml.etree._Element], dropped: set | None = None) -> set:
    """:func:`drop_tree` each of *elements* that is still in the tree: not one without a
    parent, nor one inside an element dropped already (by this call, or one of *dropped*),
    which went with it: dropping it again would copy its subtree for nothing, and nested
    chrome would make that quadratic. Returns the elements dropped, *dropped* included."""
    dropped = set() if dropped is None else dropped
    for element in elements:
        if element.getparent() is None or not dropped.isdisjoint(element.iterancestors()):
            continue
        drop_tree(element)
        dropped.add(element)
    return dropped


def block_text(root: lxml.etree._Element) -> str:
    """The text under *root*, one block per line. Writes a block end into the tree around
    every block element, then lxml joins the text in C (several times faster than a walk
    in Python).

    A line break in the page's source is a space, as a browser shows it, except inside a
    ``<pre>``: a paragraph wrapped at 80 columns in its source, or a link whose text
    starts on the line after its tag, is one line, not several short ones that the line
    filter would judge apart."""
    for pre in root.iter("pre"):
        for node in pre.iter():
            if node.text and "\n" in node.text:
                node.text = node.text.replace("\n", _BLOCK_END)
            if node is not pre and node.tail and "\n" in node.tail:
                node.tail = node.tail.replace("\n", _BLOCK_END)
    for element in root.iter(*_BLOCK_TAGS):
        # Each read of .text or .tail makes a new string: read once.
        text = element.text
        element.text = _BLOCK_END + text if text else _BLOCK_END
        tail = element.tail
        element.tail = _BLOCK_END + tail if tail else _BLOCK_END
    # method="text" gives the text of itertext() without a Python string per piece.
    text = lxml.etree.tostring(root, method="text", encoding="unicode", with_tail=False)
    return tidy_whitespace(text.replace("\n", " ").replace(_BLOCK_END, "\n"))


def composed(text: str) -> str:
    """*text* composed (NFC), as a reader sees it: a page may write a letter as a base and
    a combining mark that its copy writes as one code point (the fingerprint folds both
    anyway). Done once on an extractor's result: its cost grows with the square of a run
    of combining marks, which a hostile page can make long."""
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def _too_deep(root: lxml.etree._Element) -> bool:
    """Whether *root* reaches the nesting depth beyond which libxml2 drops text."""
    try:
        return _DEEPEST(root)  # a third of the time of the walk below
    except lxml.etree.XPathError:  # an XPath engine with a lower limit of nesting
        pass
    # Iterative walk: recursion would hit Python's limit on deeply nested pages.
    depth = 0
    for event, _ in lxml.etree.iterwalk(root, events=("start", "end")):
        depth += 1 if event == "start" else -1
        if depth >= _LIBXML2_MAX_DEPTH:
            return True
    return False


def strip_tags(html: str) -> str:
    """The text of *html* without a tree: tags stripped, entities decoded."""
    html = _INVISIBLE_BLOCKS.sub(" ", html)
    text = _TAG.sub(lambda m: "\n" if m.group(1).lower() in _BLOCK_TAGS else " ", html)
    return tidy_whitespace(unescape(text))


def tidy_whitespace(text: str) -> str:
    """Collapse runs of spaces, keep single line breaks between blocks, strip the ends."""
    # Tabs, carriage returns, form feeds, vertical tabs and no-break spaces are spaces,
    # and a run of spaces is one. The replacements and a pattern of plain spaces take a
    # third of the time of one pattern for all six characters.
    for space in _OTHER_SPACES:
        if space in text:
            text = text.replace(space, " ")
    text = _SPACES.sub(" ", text)
    # Splitting beats a regex for "whitespace around line breaks" several times over.
    return "\n".join([line for line in [line.strip() for line in text.split("\n")] if line])


def normalize_text(text: str) -> str:
    """Return *text* in the form that is fingerprinted: NFKC, words mixing Latin with
    Cyrillic or Greek look-alikes in one script, no zero-width characters, tidy whitespace.
    Case is kept here; the term extractor lower-cases Latin words."""
    return tidy_whitespace(normalize_characters(text))


def normalize_characters(text: str) -> str:
    """:func:`normalize_text` without tidying whitespace: the same terms, the same
    fingerprint, a third less time (the term extractor ignores whitespace anyway)."""
    text = fold_confusables(nfkc(text))
    # Most texts hold none: looking for them in C, where the accelerator is built, takes a
    # tenth of the time of the substitution (a regular expression would take as long).
    if marked_runs is None or table_runs(_invisible_points())(text):
        text = _INVISIBLE_CHARS.sub("", text)
    return text


@functools.cache
def _invisible_points() -> frozenset[int]:
    """The code points of ``_INVISIBLE_CHARS`` (all in the BMP)."""
    return frozenset(p for p in range(0x10000) if _INVISIBLE_CHARS.match(chr(p)))


def exact_form(text: str) -> str:
    """Return the form under which two short texts count as exact duplicates:
    normalised, case-folded, with whitespace collapsed to single spaces."""
    return " ".join(normalize_text(text).casefold().split())
