"""The one decision (scrapy_simhash.index.rule), as a pure function."""

from __future__ import annotations

from dataclasses import replace

from prose import prose

from scrapy_simhash.analysis.sketch import text_sketch
from scrapy_simhash.anchors import MAX_ANCHOR_PAGES, Anchors
from scrapy_simhash.index.rule import Candidate, Probe, anchor_candidates, by_anchors, decide

PAGE = "\n".join(prose(1200, 11))
HALF = "\n".join(prose(1200, 11)[:15])
OTHER = "\n".join(prose(1200, 12))


def probe(text: str = PAGE, key: str = "new", anchors: Anchors | None = None) -> Probe:
    return Probe(key, 0, anchors, text_sketch(text))


def stored(text: str, key: str, order: int, distance: int = 1, **extra) -> Candidate:
    sketch = text_sketch(text).stored()
    return Candidate(order, key, distance, 0.0, order, distance, sketch=sketch, **extra)


def test_nothing_near_is_no_match():
    found = decide(probe(), [], max_distance=3, min_share=0.8)
    assert found.candidate is None and found.refused == 0


def test_a_copy_holding_the_page_is_the_match_with_its_share():
    found = decide(probe(), [stored(PAGE, "a", 1)], max_distance=3, min_share=0.8)
    assert found.candidate.key == "a" and found.share == 1.0 and not found.own


def test_a_near_page_holding_half_of_the_text_is_refused():
    found = decide(probe(), [stored(HALF, "a", 1)], max_distance=3, min_share=0.8)
    assert found.candidate is None
    assert found.refused == 1 and found.closest[0].key == "a"
    assert 0.3 < found.closest[1] < 0.7


def test_min_share_zero_or_a_probe_without_sketch_confirms_as_found():
    half = stored(HALF, "a", 1)
    assert decide(probe(), [half], max_distance=3, min_share=0).candidate.key == "a"
    bare = replace(probe(), sketch=None)
    assert decide(bare, [half], max_distance=3, min_share=0.8).candidate.key == "a"


def test_a_stored_page_without_sketch_is_refused_when_the_share_is_asked():
    old = replace(stored(PAGE, "a", 1), sketch=None)
    found = decide(probe(), [old], max_distance=3, min_share=0.8)
    assert found.candidate is None and found.closest == (old, None)


def test_own_key_first_then_nearest_then_earliest():
    own = stored(PAGE, "new", 5, distance=3)
    near_late = stored(PAGE, "b", 4, distance=1)
    near_early = stored(PAGE, "c", 2, distance=1)
    far_earliest = stored(PAGE, "d", 1, distance=2)
    found = decide(probe(), [near_late, own, far_earliest, near_early], max_distance=3,
                   min_share=0.8)  # fmt: skip
    assert found.own and found.candidate.key == "new"
    found = decide(probe(), [near_late, far_earliest, near_early], max_distance=3, min_share=0.8)
    assert found.candidate.key == "c"


def test_a_re_crawl_whose_text_changed_much_is_not_unchanged():
    own = stored(HALF, "new", 1)
    found = decide(probe(), [own], max_distance=3, min_share=0.8)
    assert found.candidate is None and found.refused == 1


def test_beyond_the_distance_a_near_candidate_is_none():
    found = decide(probe(), [stored(PAGE, "a", 1, distance=4)], max_distance=3, min_share=0.8)
    assert found.candidate is None and found.refused == 0


def test_contained_candidates_need_the_anchors_test_and_the_share():
    anchors = Anchors((1, 2, 3), (40, 40, 40), 120, 1000)
    summary = (3, 120, 1000)
    one = stored(PAGE, "a", 1, distance=20, found="contained", shared=(1,), summary=summary)
    two_of_three = replace(one, shared=(1, 2))  # two thirds of either page's: not enough
    three = replace(one, shared=(1, 2, 3))
    mine = probe(anchors=anchors)
    for refused in (one, two_of_three):
        assert decide(mine, [refused], max_distance=3, min_share=0.8).candidate is None
    assert decide(mine, [three], max_distance=3, min_share=0.8).candidate.found == "contained"
    holds_half = replace(three, sketch=text_sketch(HALF).stored())
    assert decide(mine, [holds_half], max_distance=3, min_share=0.8).candidate is None
    # A contained candidate under the page's own key is none (a re-crawl is near or new).
    assert decide(probe(anchors=anchors, key="a"), [three], max_distance=3,
                  min_share=0.8).candidate is None  # fmt: skip


def test_near_beats_contained_and_contained_goes_earliest():
    anchors = Anchors((1, 2), (40, 40), 80, 1000)
    held_late = stored(PAGE, "late", 9, distance=30, found="contained", shared=(1, 2),
                       summary=(2, 80, 1000))  # fmt: skip
    held_early = replace(held_late, id=3, key="early", order=3)
    near = stored(PAGE, "near", 10, distance=2)
    mine = probe(anchors=anchors)
    assert decide(mine, [held_late, near, held_early], max_distance=3,
                  min_share=0.8).candidate.key == "near"  # fmt: skip
    assert decide(mine, [held_late, held_early], max_distance=3,
                  min_share=0.8).candidate.key == "early"  # fmt: skip


def test_boilerplate_anchors_and_single_shared_ones_make_no_candidate():
    hits = {1: [10, 11], 2: [10], 3: list(range(MAX_ANCHOR_PAGES + 1))}
    assert by_anchors(hits) == {10: [1, 2]}
    facts = {10: stored(PAGE, "a", 10, distance=9, summary=(2, 80, 1000))}
    found = anchor_candidates(probe(anchors=Anchors((1, 2), (40, 40), 80, 1000)),
                              by_anchors(hits), facts)  # fmt: skip
    assert [(c.key, c.found, c.shared) for c in found] == [("a", "contained", (1, 2))]
