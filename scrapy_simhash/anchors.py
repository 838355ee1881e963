"""Paragraph anchors as plain values: what a page's anchors are, how an index compares
two pages by them, and the constants of both (the text side, which makes them, is
:mod:`scrapy_simhash.analysis.anchors`).

A SimHash measures the similarity of a whole text: a copy that gains or loses blocks (a
repost whose original keeps a standfirst and captions, a page cut short, a paragraph
deleted) moves many bits of it. Such a copy is still *contained*: most of the smaller
text's long paragraphs appear, unchanged, in the larger one. The anchors of a text are the
hashes of its :data:`DEFAULT_ANCHORS` largest distinct units (paragraphs, and runs of
short lines cut where their own content says, see
:func:`scrapy_simhash.analysis.anchors.line_runs`; the sentences of a hard-wrapped text or
of a line too long to be a paragraph) of at least
:data:`MIN_LINE_CHARS` characters; an index stores them with the page and tells a
contained copy by :func:`contained`.

Sizes are counted in words (a Han, kana or Hangul character is a word), not characters:
in characters, an untranslated English paragraph outweighs a Chinese one holding three
times its words, and a partly translated page looks contained in the original.

A single shared paragraph is no evidence (a disclaimer, a newsletter blurb, a site's
standard note): a copy must share at least :data:`MIN_SHARED` anchors, they must make at
least :data:`MIN_SHARE` of the contained page's anchors and most of its text
(:data:`MIN_COVER`). Anchors that the index holds for more than
:data:`MAX_ANCHOR_PAGES` pages are boilerplate and ignored altogether.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

#: How many of a text's largest units become its anchors.
DEFAULT_ANCHORS = 8
#: The shortest unit that becomes an anchor, in characters of its normalised form: a
#: paragraph or a sentence, not a heading, a caption or a menu.
MIN_LINE_CHARS = 80
#: A copy shares at least this many anchors with the page it is contained in.
MIN_SHARED = 2
#: ... and at least this share of the contained page's anchors, counted. Not all of them:
#: a page cut short or with a paragraph added ranks other paragraphs among its 8 largest
#: than the whole page does (a quarter of them, for a page cut by 25%). Counted, not by
#: size: an edit to a digest of short lines changes the run it falls in and the next,
#: which may be its two largest, and how much text the other page holds is the share
#: check's to measure (:mod:`scrapy_simhash.sketch`), not the anchors'.
MIN_SHARE = 0.75
#: ... and they make at least this share of the contained page's text (see :func:`contained`).
MIN_COVER = 0.6
#: An anchor stored for more pages than this is boilerplate (a site's standard note, a
#: licence paragraph) and no evidence of anything.
MAX_ANCHOR_PAGES = 5
#: ``(anchors, words, cover)`` of a page: see :attr:`Anchors.summary`.
Summary = tuple[int, int, int]
#: The anchors' format, stored in every index: pages anchored otherwise never mix.
ANCHORS_FORMAT = f"units-{DEFAULT_ANCHORS}x{MIN_LINE_CHARS}/words/num0/casefold-nopunct/v5"


@dataclass(frozen=True)
class Anchors:
    """The anchors of one text: ``hashes`` (signed 32-bit, largest unit first), the
    ``sizes`` of their units in words, in the same order (empty for anchors read back
    from an index), ``words`` (the words of all its anchored units) and ``cover`` (per
    mille of its words in units long enough to be anchors: a page whose text is mostly
    short lines is not told by its few long ones)."""

    hashes: tuple[int, ...] = ()
    sizes: tuple[int, ...] = ()
    words: int = 0
    cover: int = 0
    #: The anchors that stand for paragraphs (one line of at least twice
    #: ``MIN_LINE_CHARS``; the others stand for runs of short lines, list entries,
    #: headings): known for the page being checked, not stored. A page with a paragraph
    #: has one among its anchors.
    paragraphs: tuple[int, ...] = field(default=(), compare=False)

    def __bool__(self) -> bool:
        return bool(self.hashes)

    def __len__(self) -> int:
        return len(self.hashes)

    @property
    def summary(self) -> tuple[int, int, int]:
        """``(anchors, words, cover)``: what :func:`contained` compares."""
        return len(self.hashes), self.words, self.cover

    def stored(self) -> Anchors:
        """These anchors as an index stores them (without their units' sizes)."""
        return Anchors(self.hashes, (), self.words, self.cover)

    def shares_a_paragraph(self, shared: Iterable[int]) -> bool:
        """Whether *shared* (anchors these share with another page) holds one of their
        paragraphs, where they have any: a page that shares only lists with another (a
        table of contents, an index's entries) while its paragraphs are not there is not
        contained in it, however much of its text the lists make. Lists are what pages of
        a site repeat; paragraphs are what a page says."""
        return not self.paragraphs or not set(self.paragraphs).isdisjoint(shared)

    def shared_with(self, hashes: Iterable[int]) -> tuple[tuple[int, ...], int]:
        """The anchors of *hashes* that are also these, and their words."""
        size = dict(zip(self.hashes, self.sizes, strict=True))
        shared = tuple(h for h in hashes if h in size)
        return shared, sum(size[h] for h in shared)


def contained(shared: int, shared_words: int, mine: Summary, theirs: Summary) -> bool:
    """Whether two pages sharing *shared* anchors (of *shared_words* words) are one
    contained in the other. *mine* and *theirs* are each page's :attr:`Anchors.summary`.
    A page is contained in the other when at least :data:`MIN_SHARED` anchors, and at
    least :data:`MIN_SHARE` of its anchors, are shared, and the shared units make at
    least :data:`MIN_COVER` of its text, taking its long units as
    its anchors stand for them (:attr:`Anchors.cover`). Either page may be the one
    contained: two pages with the same anchors differ in what else they hold.

    The share of the text keeps apart two distinct pages that share a block: a note, a
    cookie notice or a footer long enough to be an anchor is rarely most of a page."""
    if shared < MIN_SHARED:
        return False
    return any(
        shared >= MIN_SHARE * count and shared_words * cover >= MIN_COVER * 1000 * words
        for count, words, cover in (mine, theirs)
    )
