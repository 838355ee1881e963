"""Which passages of a copy its kept page holds, and which are its own: for the report's
side-by-side view. A word is *shared* when a run of :data:`RUN` words around it appears
in the other text too (words compared case-folded; CJK characters count as words).
"""

from __future__ import annotations

import html
import re

__all__ = ["RUN", "Segment", "mark", "marked_html", "own_passages", "shared_fraction"]

#: Words in a row that must appear in both texts for them to count as shared.
RUN = 6

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")

#: ``(text, shared)``: a stretch of a text and whether the other text holds it.
Segment = tuple[str, bool]


def _words(text: str) -> list[re.Match[str]]:
    return list(_WORD.finditer(text))


def _runs(words: list[re.Match[str]], n: int) -> set[tuple[str, ...]]:
    folded = [w.group().casefold() for w in words]
    return {tuple(folded[i : i + n]) for i in range(max(0, len(folded) - n + 1))}


def _flags(words: list[re.Match[str]], other: set[tuple[str, ...]], n: int) -> list[bool]:
    folded = [w.group().casefold() for w in words]
    flags = [False] * len(words)
    for i in range(max(0, len(words) - n + 1)):
        if tuple(folded[i : i + n]) in other:
            flags[i : i + n] = [True] * n
    return flags


def _segments(text: str, words: list[re.Match[str]], flags: list[bool]) -> list[Segment]:
    """*text* cut where the flags change (what lies between two words goes with the
    stretch before it)."""
    if not words:
        return [(text, False)] if text else []
    segments: list[Segment] = []
    start, current = 0, flags[0]
    for word, flag in zip(words, flags, strict=True):
        if flag != current:
            segments.append((text[start : word.start()], current))
            start, current = word.start(), flag
    segments.append((text[start:], current))
    return [s for s in segments if s[0]]


def mark(copy: str, kept: str, n: int = RUN) -> tuple[list[Segment], list[Segment]]:
    """The segments of *copy* and of *kept*, each marked shared where the other holds it."""
    copy_words, kept_words = _words(copy), _words(kept)
    copy_flags = _flags(copy_words, _runs(kept_words, n), n)
    kept_flags = _flags(kept_words, _runs(copy_words, n), n)
    return _segments(copy, copy_words, copy_flags), _segments(kept, kept_words, kept_flags)


def marked_html(segments: list[Segment]) -> str:
    """Shared stretches in ``<mark>``, the page's own ones in ``<ins>``."""
    return "".join(
        f"<mark>{html.escape(text)}</mark>" if shared else f"<ins>{html.escape(text)}</ins>"
        for text, shared in segments
    )


def shared_fraction(segments: list[Segment]) -> float:
    """The part of a text's words (by characters) that the other text holds."""
    sizes = [(len("".join(text.split())), shared) for text, shared in segments]
    total = sum(n for n, _ in sizes)
    return sum(n for n, shared in sizes if shared) / total if total else 0.0


def own_passages(segments: list[Segment], limit: int = 5, chars: int = 200) -> list[str]:
    """Up to *limit* of a text's own stretches (those the other text lacks), longest
    first, each cut to *chars* characters."""
    own = [" ".join(text.split()) for text, shared in segments if not shared]
    own = sorted((t for t in own if t), key=len, reverse=True)[:limit]
    return [t if len(t) <= chars else t[: chars - 1] + "…" for t in own]
