"""Attribution lines: what a copy of a text adds around it, and the text says nothing with.

A repost, a syndicated copy or a mirror carries lines of its own: where it came from
("Source: ...", "转载请注明出处", "原文链接: ..."), who wrote or edited it ("By Jane Doe",
"责任编辑：...", "von Anna Muster"), copyright notices, photo credits and a bare date or
time. Their words are rare, so TF-IDF weighs them heavily, and two such lines moved a
long article's fingerprint beyond distance 3 in 28% of cases (measured: see
``benchmarks/quality.py``, "repost footer"). None of them tells one text from another, so
they are not features.

A line counts only when it is short (an attribution is a line, not a paragraph) and says so
in one of the ways below; a line of content that merely mentions a source is long or does
not start that way.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

from .speedups import compiled

#: Longer lines are content even when they start like an attribution.
MAX_LINE = 120

# Labelled lines ("Source: Reuters", "Foto: dpa") and the Chinese attribution notices, at
# the start of a line; copyright and repost notices anywhere in a short line.
_LABELLED = re.compile(
    r"\W*(?:sources?|copyright|reporting by|editing by|written by|posted by|published by"
    r"|originally published(?: \w+)?|first published(?: \w+)?|read more|photos?|images?"
    r"|credits?|quelle|fuente|fonte|źródło|bron|foto)\s*[:：|]"
    r"|\W*(?:编辑|记者|作者|来源|出处)[:：\s]",
    re.IGNORECASE,
)
_NOTICE = re.compile(
    r"©|\(c\)\s*\d{4}|all rights reserved|alle rechte vorbehalten|tous droits réservés"
    r"|转载|责任编辑|原文链接|原文地址|版权所有|免责声明",
    re.IGNORECASE,
)
# "By Jane Doe", "Von Anna Muster, dpa", "BY STAFF | March 15": a capitalised "by" and one to
# four capitalised words, then the end of the line or a separator. Wrapped text ("by June
# 30. There had been") and names in a sentence ("De Croo, here for talks") do not match.
_BYLINE = re.compile(
    r"^\W*(?:By|BY|Von|VON|Par|PAR|Por|POR|Door|DOOR)\s+"
    r"([^\W\d_][\w.'’]*(?:\s+[^\W\d_][\w.'’-]*){0,3})\s*(?:$|[,|/–—]|\s-\s)"
)
# A line that is only a date and/or a time: "2024-03-15 10:23", "15.03.2024", "2024年3月15日".
# One separator throughout, so that a price ("48-5/8") is not a date.
_DATE_OR_TIME = re.compile(
    r"^\W*(?:\d{1,4}([-./])\d{1,2}\1\d{1,4}|\d{4}年\d{1,2}月\d{1,2}日|\d{1,2}:\d{2})"
    r"(?:\W+\d{1,2}:\d{2}(?::\d{2})?)?\W*$"
)


def is_attribution(line: str) -> bool:
    """True when *line* is an attribution line (see the module's doc)."""
    line = line.strip()
    return 0 < len(line) < MAX_LINE and (_starts_as_one(line) or bool(_NOTICE.search(line)))


def _starts_as_attribution(line: str) -> bool:
    """:func:`is_attribution` without the notices that make a line one wherever they are
    in it: the patterns that match at its start only."""
    line = line.strip()
    return 0 < len(line) < MAX_LINE and _starts_as_one(line)


def _starts_as_one(line: str) -> bool:
    if _LABELLED.match(line) or _DATE_OR_TIME.match(line):
        return True
    byline = _BYLINE.match(line)
    return bool(byline and all(word[0].isupper() for word in byline.group(1).split()))


# Testing every line with the patterns above cost as much as the rest of the tokenising, so
# only the lines that can be attributions are tested. A line that is_attribution() accepts
# (other than the first) starts, after non-word characters, with one of these words (each a
# prefix of what _LABELLED, _BYLINE or _DATE_OR_TIME needs; the ASCII letters in either case,
# a superset of _BYLINE's), with a non-ASCII character other than a Han one (such as "ź", or
# a digit of another script), or with an ASCII digit in a line whose word characters are all
# digits or 年, 月, 日 (a date or a time: _DATE_OR_TIME matches the whole line); or it
# holds one of the _NOTICES.
_KEYWORDS = tuple(
    """
    source copyright reporting editing written posted published originally first read
    photo image credit quelle fuente fonte bron foto by von par por door
    编辑 记者 作者 来源 出处
    """.split()  # noqa: SIM905 (a list literal takes a line per word)
)
# What _LABELLED finds anywhere in a line, lower-cased: a plain substring search is many times
# faster than the pattern. Case-insensitively, the letters of these notices and of _KEYWORDS
# match only their upper- and lower-case forms, except "i" (also "ı", "İ") and "s" (also
# "ſ"), whose other forms lower-case to something else: a text that holds one is tested
# line by line.
_NOTICES = (
    "©",
    "(c)",
    "all rights reserved",
    "alle rechte vorbehalten",
    "tous droits réservés",
    "转载",
    "责任编辑",
    "原文链接",
    "原文地址",
    "版权所有",
    "免责声明",
)
_OTHER_CASE_FORMS = ("ı", "İ", "ſ")


def _contains_any_python(text: str, needles: tuple[str, ...]) -> bool:
    """Whether *text* holds any of *needles* (the compiled form: one pass for all)."""
    return any(needle in text for needle in needles)


def _line_starts_python(text: str, keywords: tuple[str, ...]) -> list[int]:
    """For each line of *text* after a line break, the position of its first character,
    when its first word character is a non-ASCII one other than a Han one (U+4E00-U+9FD5),
    the start of one of *keywords* (each starting with a word character; ASCII letters in
    either case, other characters as they are), or an ASCII digit followed by no word
    character to the end of the line but decimal digits and 年, 月, 日."""
    return [match.start() + 1 for match in _line_start_pattern(keywords).finditer(text)]


@functools.lru_cache(maxsize=8)
def _line_start_pattern(keywords: tuple[str, ...]) -> re.Pattern[str]:
    if not all(keyword[:1].isalnum() or keyword[:1] == "_" for keyword in keywords):
        raise ValueError("keywords must start with a word character")
    either_case = (
        "".join(
            f"[{c.lower()}{c.upper()}]" if c.isascii() and c.isalpha() else re.escape(c)
            for c in keyword
        )
        for keyword in keywords
    )
    date = r"[0-9](?:\d|[年月日]|[^\w\n])*(?=\n|\Z)"
    return re.compile(rf"\n[^\w\n]*(?:{'|'.join(either_case)}|{date}|[^\W\x00-\x7f\u4e00-\u9fd5])")


contains_any: Callable[[str, tuple[str, ...]], bool] = (
    compiled("contains_any") or _contains_any_python
)
line_starts: Callable[[str, tuple[str, ...]], list[int]] = (
    compiled("line_starts") or _line_starts_python
)


def has_attribution(text: str, lowered: str | None = None) -> bool:
    """Whether any line of *text* is an attribution line. *lowered* is ``text.lower()``,
    when the caller has it already."""
    return next(_attribution_starts(text, lowered), None) is not None


def strip_attribution(text: str, lowered: str | None = None) -> str:
    """*text* without its attribution lines (*text* itself when it has none). *lowered*
    is ``text.lower()``, when the caller has it already."""
    starts = set(_attribution_starts(text, lowered))
    if not starts:
        return text
    kept = []
    at = 0
    for line in text.split("\n"):
        if at not in starts:
            kept.append(line)
        at += len(line) + 1
    return "\n".join(kept)


def _attribution_starts(text: str, lowered: str | None) -> Iterator[int]:
    """The position of the first character of each attribution line of *text* (some more
    than once), testing only the lines that can be one (see _KEYWORDS)."""
    if contains_any(text, _OTHER_CASE_FORMS):
        # Rare: letters that match the keywords' and the notices' letters case-insensitively
        # (and "İ" lower-cases to two characters): every line is tested.
        at = 0
        for line in text.split("\n"):
            if is_attribution(line):
                yield at
            at += len(line) + 1
        return
    # The patterns at the start of a line: on the first line and the candidates.
    end = text.find("\n")
    if _starts_as_attribution(text[: None if end < 0 else end]):
        yield 0
    for start in line_starts(text, _KEYWORDS):
        end = text.find("\n", start)
        if _starts_as_attribution(text[start : None if end < 0 else end]):
            yield start
    # A notice makes a short line an attribution wherever it is in it: the lines that hold
    # one (a page's "© 2024" footer), not every line of the text.
    if lowered is None:
        lowered = text.lower()
    if contains_any(lowered, _NOTICES):
        for start, line in _lines_holding(text, lowered, _NOTICES):
            if is_attribution(line):
                yield start


def _lines_holding(text: str, lowered: str, needles: tuple[str, ...]) -> list[tuple[int, str]]:
    """(start, line) for the lines of *text* whose lower-cased form holds one of *needles*.
    *lowered* is ``text.lower()``, of the same length: without "İ" (which lower() makes two
    characters, and a text holding it is tested line by line), every character lower-cases
    to one."""
    lines = []
    for needle in needles:
        at = lowered.find(needle)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            lines.append((start, text[start : None if end < 0 else end]))
            at = -1 if end < 0 else lowered.find(needle, end)
    return lines
