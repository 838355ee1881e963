"""The compiled lower() gives exactly str.lower(), on any text."""

from __future__ import annotations

import pytest
from code_points import every_character_and_lone_surrogates
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis.speedups import compiled

lower = compiled("lower")


@pytest.mark.needs_compiled
def test_every_code_point_as_str_lower():
    # In a text of two bytes per character (the BMP) and of four (all of them), without
    # the two characters that leave the whole text to str.lower, then each of those.
    simple = [c for c in every_character_and_lone_surrogates() if c not in "İΣ"]
    for text in ("".join(c for c in simple if c <= "\uffff"), "".join(simple)):
        assert lower(text) == text.lower()
    for character in every_character_and_lone_surrogates():
        if character <= "\xff" or character in "İΣ":
            assert lower(f"{character}中") == f"{character}中".lower()


@pytest.mark.needs_compiled
@pytest.mark.parametrize(
    "text",
    [
        "",
        "ΟΔΥΣΣΕΥΣ中",  # a final sigma: left to str.lower
        "İstanbul 中文",  # İ lower-cases to two characters
        "ABC",
        "ÀÉÎ Ÿ",  # Latin-1 text; Ÿ lower-cases into Latin-1
        "Ÿ中",
        "Ÿ",
        "ĀB\U0001d400",
    ],
)
def test_examples_as_str_lower(text):
    assert lower(text) == text.lower()
    assert type(lower(text)) is str


@pytest.mark.needs_compiled
def test_a_subclass_of_str_is_lowered_as_a_str():
    class Shouting(str):
        def lower(self) -> str:
            return "never called"

    for text in ("ABC", "ABC中", "İ中"):
        assert lower(Shouting(text)) == text.lower()
        assert type(lower(Shouting(text))) is str


@pytest.mark.needs_compiled
@given(
    st.text(alphabet=st.sampled_from(["A", "z", "Σ", "İ", "中", " ", "Ÿ", "É"]) | st.characters())
)
def test_any_text_as_str_lower(text):
    assert lower(text) == text.lower()


def test_not_a_str():
    if lower is not None:
        with pytest.raises(TypeError):
            lower(b"ABC")
