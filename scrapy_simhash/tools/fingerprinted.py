"""The text the pipeline fingerprints for an item, and why that text: what every
diagnostic (``scrapy-simhash text``, ``check``, ``explain``, ``calibrate``) computes on, so
that they say what the crawl did.

The pipeline reads ``SIMHASH_TEXT_FIELDS`` of an item, one after the other; each HTML field
is reduced by ``SIMHASH_EXTRACTOR`` (which may fall back to a wider text), each other field
is taken as it is. :func:`fingerprinted_text` is that, for an item as a mapping;
:func:`item_from_page` builds the item a page gives when all the diagnostics have is the
page (a file, a URL): its HTML in the first text field that is not a title field, its
``<title>`` in the title field, if the settings name one.

No Scrapy import.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..dedup import fields_text
from ..extract.fields import CROWDED, field_text
from ..extract.main_text import MainText
from ..extract.text import looks_like_html, parse_html

__all__ = [
    "FieldReport",
    "field_reports",
    "fingerprinted_text",
    "item_from_page",
    "item_from_source",
]

#: Field names taken for the page's title when an item is built from a page.
TITLE_FIELDS = frozenset({"title", "headline", "name"})


def fingerprinted_text(item: Mapping[str, Any], config: Any) -> str:
    """The text the pipeline fingerprints for *item* under *config* (a
    :class:`~scrapy_simhash.settings.SimhashSettings`): its text fields, HTML reduced by the
    configured extractor. A :class:`~scrapy_simhash.extract.main_text.MainText` with ``fallback``
    set when an HTML field's main text was not found."""
    values = [item.get(name) for name in config.text_fields]
    return fields_text(values, config.html_extractor)


@dataclass(frozen=True)
class FieldReport:
    """What one text field gave: its name, how it was read, and its text."""

    name: str
    #: ``missing``, ``text`` (taken as it is) or ``html`` (reduced by the extractor).
    how: str
    text: str
    #: The extractor's fallback (see :class:`~scrapy_simhash.extract.main_text.MainText`).
    fallback: str | None = None


def field_reports(item: Mapping[str, Any], config: Any) -> list[FieldReport]:
    """For each of ``config.text_fields``, what the pipeline read from it (the parts of
    :func:`fingerprinted_text`, joined by line breaks there)."""
    reports = []
    for name in config.text_fields:
        value = item.get(name)
        if value is None or value == "" or value == [] or value == ():
            reports.append(FieldReport(name, "missing", ""))
            continue
        fallbacks: list[str] = []
        text = field_text(value, extractor=config.html_extractor, fallbacks=fallbacks)
        html = isinstance(value, str) and looks_like_html(value[:4096])
        reason = next((r for r in fallbacks if r and r != CROWDED), None)
        reports.append(FieldReport(name, "html" if html else "text", str(text), reason or None))
    return reports


def item_from_page(html: str, url: str, config: Any) -> dict[str, Any]:
    """The item a spider yields for a page as the settings read it: the key field holds
    *url*; a title field named in ``SIMHASH_TEXT_FIELDS`` (``title``, ``headline``,
    ``name``) the page's headline (:func:`page_title`); the other text fields the page
    (its HTML, or the text as it is)."""
    item: dict[str, Any] = {config.key_field: url}
    titles = [name for name in config.text_fields if name in TITLE_FIELDS]
    others = [name for name in config.text_fields if name not in TITLE_FIELDS]
    if not others:  # only title fields: the page goes in the first
        others, titles = titles[:1], titles[1:]
    for name in others:
        item[name] = html
    if titles:
        title = page_title(html) if looks_like_html(html) else ""
        for name in titles:
            item[name] = title
    return item


def page_title(html: str) -> str:
    """The page's headline as a careful spider takes it for a title field: the text of the
    first ``h1`` inside an ``article``, else of the first ``h1``, else of the
    ``<title>`` (which often carries a per-site suffix), whitespace collapsed; ``""`` if
    none."""
    root = parse_html(html)
    if root is None:
        return ""
    for path in (".//article//h1", ".//h1", ".//title"):
        found = root.find(path)
        if found is not None:
            text = " ".join("".join(found.itertext()).split())
            if text:
                return text
    return ""


def item_from_source(value: str, config: Any, url: str = "") -> dict[str, Any]:
    """The item behind *value*, what a diagnostic was given: a JSON object is the item
    itself (as a feed or ``scrapy crawl -O items.jsonl`` wrote it); anything else is a
    page, read as :func:`item_from_page` says."""
    stripped = value.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            item = json.loads(stripped)
        except ValueError:
            item = None
        if isinstance(item, dict):
            return item
    return item_from_page(value, url, config)


def fallback_of(text: str) -> str | None:
    """The fallback reason carried by *text* (see :class:`MainText`), else ``None``."""
    return text.fallback if isinstance(text, MainText) else None
