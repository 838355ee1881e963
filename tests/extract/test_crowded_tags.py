"""Elements with thousands of attributes (libxml2 parses them in quadratic time) lose
them before parsing."""

from __future__ import annotations

import pytest
from pipelines import ARTICLE


def test_an_element_with_300000_attributes_is_cut_and_counted(tmp_path):
    from scrapy_simhash.extract.fields import MAX_ATTRIBUTES, cut_crowded_tags

    crowded = " ".join(f'a{i}="v"' for i in range(300_000))
    page = f'<html><body><div {crowded}><p>{ARTICLE}</p></div><img src="x" alt="y"></body>'
    cut, changed = cut_crowded_tags(page)
    assert changed and len(cut) < 1000 + len(ARTICLE)
    assert cut == f'<html><body><div><p>{ARTICLE}</p></div><img src="x" alt="y"></body>'
    # At the cap, nothing is cut; a quoted '>' does not hide the attributes after it.
    enough = " ".join(f"a{i}" for i in range(MAX_ATTRIBUTES - 1))
    assert cut_crowded_tags(f"<div {enough}>x</div>") == (f"<div {enough}>x</div>", False)
    hidden = f'<div title=">" {crowded}><p>{ARTICLE}</p></div>'
    assert cut_crowded_tags(hidden) == (f'<div title=">><p>{ARTICLE}</p></div>', True)


def test_text_is_never_taken_for_a_crowded_tag():
    from scrapy_simhash.extract.fields import cut_crowded_tags

    words = " ".join(f"w{i}" for i in range(5000))
    # A field cut inside one long text node: its last part is closed by no '>'.
    cut_inside = f"<html><body><p>{words}"
    assert cut_crowded_tags(cut_inside) == (cut_inside, False)
    # A '>' written in the text itself, with thousands of words on either side.
    in_text = f"<p>{words} > {words} > {words}</p>"
    assert cut_crowded_tags(in_text) == (in_text, False)
    # A quoted '>' still hides nothing: the attributes after it are cut.
    crowded = " ".join(f"a{i}" for i in range(5000))
    quoted = f"<p title='x > y' {crowded}>{words}</p>"
    assert cut_crowded_tags(quoted) == (f"<p title='x >>{words}</p>", True)


def read_up_to_the_cut(limit: int) -> None:
    """A page of one text node longer than *limit*, the field's cut, is read up to the
    cut (the node left unclosed there), by the visible text and the built-in extractor."""
    from scrapy_simhash.extract.extractors import get_extractor
    from scrapy_simhash.extract.fields import field_text

    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do "
    page = f"<html><body><p>{words * (limit // len(words) + 1000)}</p></body></html>"
    assert len(page) > limit
    for extractor in (None, get_extractor("builtin")):
        text = field_text(page, extractor=extractor)
        assert len(text) > limit * 0.99 and text.startswith(words.strip())
        assert len(text) <= limit


def test_a_page_of_one_text_node_longer_than_a_field_is_read_up_to_the_cut(monkeypatch):
    from scrapy_simhash.extract import fields

    # The cut as the field's real one (below) makes it, on a page of 100 kB.
    monkeypatch.setattr(fields, "MAX_FIELD_LENGTH", 100_000)
    read_up_to_the_cut(100_000)


@pytest.mark.slow
def test_a_page_of_one_text_node_of_the_real_field_length_is_read_up_to_the_cut():
    # The real cut, 10 MB into one text node, read twice (seconds).
    from scrapy_simhash.extract.fields import MAX_FIELD_LENGTH

    read_up_to_the_cut(MAX_FIELD_LENGTH)
