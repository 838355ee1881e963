"""The blocks of a text, as a site's template counts them (see :mod:`scrapy_simhash.template`):
its lines in :func:`~scrapy_simhash.analysis.anchors.anchor_form`, hashed as anchors are,
and the anchors and sketch a page
is checked with, read with its site's template (:func:`read_with`: the crawl's check and
the archive job share it)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from ..anchors import DEFAULT_ANCHORS, Anchors
from ..sketch import Sketch
from ..template import Template, template_blocks
from .anchors import anchor_form, anchor_of, text_anchors
from .sketch import text_sketch
from .speedups import compiled

#: :func:`~scrapy_simhash.analysis.anchors.anchor_form`, compiled where it can be.
_FORM = compiled("anchor_form") or anchor_form


#: A line of a text, its block (``None``: a line of no words) and its length in anchor form.
_Line = tuple[str, int | None, int]


def _lines(text: str, seed: bytes | int | None) -> list[_Line]:
    lines = []
    for line in text.splitlines():
        form = _FORM(line)
        lines.append((line, anchor_of(form, seed) if form else None, len(form)))
    return lines


def _blocks(lines: list[_Line]) -> dict[int, int]:
    blocks: dict[int, int] = {}
    for _, block, chars in lines:
        if block is not None and chars > blocks.get(block, 0):
            blocks[block] = chars
    return blocks


def text_blocks(text: str, seed: bytes | int | None = None) -> dict[int, int]:
    """``block -> characters`` of *text*: each line's hash in anchor form (numbers read as
    ``0``, so a sidebar's counts and dates do not make it new), with its length there (a
    block repeated counts once, at its longest)."""
    return _blocks(_lines(text, seed))


@dataclass(frozen=True)
class OwnText:
    """A page read with its site's template: the anchors and sketch it is checked with,
    the characters of its template left out (``0``: none, and both are the page's own),
    and its blocks, for the template to learn."""

    anchors: Anchors | None
    sketch: Sketch | None
    left_out: int
    blocks: dict[int, int]


class AnalysisLike(Protocol):
    """What :func:`read_with` reads of a text's analysis
    (:class:`~scrapy_simhash.dedup.Analysis`)."""

    text: str
    anchors: Anchors | None
    sketch: Sketch | None


def read_with(
    template: Template,
    page: int,
    analysis: AnalysisLike,
    seed: bytes | int | None = None,
    anchor_count: int = DEFAULT_ANCHORS,
) -> OwnText:
    """The text of *analysis* (of the page counted as *page*) read with its site's
    *template*: where some of its blocks are template, its anchors are those of the rest,
    its own text (the template's long units would find candidates and fail the
    containment test), and its sketch keeps the own text's
    (:attr:`~scrapy_simhash.sketch.Sketch.own`)."""
    anchors, sketch = analysis.anchors, analysis.sketch
    lines = _lines(analysis.text, seed)  # each line's form and hash, made once
    blocks = _blocks(lines)
    hidden = template_blocks(template, blocks, page)
    if not hidden or sketch is None:
        return OwnText(anchors, sketch, 0, blocks)
    own = "\n".join(line for line, block, _ in lines if block not in hidden)
    if anchors is not None:
        anchors = text_anchors(own, seed, count=anchor_count) or anchors
    sketch = replace(sketch, own=text_sketch(own, seed))
    return OwnText(anchors, sketch, sum(blocks[b] for b in hidden), blocks)
