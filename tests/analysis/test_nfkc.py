"""nfkc() must give exactly unicodedata.normalize("NFKC", ...) on any text, and its
compiled search the same runs as its regular expression."""

from __future__ import annotations

import random
import unicodedata

import pytest
from code_points import every_character_text
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis import nfkc as module
from scrapy_simhash.analysis.nfkc import nfkc

# Every character next to every kind of neighbour: starters that compose with what
# follows, combining marks, Hangul jamo and syllables, compatibility forms, astral ones.
_NEIGHBOURS = "ae\u0301\u0323\u1100\u1161\u11a8\uac00\uff76\uff9e\u3099\u0b47\u0b3e\U0001109a"


@pytest.mark.slow
def test_every_code_point_in_order_and_shuffled():
    everything = every_character_text()
    assert nfkc(everything) == unicodedata.normalize("NFKC", everything)
    chars = list(every_character_text()[:0x10000] + _NEIGHBOURS * 2000)
    for seed in range(3):
        random.Random(seed).shuffle(chars)
        text = "".join(chars)
        assert nfkc(text) == unicodedata.normalize("NFKC", text)


@pytest.mark.skipif(module.marked_runs is None, reason="the C accelerator is not built")
def test_compiled_search_finds_what_the_regex_finds():
    chars = list(every_character_text()[:0x10000] + _NEIGHBOURS * 2000 + "中文 abc" * 5000)
    texts = [every_character_text()]
    for seed in range(2):
        random.Random(seed).shuffle(chars)
        texts.append("".join(chars))
    for text in texts:
        assert module.table_runs()(text) == module.regex_runs()(text)


def test_text_that_needs_nothing_is_returned_as_is():
    text = "plain text, 中文"
    assert nfkc(text) is text


def test_full_width_and_composed_forms_fold():
    assert nfkc("ｶﾞ，ＡＢＣ１２３ e\u0301") == "ガ,ABC123 é"


@given(st.text(alphabet=st.sampled_from(_NEIGHBOURS) | st.characters(), max_size=40))
def test_same_as_unicodedata(text):
    assert nfkc(text) == unicodedata.normalize("NFKC", text)


@pytest.mark.skipif(module.marked_runs is None, reason="the C accelerator is not built")
def test_compiled_search_of_other_points_finds_what_the_regex_finds():
    points = frozenset([0xAD, *range(0x200B, 0x2010), 0xFEFF, 0x41])
    chars = list(every_character_text()[:0x10000] + "\u200b\u200c\u00adA\U0001f600" * 3000)
    random.Random(5).shuffle(chars)
    for text in ("".join(chars), "", "plain", "\u200b", "a\ufeff", "\U0001f600"):
        assert module.table_runs(points)(text) == module.regex_runs(points)(text)
    assert module.table_runs(frozenset())("a\U0001f600b") == [(1, 2)]


def _tagged(form: str, run: str) -> str:
    """A normalisation that shows what it was given and where (and changes the length)."""
    return f"<{form}:{run}>"


@pytest.mark.skipif(module.normalize_runs is None, reason="the C accelerator is not built")
@given(
    st.text(alphabet=st.sampled_from(_NEIGHBOURS + "abc中\u200b") | st.characters(), max_size=60)
)
def test_compiled_normalize_runs_same_as_python(text):
    for normalize, form in ((unicodedata.normalize, "NFKC"), (_tagged, "x")):
        expected = module._normalize_runs_python(text, module.regex_runs(), normalize, form)
        assert module.normalize_runs(text, module._bitmap(), normalize, form) == expected
        # With a cache of the short pieces, kept from one text to the next.
        cache = _CACHES.setdefault(form, {})
        assert module.normalize_runs(text, module._bitmap(), normalize, form, cache) == expected
        assert all(value == normalize(form, piece) for piece, value in cache.items())
        assert all(len(piece) <= 4 for piece in cache)


_CACHES: dict[str, dict[str, str]] = {}


@pytest.mark.skipif(module.normalize_runs is None, reason="the C accelerator is not built")
def test_compiled_normalize_runs_keeps_short_pieces():
    calls = []

    def counted(form: str, run: str) -> str:
        calls.append(run)
        return _tagged(form, run)

    cache: dict[str, str] = {}
    text = "的ｶ的ｶ的ｶ 12345ｶｶｶｶ 12345ｶｶｶｶ"
    normalized = module.normalize_runs(text, module._bitmap(), counted, "f", cache)
    assert normalized == module._normalize_runs_python(text, module.regex_runs(), _tagged, "f")
    # "的ｶ" once; the piece of five characters each time.
    assert calls == ["的ｶ", "5ｶｶｶｶ", "5ｶｶｶｶ"]
    assert cache == {"的ｶ": "<f:的ｶ>"}
    with pytest.raises(TypeError):
        module.normalize_runs(text, module._bitmap(), counted, "f", [])
    assert module.nfkc("的，" * 3 + "ﾊﾟ") == unicodedata.normalize("NFKC", "的，" * 3 + "ﾊﾟ")


@pytest.mark.skipif(module.normalize_runs is None, reason="the C accelerator is not built")
def test_compiled_normalize_runs_at_the_edges():
    bitmap = module._bitmap()
    for text in ("", "\u0301", "a\u0301", "\u0301a", "ｶ", "aｶ", "ｶﾞ", "\U0001f600", "abc"):
        assert module.normalize_runs(text, bitmap, _tagged, "f") == (
            module._normalize_runs_python(text, module.regex_runs(), _tagged, "f")
        )
    assert module.normalize_runs("aｶb", bitmap, _tagged, "f") == "<f:aｶ>b"
    with pytest.raises(TypeError):
        module.normalize_runs("aｶb", bitmap, lambda form, run: 1, "f")
    with pytest.raises(ValueError):
        module.normalize_runs("aｶb", b"short", _tagged, "f")
