"""The containment rule (scrapy_simhash.anchors.contained), at its boundaries."""

from __future__ import annotations

from scrapy_simhash.anchors import MIN_COVER, MIN_SHARE, MIN_SHARED, contained

# (anchors, anchored words, cover per mille) of a page whose text is all long paragraphs.
WHOLE = (8, 800, 1000)


def test_one_shared_paragraph_is_no_evidence():
    assert MIN_SHARED == 2
    assert not contained(1, 400, (1, 400, 1000), (1, 400, 1000))
    assert contained(2, 400, (2, 400, 1000), (2, 400, 1000))


def test_three_quarters_of_the_smaller_pages_anchors():
    assert MIN_SHARE == 0.75
    assert contained(6, 600, WHOLE, WHOLE)
    assert not contained(5, 600, WHOLE, WHOLE)
    # The smaller page decides: 3 of its 4 anchors are shared.
    assert contained(3, 300, (4, 400, 1000), WHOLE)


def test_the_anchors_shared_are_counted_not_weighed():
    # A digest of short lines with a block of lines deleted: the edit changed the run it
    # fell in and the next, its two largest, so the 6 runs shared of its 8 hold 69% of
    # its anchored words. How much of its text the other page holds, the share check
    # measures.
    assert contained(6, 1111, (8, 1612, 1000), (8, 1602, 1000))
    # The shared units still make most of its text.
    assert not contained(6, 479, WHOLE, WHOLE)


def test_the_shared_paragraphs_are_most_of_the_smaller_pages_text():
    assert MIN_COVER == 0.6
    # All 8 anchors shared, but the long paragraphs are only 59% of the page's words.
    assert not contained(8, 800, (8, 800, 590), (8, 800, 590))
    assert contained(8, 800, (8, 800, 600), (8, 800, 600))
    # A page is told by its own text: the other's cover does not make it contained.
    assert not contained(4, 400, (4, 400, 590), (8, 900, 1000))


def test_either_page_may_be_the_one_contained():
    # The same 8 anchors: the page whose long paragraphs are all of its text is contained
    # in the one that also holds code and lists, whichever was stored first.
    assert contained(8, 646, (8, 646, 591), (8, 646, 1000))
    assert contained(8, 646, (8, 646, 1000), (8, 646, 591))
    # A page all of whose anchors the other holds, but which is mostly other text, is not.
    assert not contained(4, 400, (4, 400, 500), (8, 800, 1000))


def test_a_digest_of_short_chinese_lines_with_a_block_deleted_is_a_copy():
    # A newsletter of one-line items: no line is long enough to be an anchor; runs of
    # lines are, and a copy without six of its items shares most of them.
    import random

    from scrapy_simhash import Deduplicator, Fingerprinter, open_index

    rng = random.Random(3)
    chars = (
        "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动"
        "同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自"
        "二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日"
        "那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变"
        "条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总"
        "次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指"
        "几九区强放决西被干做必战先回则任取据处理府研质"
    )
    items = ["".join(rng.choices(chars, k=rng.randint(12, 30))) + "。" for _ in range(90)]
    copy = items[:40] + items[46:]
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter())
        first = dedup.check_text("\n".join(items), "digest")
        assert first.match is None
        second = dedup.check_text("\n".join(copy), "digest-copy")
    assert second.match is not None and second.match.key == "digest", second
    # Found by the runs it shares, not by distance: each line alone is no anchor.
    assert second.match.contained and second.match.distance > 3, second.match


def _contents_page(intro: str, entries: list[str], key: str, dedup) -> object:
    return dedup.check_text("\n".join(["Reference", intro, *entries]), key)


def test_a_page_sharing_only_a_list_with_another_is_not_contained_in_it():
    # A documentation site's part page ("SQL Commands": a paragraph of its own and the
    # table of contents of every command) and its book page ("Reference": another
    # paragraph and the same table): the list is most of both pages' text, but the part
    # page's own paragraph is in no other page, and dropping it would lose it.
    from prose import contents_entries, prose

    from scrapy_simhash import Deduplicator, Fingerprinter, open_index
    from scrapy_simhash.analysis.anchors import text_anchors

    entries = contents_entries()
    book_intro, part_intro = prose(260, 1)[0], prose(260, 2)[0]
    assert min(len(book_intro), len(part_intro)) >= 160
    anchors = text_anchors("\n".join(["Reference", part_intro, *entries]))
    # The runs of the list outweigh the paragraph, which is still one of the anchors.
    assert len(anchors.paragraphs) == 1 and anchors.paragraphs[0] in anchors.hashes
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter())
        assert _contents_page(book_intro, entries, "book", dedup).match is None
        part = _contents_page(part_intro, entries, "part", dedup)
        assert part.match is None, part
        # The same page with the book's paragraph shares a paragraph and the list: a copy.
        again = _contents_page(book_intro, entries[:54], "again", dedup)
    assert again.match is not None and again.match.key == "book", again
