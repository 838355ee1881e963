"""Look-alike letters of Latin, Cyrillic and Greek, folded inside words that mix them.

NFKC leaves Cyrillic ``а``, ``е``, ``о`` apart from Latin ``a``, ``e``, ``o``: a copy whose
Latin letters were swapped for look-alikes reads the same to a person and shares no word
with its original. A word written in one script is left alone (a Russian or Greek text
keeps every letter); a word that mixes scripts is written in one, the script of its
letters that have no look-alike (``pаyment`` with a Cyrillic ``а`` is ``payment``; ``мoлoкo``
with Latin ``o`` is ``молоко``), or in Latin when every letter has one. Once a text holds
such a word, a word made only of look-alikes between words of the other script is written
in theirs too (the Cyrillic word ``а`` between English words is ``a``). This is Unicode's
"mixed-script confusable" case (UTS #39), restricted to the three alphabets whose capitals
and small letters are drawn alike.
"""

from __future__ import annotations

import re

# Cyrillic and Greek letters drawn as a Latin letter, by the Latin letter.
_LOOK_ALIKES = {
    "a": "аα",
    "c": "сϲ",
    "d": "ԁ",
    "e": "е",
    "h": "һ",
    "i": "іι",
    "j": "ј",
    "k": "κ",
    "l": "ӏ",
    "o": "оο",
    "p": "рρ",
    "q": "ԛ",
    "s": "ѕ",
    "v": "ν",
    "w": "ԝ",
    "x": "хχ",
    "y": "у",
    "A": "АΑ",
    "B": "ВΒ",
    "C": "С",
    "E": "ЕΕ",
    "H": "НΗ",
    "I": "ІΙ",
    "J": "Ј",
    "K": "КΚ",
    "M": "МΜ",
    "N": "Ν",
    "O": "ОΟ",
    "P": "РΡ",
    "S": "Ѕ",
    "T": "ТΤ",
    "X": "ХΧ",
    "Y": "УΥ",
    "Z": "Ζ",
}
_TO_LATIN = str.maketrans(
    {other: latin for latin, others in _LOOK_ALIKES.items() for other in others}
)
# Latin look-alikes written in Cyrillic (the first Cyrillic letter of each).
_TO_CYRILLIC = str.maketrans(
    {
        latin: next(c for c in others if "\u0400" <= c <= "\u052f")
        for latin, others in _LOOK_ALIKES.items()
        if any("\u0400" <= c <= "\u052f" for c in others)
    }
)
_SHARED = frozenset(_LOOK_ALIKES) | {c for others in _LOOK_ALIKES.values() for c in others}

_OTHER_SCRIPT = re.compile("[\u0370-\u03ff\u0400-\u052f]")
_LATIN = "A-Za-z\u00c0-\u024f"
_CYRILLIC_GREEK = "\u0370-\u03ff\u0400-\u052f"
_ANY_LATIN = re.compile(f"[{_LATIN}]")
_ANY_CYRILLIC = re.compile("[\u0400-\u052f]")
# Cyrillic and Greek look-alikes; Latin letters with a Cyrillic look-alike.
_ALIKE = "".join(sorted(_SHARED - set(_LOOK_ALIKES)))
_LATIN_ALIKE = "".join(sorted(chr(c) for c in _TO_CYRILLIC))
_CYRILLIC = "\u0400-\u052f"
#: Characters between two words looked over, at most, for a word's neighbours.
_NEAR = 8
_LETTER = "[^\\W\\d_]"
_GAP = f"[\\W_]{{1,{_NEAR}}}"
# A word made only of look-alikes (group 1) after or before a word of the other script:
# each search starts at words' first letters and reads a word and a gap at most.
_BESIDE = (
    re.compile(f"(?<!{_LETTER})[{_LATIN}]{_LETTER}*{_GAP}([{_ALIKE}]+)(?!{_LETTER})"),
    re.compile(f"(?<!{_LETTER})([{_ALIKE}]+){_GAP}{_LETTER}*[{_LATIN}]"),
    re.compile(f"(?<!{_LETTER})[{_CYRILLIC}]{_LETTER}*{_GAP}([{_LATIN_ALIKE}]+)(?!{_LETTER})"),
    re.compile(f"(?<!{_LETTER})([{_LATIN_ALIKE}]+){_GAP}{_LETTER}*[{_CYRILLIC}]"),
)
# A Latin letter beside a Cyrillic or Greek one: every word that mixes them has one such
# pair (its letters are contiguous). Two characters, so the search never backtracks.
_MIXED_PAIR = re.compile(f"[{_LATIN}][{_CYRILLIC_GREEK}]|[{_CYRILLIC_GREEK}][{_LATIN}]")


