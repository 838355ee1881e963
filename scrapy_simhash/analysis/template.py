"""The blocks of a text, as a site's template counts them (see :mod:`scrapy_simhash.template`):
its lines in :func:`~scrapy_simhash.analysis.anchors.anchor_form`, hashed as anchors are,
and the text left when the template's blocks are taken out."""

from __future__ import annotations

from collections.abc import Collection

from .anchors import anchor_form, anchor_of


def text_blocks(text: str, seed: bytes | int | None = None) -> dict[int, int]:
    """``block -> characters`` of *text*: each line's hash in anchor form (numbers read as
    ``0``, so a sidebar's counts and dates do not make it new), with its length there (a
    block repeated counts once, at its longest)."""
    blocks: dict[int, int] = {}
    for line in text.splitlines():
        form = anchor_form(line)
        if form:
            block = anchor_of(form, seed)
            if len(form) > blocks.get(block, 0):
                blocks[block] = len(form)
    return blocks


def own_text(text: str, template: Collection[int], seed: bytes | int | None = None) -> str:
    """*text* without its lines whose block is in *template*."""
    if not template:
        return text
    return "\n".join(
        line
        for line in text.splitlines()
        if not (form := anchor_form(line)) or anchor_of(form, seed) not in template
    )
