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

import re

#: Longer lines are content even when they start like an attribution.
MAX_LINE = 120

# Labelled lines ("Source: Reuters", "Foto: dpa"), copyright notices anywhere in a short
# line, and the Chinese attribution and repost notices.
_LABELLED = re.compile(
    r"^\W*(?:sources?|copyright|reporting by|editing by|written by|posted by|published by"
    r"|originally published(?: \w+)?|first published(?: \w+)?|read more|photos?|images?"
    r"|credits?|quelle|fuente|fonte|źródło|bron|foto)\s*[:：|]"
    r"|©|\(c\)\s*\d{4}|all rights reserved|alle rechte vorbehalten|tous droits réservés"
    r"|^\W*(?:编辑|记者|作者|来源|出处)[:：\s]"
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
    if not line or len(line) >= MAX_LINE:
        return False
    if _LABELLED.search(line) or _DATE_OR_TIME.match(line):
        return True
    byline = _BYLINE.match(line)
    return bool(byline and all(word[0].isupper() for word in byline.group(1).split()))


# Testing every line with the patterns above cost as much as the rest of the tokenising, so
# candidate lines are found over the whole text at once. A line that is_attribution()
# accepts (other than the first) follows a line break, non-word characters and one of these
# words (each a prefix of what _LABELLED, _BYLINE or _DATE_OR_TIME needs; case-insensitive,
# so a superset of _BYLINE's), or it holds one of the _NOTICES. The pattern starts with a
# literal, which the regex engine skips to directly.
_LINE_START = re.compile(
    r"\n\W*(?:source|copyright|reporting|editing|written|posted|published|originally|first"
    r"|read|photo|image|credit|quelle|fuente|fonte|źródło|bron|foto|by|von|par|por|door|\d"
    r"|编辑|记者|作者|来源|出处)",
    re.IGNORECASE,
)
# What _LABELLED finds anywhere in a line, lower-cased: a plain substring search is many times
# faster than the pattern. Case-insensitively, the letters of these notices match only their
# upper- and lower-case forms, except "i" (also "ı", "İ") and "s" (also "ſ"), whose other
# forms lower-case to something else: a text that holds one is tested line by line.
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


def has_attribution(text: str, lowered: str | None = None) -> bool:
    """Whether any line of *text* is an attribution line. *lowered* is ``text.lower()``,
    when the caller has it already."""
    if lowered is None:
        lowered = text.lower()
    if any(form in text for form in _OTHER_CASE_FORMS) or any(
        notice in lowered for notice in _NOTICES
    ):
        # Rare: the notice may be in a long line, which is content; every line is tested.
        return any(map(is_attribution, text.split("\n")))
    if is_attribution(text.partition("\n")[0]):
        return True
    for match in _LINE_START.finditer(text):
        # A match may run on over line breaks (``\W*``) and so hide one that starts on a
        # later line: every line it touches is tested.
        end = text.find("\n", match.end())
        if any(map(is_attribution, text[match.start() + 1 : None if end < 0 else end].split("\n"))):
            return True
    return False


def strip_attribution(text: str, lowered: str | None = None) -> str:
    """*text* without its attribution lines (*text* itself when it has none). *lowered*
    is ``text.lower()``, when the caller has it already."""
    if not has_attribution(text, lowered):
        return text
    lines = text.split("\n")
    kept = [line for line in lines if not is_attribution(line)]
    return text if len(kept) == len(lines) else "\n".join(kept)