def fold_confusables(text: str) -> str:
    """*text* with each word that mixes Latin with Cyrillic or Greek letters written in one
    script (see the module's docstring); *text* itself when no word does."""
    # Most texts hold no Cyrillic or Greek letter; most of the others no mixed word.
    if not _OTHER_SCRIPT.search(text):
        return text
    folded = _fold_mixed_words(text)
    if folded is text:  # no word mixed scripts: words of look-alikes alone are words
        return text
    text = folded
    spans = sorted({m.span(1) for pattern in _BESIDE for m in pattern.finditer(text)})
    if not spans:
        return text
    pieces, done = [], 0
    for start, end in spans:
        pieces += [text[done:start], _among_others(text, start, end)]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _fold_mixed_words(text: str) -> str:
    pieces = []
    done = 0
    for found in _MIXED_PAIR.finditer(text):
        start = found.start()
        if start < done:
            continue  # within the word folded last
        while start > done and text[start - 1].isalpha():
            start -= 1
        end = found.end()
        while end < len(text) and text[end].isalpha():
            end += 1
        pieces += [text[done:start], _one_script(text[start:end])]
        done = end
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _among_others(text: str, start: int, end: int) -> str:
    """The word ``text[start:end]``, all look-alikes (Cyrillic ``а`` for the word ``a``),
    in the script of the words on either side when both are of that other script (a
    Russian ``а`` between Russian words stays)."""
    word = text[start:end]
    neighbours = [w for w in (_neighbour(text, start, -1), _neighbour(text, end, 1)) if w]
    if not neighbours:
        return word
    if _ANY_LATIN.search(word):
        if all(_is_cyrillic(w) for w in neighbours):
            return word.translate(_TO_CYRILLIC)
    elif all(_is_latin(w) for w in neighbours):
        return word.translate(_TO_LATIN)
    return word


def _neighbour(text: str, at: int, step: int) -> str:
    """The word before *at* (*step* -1) or from *at* on (*step* 1), within a few
    characters; ``""`` if none."""
    i = at - 1 if step < 0 else at
    for _ in range(_NEAR):  # over spaces and punctuation
        if not 0 <= i < len(text) or text[i].isalpha():
            break
        i += step
    j = i
    while 0 <= j < len(text) and text[j].isalpha():
        j += step
    return text[j + 1 : i + 1] if step < 0 else text[i:j]


def _is_latin(word: str) -> bool:
    return bool(_ANY_LATIN.search(word)) and not _OTHER_SCRIPT.search(word)


def _is_cyrillic(word: str) -> bool:
    return bool(_ANY_CYRILLIC.search(word)) and not _ANY_LATIN.search(word)


def _one_script(word: str) -> str:
    own = [c for c in word if c not in _SHARED]
    if own and all(_OTHER_SCRIPT.match(c) for c in own if c.isalpha()):
        if all("\u0400" <= c <= "\u052f" for c in own if c.isalpha()):
            return word.translate(_TO_CYRILLIC)
        return word  # Greek with Latin: no single look-alike table; left as written
    return word.translate(_TO_LATIN)
