"""Elements with thousands of attributes (libxml2 parses them in quadratic time) lose
them before parsing."""

from __future__ import annotations

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
