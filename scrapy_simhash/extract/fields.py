"""What the package reads from an item: its key, the text of its fields, and whether it
has the configured fields.

No Scrapy import: items are mappings (a dict, or Scrapy's ``ItemAdapter``), so that the
pipeline and ``scrapy-simhash dedup`` name items, read their fields and judge them the same
way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from .extractors import visible_text
from .text import looks_like_html

__all__ = ["FieldCensus", "ItemLike", "field_text", "item_key", "plain_value"]


class ItemLike(Protocol):
    def __iter__(self) -> Iterator[str]: ...

    def get(self, name: str, default: Any = None) -> Any: ...


def item_key(value: Any, number: int, key_field: str, where: str) -> str:
    """The name an item is logged and stored under: its *key_field* value, else a name
    that tells items apart (*number*: its position; *where*: the crawl or the feed), so
    that a log never says that one nameless item duplicates another nameless item."""
    if _missing(value):
        return f"(item {number} without {key_field}, {where})"
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:  # 10**5000, a __str__ that raises, a list nested too deep to print
        return f"(item {number} with a {key_field} that cannot be printed, {where})"


def _missing(value: Any) -> bool:
    """Whether a field holds nothing: ``None``, or an empty text or list. Decided by type,
    never by ``==``, which a numpy array or any object can answer with an error."""
    if value is None:
        return True
    if isinstance(value, str | bytes | list | tuple):
        return not value
    return False


@dataclass
class FieldCensus:
    """Counts, over the items seen, how many lacked each configured field and which
    fields they had instead, so that settings naming fields the items do not have are
    reported (:meth:`problem`) rather than silently matching nothing."""

    text_fields: tuple[str, ...]
    key_field: str
    items: int = 0
    #: Configured field -> items where it was absent or empty.
    missing: Counter[str] = field(default_factory=Counter)
    #: Field name -> items that had it, with a text value (str).
    present: Counter[str] = field(default_factory=Counter)
    #: Field name -> items where it held something like a URL.
    url_like: Counter[str] = field(default_factory=Counter)

    def add(self, item: ItemLike) -> list[str]:
        """Count *item*; return the configured fields it lacks."""
        self.items += 1
        lacking = []
        for name in (*self.text_fields, self.key_field):
            if _missing(item.get(name)):
                self.missing[name] += 1
                lacking.append(name)
        for name in item:
            value = item.get(name)
            if isinstance(value, str) and value.strip():
                self.present[name] += 1
                if value.startswith(("http://", "https://", "file://")):
                    self.url_like[name] += 1
        return lacking

    def _mostly_missing(self, name: str) -> bool:
        return self.missing[name] * 2 > self.items

    def left_out(self, lacking: list[str]) -> list[str]:
        """Of the fields an item lacks (*lacking*, from :meth:`add`), the text fields that
        most items so far lacked too: the settings name a field the items do not have."""
        return [n for n in lacking if n in self.text_fields and self._mostly_missing(n)]

    def problem(self) -> str | None:
        """A warning when most items lacked a configured field: what happens to them and
        which setting to change to what; ``None`` when the fields were there."""
        if not self.items:
            return None
        absent_text = [name for name in self.text_fields if self._mostly_missing(name)]
        key_absent = self._mostly_missing(self.key_field)
        if not absent_text and not key_absent:
            return None
        have = f"their fields: {_names(n for n, _ in self.present.most_common()) or 'none'}"
        parts = []
        if absent_text:
            if len(absent_text) == len(self.text_fields):
                effect = "nothing of theirs is fingerprinted and they are kept unchecked"
            else:
                kept = [n for n in self.text_fields if n not in absent_text]
                effect = (
                    f"they are checked on {_names(kept)} alone, and those whose "
                    f"{_names(kept, ' and ')} alone is too short to be a page are let "
                    "through unchecked (simhash/skipped/fields)"
                )
            suggested = self._text_suggestion()
            parts.append(
                f"SIMHASH_TEXT_FIELDS={list(self.text_fields)!r}: {self._count(absent_text)} "
                f"of {self.items} items have no {_names(absent_text, ' or ')} ({have}), so "
                f"{effect}. Set SIMHASH_TEXT_FIELDS to the fields that hold the page's text"
                + (f", e.g. SIMHASH_TEXT_FIELDS = {suggested!r}" if suggested else "")
            )
        if key_absent:
            urls = [n for n, c in self.url_like.most_common() if c * 2 > self.items]
            parts.append(
                f"SIMHASH_KEY_FIELD={self.key_field!r}: {self.missing[self.key_field]} of "
                f"{self.items} items have no {self.key_field!r}"
                + ("" if absent_text else f" ({have})")
                + ", so they are named by their position in the log and the index. "
                + (
                    f"Set SIMHASH_KEY_FIELD = {urls[0]!r}"
                    if urls
                    else "Set SIMHASH_KEY_FIELD to the field that holds the page's URL"
                )
            )
        return ". ".join(parts)

    def _count(self, names: list[str]) -> int:
        return max(self.missing[name] for name in names)

    def _text_suggestion(self) -> list[str]:
        """Fields most items had with text in them, but for the key and URL-like ones."""
        urls = {n for n, c in self.url_like.items() if c * 2 > self.items}
        return [
            name
            for name, count in self.present.most_common()
            if count * 2 > self.items and name != self.key_field and name not in urls
        ]


def _names(names: Iterable[str], sep: str = ", ") -> str:
    return sep.join(repr(name) for name in names)


#: Characters of one item field read at most (HTML included): a hostile 50 MB page of
#: nested tags takes lxml 5 s and 700 MB; 10 MB of it about 1 s.
MAX_FIELD_LENGTH = 10_000_000
#: Levels of lists in one item field followed at most: deeper ones, and a list that holds
#: itself, are left out, so that a hostile item cannot exhaust the stack.
MAX_FIELD_DEPTH = 100


#: Attributes of one element parsed at most: libxml2 compares each attribute with those
#: before it, so one element with 40,000 attributes (430 KB) takes 80 s to parse, and
#: 300,000 of them took 207 s. At 1,000, a 9 MB page of such elements parses as fast as
#: 9 MB of elements with 10 attributes each.
MAX_ATTRIBUTES = 1000
#: Tags shorter than this cannot hold MAX_ATTRIBUTES attributes: not looked into.
_SHORT_TAG = 2 * MAX_ATTRIBUTES


#: Added to *fallbacks* by :func:`field_text` when it cut crowded tags out of a field.
CROWDED = "crowded"


def cut_crowded_tags(html: str) -> tuple[str, bool]:
    """*html* with the attributes of any element that has more than
    :data:`MAX_ATTRIBUTES` of them removed (the element stays), and whether any was.
    Linear in the length of *html*."""
    parts = html.split(">")
    crowded = []
    # The last part is closed by no '>': text (a page cut inside a long text node), not a tag.
    for number, part in enumerate(parts[:-1]):
        if len(part) <= _SHORT_TAG:
            continue
        start = part.rfind("<")
        if start < 0 and not _in_open_quote(parts, number):
            continue  # text after a '>' written in text ("a > b"), which HTML allows
        tag = part[start:] if start >= 0 else part  # no '<': after a '>' in a quoted value
        if len(tag.split(maxsplit=MAX_ATTRIBUTES)) > MAX_ATTRIBUTES:
            crowded.append((number, start))
    if not crowded:
        return html, False
    for number, start in crowded:
        part = parts[number]
        parts[number] = part[:start] + part[start:].split(maxsplit=1)[0] if start >= 0 else ""
    return ">".join(parts), True


#: Parts looked back through for the '<' that opened a tag, by :func:`_in_open_quote`.
_LOOK_BACK = 64


def _in_open_quote(parts: list[str], number: int) -> bool:
    """Whether ``parts[number]`` (which holds no '<') follows a '>' written inside a quoted
    attribute value: the text since the last '<' before it leaves a quote open. Looks back
    :data:`_LOOK_BACK` parts at most (further back, it answers that it is)."""
    since = []
    for back in range(number - 1, max(number - 1 - _LOOK_BACK, -1), -1):
        part = parts[back]
        start = part.rfind("<")
        since.append(part[start:] if start >= 0 else part)
        if start >= 0:
            tag = ">".join(reversed(since))
            return tag.count('"') % 2 == 1 or tag.count("'") % 2 == 1
    return number > 0


def field_text(
    value: object,
    *,
    remove_boilerplate: bool = True,
    extractor: Callable[[str], str] | None = None,
    fallbacks: list[str] | None = None,
) -> str:
    """Return the text of one item field: HTML reduced to its visible text, bytes decoded
    as UTF-8 (undecodable bytes replaced), lists joined line by line, ``None`` as ``""``.

    *extractor*, if given, reduces HTML instead of :func:`visible_text` (see
    :mod:`scrapy_simhash.extract.extractors`); for each HTML field so reduced, the reason
    it fell back to a wider text than the main text (``""`` when it did not) is appended
    to *fallbacks*. Lists nested deeper than
    :data:`MAX_FIELD_DEPTH`, and lists that hold themselves, are left out below that
    point. Elements with more than :data:`MAX_ATTRIBUTES` attributes lose them before
    parsing (:data:`CROWDED` is then added to *fallbacks*)."""
    return _field_text(value, remove_boilerplate, extractor, fallbacks, ())


def _field_text(
    value: object,
    remove_boilerplate: bool,
    extractor: Callable[[str], str] | None,
    fallbacks: list[str] | None,
    within: tuple[int, ...],
) -> str:
    """:func:`field_text`, *within* the lists (their ids) that hold *value*."""
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        value = bytes(value[:MAX_FIELD_LENGTH]).decode("utf-8", errors="replace")
    if isinstance(value, str):
        # Bounds the time and memory one field can take before any parsing; the text is
        # cut again, shorter, by SIMHASH_MAX_TEXT_LENGTH.
        value = value[:MAX_FIELD_LENGTH]
        if looks_like_html(value):
            value, cut = cut_crowded_tags(value)
            if cut and fallbacks is not None:
                fallbacks.append(CROWDED)
            return _html_text(value, remove_boilerplate, extractor, fallbacks)
        return value
    if isinstance(value, list | tuple):
        if len(within) >= MAX_FIELD_DEPTH or id(value) in within:
            return ""
        within = (*within, id(value))
        return "\n".join(
            _field_text(v, remove_boilerplate, extractor, fallbacks, within)
            for v in value
            if v is not None
        )
    try:
        return str(value)
    except Exception:  # a dict nested thousands of levels deep, 10**5000, a bad __str__
        return ""


def _html_text(
    html: str,
    remove_boilerplate: bool,
    extractor: Callable[[str], str] | None,
    fallbacks: list[str] | None,
) -> str:
    if extractor is not None:
        text = extractor(html)
        if fallbacks is not None:
            # "" for a main text found: the text came from HTML all the same.
            fallbacks.append(getattr(text, "fallback", None) or "")
        return text
    return visible_text(html, remove_boilerplate=remove_boilerplate)


def plain_value(value: Any, within: tuple[int, ...] = ()) -> Any:
    """*value* in a form that pickles to a worker process and gives the same text there
    (cut where :func:`field_text` would cut it, lists nested as deep as it follows them and
    no deeper, so that no more is sent)."""
    if value is None:
        return value
    if isinstance(value, str | bytes | bytearray):
        return value[:MAX_FIELD_LENGTH]
    if isinstance(value, list | tuple):
        if len(within) >= MAX_FIELD_DEPTH or id(value) in within:
            return []
        within = (*within, id(value))
        return [plain_value(v, within) for v in value]
    try:
        return str(value)
    except Exception:  # as field_text: a dict too deeply nested to print, 10**5000
        return ""
