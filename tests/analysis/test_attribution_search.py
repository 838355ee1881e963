"""The compiled searches for attribution lines (contains_any, line_starts) find exactly what
their Python twins find, on any text."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from code_points import every_character_and_lone_surrogates
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis import attribution
from scrapy_simhash.analysis.attribution import (
    _KEYWORDS,
    _NOTICES,
    _OTHER_CASE_FORMS,
    _contains_any_python,
    _line_starts_python,
)
from scrapy_simhash.analysis.speedups import compiled

contains_any = compiled("contains_any")
line_starts = compiled("line_starts")

_PIECES = st.sampled_from(
    [
        "\n",
        " ",
        "-- ",
        "Source",
        "SOURCE: x",
        "sOuRcE",
        "sourc",
        "By ",
        "door",
        "DOOR",
        "źródło",
        "Źródło",
        "编辑",
        "编",
        "记者",
        "中文",
        "7",
        "12:30",
        "2024-03-15",
        "年",
        "٣",
        "_",
        "ſource",
        "İmage",
        "\U0001f600",
        "\ud800",
        "©",
        "(c)",
        "all rights reserved",
        "转载",
        "a",
        "é",
    ]
)
_TEXTS = st.lists(_PIECES | st.text(max_size=5), max_size=40).map("".join)


@pytest.mark.slow
@pytest.mark.needs_compiled
def test_line_starts_of_every_first_character():
    # Each character as the first of a line, alone, after non-word characters, and
    # before "ource" (a keyword when it is an "s" of either case).
    for prefix, suffix in (("", ""), (" -\t", ""), ("", "ource"), ("", "y x")):
        text = "".join(f"\n{prefix}{c}{suffix}" for c in every_character_and_lone_surrogates())
        assert line_starts(text, _KEYWORDS) == _line_starts_python(text, _KEYWORDS)


@pytest.mark.needs_compiled
@given(_TEXTS)
def test_line_starts_same_as_python(text):
    assert line_starts(text, _KEYWORDS) == _line_starts_python(text, _KEYWORDS)


@pytest.mark.needs_compiled
@given(
    _TEXTS,
    st.lists(
        st.text(min_size=1, max_size=4).filter(lambda k: k[0].isalnum() or k[0] == "_"),
        min_size=1,
        max_size=5,
    ),
)
def test_line_starts_with_any_keywords(text, keywords):
    keywords = tuple(keywords)
    assert line_starts(text, keywords) == _line_starts_python(text, keywords)


@pytest.mark.needs_compiled
def test_line_starts_examples():
    text = (
        "Source: x\n  Source: y\n\n-- \n7 May\n15.03.2024\n12.1. RAID\n- 3年4月\n"
        "sources\n_by\n编辑：王\n中文\nérable\nby"
    )
    starts = line_starts(text, _KEYWORDS)
    assert [text[s : s + 4] for s in starts] == [
        *("  So", "15.0", "- 3年", "sour", "编辑：王", "érab", "by"),
    ]


@pytest.mark.slow
@pytest.mark.needs_compiled
def test_line_starts_of_every_character_after_a_digit():
    # A line led by a digit is a candidate while its word characters are digits (of any
    # script, as the pattern's \d) or 年, 月, 日.
    for prefix in ("1", " 12:3", "2024-"):
        text = "".join(f"\n{prefix}{c}0" for c in every_character_and_lone_surrogates())
        assert line_starts(text, _KEYWORDS) == _line_starts_python(text, _KEYWORDS)


@pytest.mark.needs_compiled
@given(_TEXTS, st.lists(_PIECES | st.text(max_size=3), max_size=12))
def test_contains_any_same_as_python(text, needles):
    needles = tuple(needles)
    assert contains_any(text, needles) == _contains_any_python(text, needles)


@pytest.mark.needs_compiled
def test_contains_any_where_characters_share_their_low_bits():
    # The compiled search skips characters by their low 8 bits: "转" (U+8F6C) shares them
    # with "l", "ı" (U+0131) with "1"; the character itself must still match.
    for needles in (_NOTICES, _OTHER_CASE_FORMS, ("转载",), ("\U0001f600x",)):
        for text in ("l" * 50, "1" * 9 + "0", "\u8f6c\u8f7d"[:1] * 3, "\U0001f600", ""):
            assert contains_any(text, needles) == _contains_any_python(text, needles)
        for text in needles:
            assert contains_any(f"ab{text}", needles) is True


@pytest.mark.needs_compiled
def test_contains_any_edge_cases():
    assert contains_any("abc", ()) is False
    assert contains_any("abc", ("",)) is True
    assert contains_any("", ("",)) is True
    assert contains_any("ab", ("abc",)) is False
    assert contains_any("xab", ("abc", "b")) is True
    # The last character has no character after it: one-character needles still match.
    assert contains_any("xa", ("a",)) is True
    assert contains_any("xa", ("ab",)) is False
    # "q" (0x71) shares its low 6 bits with "1" (0x31), "ı" and "ű".
    assert contains_any("q1ű", ("ı",)) is False
    assert contains_any("qqı", ("ı",)) is True
    with pytest.raises(TypeError):
        contains_any("abc", (1,))
    for function in (line_starts, _line_starts_python):
        for keywords in (("",), ("by", ":x")):
            with pytest.raises(ValueError):
                function("abc", keywords)


def test_pure_python_searches_are_used_when_asked():
    env = {**os.environ, "SCRAPY_SIMHASH_PURE_PYTHON": "1"}
    code = (
        "from scrapy_simhash.analysis import attribution as a; "
        "print(a.contains_any is a._contains_any_python, a.line_starts is a._line_starts_python)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["True", "True"], out.stderr
    if contains_any is not None:
        assert attribution.contains_any is contains_any
