"""The sketch of a text and the share of one text another holds (scrapy_simhash.sketch)."""

from __future__ import annotations

import pytest
from prose import prose

from scrapy_simhash.analysis.fingerprint import seed_from_secret
from scrapy_simhash.analysis.sketch import shingle_hashes, text_sketch, tokens
from scrapy_simhash.sketch import (
    MIN_SAMPLES,
    PROBE_SAMPLES,
    SAMPLES,
    SKETCH_FORMAT,
    Sketch,
    share,
)


def test_tokens_fold_case_drop_punctuation_and_keep_numbers_as_they_are():
    # Anchors read every number as 0 (to find a copy with its dates changed); the share
    # check reads them as they are (a page of other figures is another page).
    assert tokens("The Tram, 2026: costs 1,250.50 euros!") == [
        "the", "tram", "2026", "costs", "1", "250", "50", "euros",
    ]  # fmt: skip
    assert tokens("上海电车") == ["上", "海", "电", "车"]
    assert tokens("2026年 ipv6 word12 v2.1 3.5%") == [
        "2026",
        "年",
        "ipv6",
        "word12",
        "v2",
        "1",
        "3",
        "5",
    ]


def test_the_same_text_has_the_same_hashes_and_a_secret_changes_them():
    text = "\n".join(prose(200, 1))
    assert shingle_hashes(text) == shingle_hashes(text)
    assert shingle_hashes(text) != shingle_hashes(
        text, seed_from_secret("0123456789abcdef0123456789abcdef")
    )


def test_pinned_hashes_change_only_with_the_format():
    # A change of words, shingles or hash fails here: bump SKETCH_FORMAT with it.
    assert SKETCH_FORMAT == "shingles-3w/casefold-nopunct/64x16/v2"
    assert shingle_hashes("The council approved the tram line.") == (
        4,
        [1710827472033455193, 4521462489543110485, 6795756230216269124, 16056629008194747577],
    )
    assert shingle_hashes("上海电车 2026年")[1][0] == 7114934374959105703
    assert shingle_hashes("Results: 2026 3 1 2") == (
        3,
        [1215929429368633645, 9832059403625282559, 15533196345712894636],
    )
    assert shingle_hashes("The council approved the tram line.", limit=2)[1] == [
        1710827472033455193,
        4521462489543110485,
    ]


def test_the_compiled_and_the_pure_python_shingles_agree():
    from scrapy_simhash.analysis import sketch

    compiled_hashes = sketch._TEXT_SHINGLES
    if compiled_hashes is None:
        pytest.skip("the C accelerator is not built")
    for seed in range(20):
        text = "\n".join(prose(300, seed)) + " 2026年 上海 ipv6 v2.1 ünïcödé カタカナ 한국어"
        form = sketch.sketch_form(text)
        count, found = compiled_hashes(form, 3, 10**9)
        words = sketch._TOKEN.findall(form)
        expected = sketch.combine_shingles([sketch.hash_term(w) for w in words], 3)
        assert (count, found) == (len(words) - 2, expected)
        assert sketch._SHINGLES([sketch.hash_term(w) for w in words], 3) == expected


def test_a_page_shares_all_its_text_with_itself_and_little_with_another():
    a = text_sketch("\n".join(prose(800, 1)))
    b = text_sketch("\n".join(prose(800, 2)))
    assert share(a, a.stored()) == 1.0
    assert share(a, b.stored()) < 0.1


@pytest.mark.parametrize("kept_part", [1.0, 0.9, 0.75, 0.5, 0.25])
def test_the_share_estimates_how_much_of_a_page_the_other_holds(kept_part):
    paragraphs = prose(4000, 3)  # 100 paragraphs: the stored sketch samples ~1 in 60
    page = "\n".join(paragraphs)
    other = "\n".join(paragraphs[: int(len(paragraphs) * kept_part)] + prose(400, 4))
    estimate = share(text_sketch(page), text_sketch(other).stored())
    assert estimate == pytest.approx(kept_part, abs=0.15)


def test_a_long_page_sampled_at_a_higher_level_still_compares():
    short = "\n".join(prose(400, 5))
    long = short + "\n" + "\n".join(prose(20_000, 6))
    stored_long = text_sketch(long).stored()
    assert stored_long.level > 0 and len(stored_long.values) <= SAMPLES
    # The short page is all in the long one; the long one mostly not in the short one.
    assert share(text_sketch(short), stored_long) is None or share(
        text_sketch(short), stored_long
    ) == pytest.approx(1.0, abs=0.01)
    assert share(text_sketch(long), text_sketch(short).stored()) < 0.1


def test_the_probe_keeps_at_most_its_cap_and_the_stored_sketch_packs_small():
    sketch = text_sketch("\n".join(prose(30_000, 7)))
    assert len(sketch.values) <= PROBE_SAMPLES and sketch.whole
    packed = sketch.pack()
    assert len(packed) <= 5 + 2 * SAMPLES
    assert Sketch.unpack(packed) == sketch.stored()
    assert Sketch.unpack(b"") is None


def test_too_few_samples_at_a_sampled_level_is_an_unknown_share():
    tiny = Sketch(6, 64 * 64, (1, 2, 3), whole=False)
    assert share(tiny, tiny) is None
    assert MIN_SAMPLES > 3
    # At level 0 every shingle is there: a short text's share is exact.
    short = text_sketch("the council approved the tram line")
    assert share(short, short.stored()) == 1.0


def test_no_sketch_is_an_unknown_share():
    assert share(None, text_sketch("a b c d")) is None
    assert share(text_sketch("a b c d"), None) is None


def test_a_page_of_other_figures_holds_little_of_a_page_and_a_changed_date_much():
    # Two pages of one template whose figures are what they say (a table of results):
    # the words around the figures are the same, the figures are not.
    rows = [f"{team} played {n} won {w} lost {n - w} points {3 * w}" for team, n, w in (
        ("Harbour", 12, 7), ("Quarry", 12, 5), ("Mill", 11, 6), ("Ferry", 12, 4),
        ("Lock", 11, 8), ("Weir", 12, 3), ("Dock", 11, 2), ("Pier", 12, 9),
    )]  # fmt: skip
    week = "\n".join(["Results after week 12", *rows])
    later = "\n".join(
        ["Results after week 13", *(r.replace("1", "2").replace("7", "8") for r in rows)]
    )
    assert share(text_sketch(later), text_sketch(week).stored()) < 0.8
    # An article re-dated: one number of many words changed.
    article = "\n".join(prose(1500, 4))
    redated = article + "\nUpdated 2026-12-02."
    assert (
        share(text_sketch(redated), text_sketch(article + "\nUpdated 2026-11-30.").stored()) > 0.9
    )


def test_an_estimated_share_passes_the_bar_by_half_a_standard_error():
    from scrapy_simhash.sketch import clears

    # 64 samples at 0.84: 0.046 of doubt; half of it clears 0.8, all of it would not.
    assert clears((0.84, 64, False), 0.8)
    assert not clears((0.82, 64, False), 0.8)
    assert clears((0.8, 64, True), 0.8)  # every shingle compared: exact
    assert not clears(None, 0.0)
