"""Offline deduplication of exported feeds (JSON lines, JSON, CSV as Scrapy writes them).

:func:`read_feed` and :func:`write_feed` handle the formats; :func:`dedup_items` runs each
item through a :class:`~scrapy_simhash.dedup.Deduplicator`, exactly as the pipeline does in
a crawl (same text fields, same verdicts), and yields the verdicts.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..dedup import Deduplicator, Verdict, fields_text
from ..exceptions import FeedError
from ..extract.fields import item_key
from ..index.base import NearDuplicateIndex

__all__ = [
    "FEED_FORMATS",
    "FeedDedup",
    "FeedError",
    "dedup_items",
    "feed_format",
    "read_feed",
    "record_verdicts",
    "spreadsheet_safe",
    "write_feed",
]

#: First characters that make a spreadsheet read a CSV cell as a formula (or, for tab and
#: carriage return, that some spreadsheets strip before doing so).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    """*value* for a CSV cell that a spreadsheet will not run: a text starting with one of
    :data:`FORMULA_STARTS` gets a leading ``'`` (as OWASP recommends against CSV
    injection); anything else is returned unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


#: File suffix -> format.
FEED_FORMATS = {
    ".jl": "jsonl",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
}


def feed_format(path: str | os.PathLike[str]) -> str:
    suffix = Path(path).suffix.lower()
    try:
        return FEED_FORMATS[suffix]
    except KeyError:
        raise FeedError(
            f"{os.fspath(path)}: unknown feed format {suffix or '(no suffix)'!r}; use one of "
            f"{', '.join(sorted(FEED_FORMATS))}"
        ) from None


def read_feed(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read every item of a feed. Raises :class:`FeedError` naming the line of a bad one."""
    fmt = feed_format(path)
    name = os.fspath(path)
    try:
        with open(path, encoding="utf-8", newline="" if fmt == "csv" else None) as f:
            if fmt == "csv":
                return _read_csv(f, name)
            if fmt == "json":
                try:
                    items = json.load(f)
                except json.JSONDecodeError as e:
                    raise FeedError(
                        f"{name} is not valid JSON (line {e.lineno}: {e.msg})"
                    ) from None
                except ValueError as e:  # a number of more than 4,300 digits
                    raise FeedError(f"{name} holds JSON Python cannot read ({e})") from None
                if not isinstance(items, list):
                    raise FeedError(
                        f"{name} holds a JSON {type(items).__name__}, not a list of items"
                    )
                return items
            items = []
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise FeedError(f"{name} line {number} is not valid JSON ({e.msg})") from None
                except ValueError as e:  # a number of more than 4,300 digits
                    raise FeedError(
                        f"{name} line {number} holds JSON Python cannot read ({e})"
                    ) from None
            return items
    except OSError as e:
        raise FeedError(f"Cannot read {name}: {e.strerror}") from None
    except RecursionError:
        raise FeedError(
            f"{name} holds JSON nested too deeply to read (more than about "
            f"{sys.getrecursionlimit()} levels); items are objects of fields"
        ) from None
    except UnicodeDecodeError as e:
        raise FeedError(f"{name} is not UTF-8 text ({e.reason} at byte {e.start})") from None


#: The longest CSV field read: Scrapy writes a page's whole HTML in one field, well over
#: the csv module's default of 128 KB.
MAX_CSV_FIELD = 1 << 30


def _read_csv(f, name: str) -> list[dict[str, Any]]:
    previous = csv.field_size_limit(MAX_CSV_FIELD)
    try:
        return [dict(row) for row in csv.DictReader(f)]
    except csv.Error as e:
        raise FeedError(f"{name} is not a CSV feed Python can read ({e})") from None
    finally:
        csv.field_size_limit(previous)


def write_feed(
    path: str | os.PathLike[str],
    items: Iterable[dict[str, Any]],
    *,
    raw_csv: bool = False,
    fields: Iterable[str] = (),
) -> int:
    """Write *items* in the format of *path*'s suffix; return how many. CSV cells are made
    :func:`spreadsheet_safe` unless *raw_csv*; a CSV's header starts with *fields*, so
    that a file of no items still has one."""
    fmt = feed_format(path)
    items = list(items)
    newline = "" if fmt == "csv" else None
    try:
        # A lone surrogate (from a "\ud800" escape in the feed read) is written back as
        # that escape, which JSON reads again as the same string.
        with open(path, "w", encoding="utf-8", errors="backslashreplace", newline=newline) as f:
            if fmt == "csv":
                names: dict[str, None] = dict.fromkeys(fields)
                for item in items:
                    names.update(dict.fromkeys(item))
                writer = csv.DictWriter(f, fieldnames=list(names))
                writer.writeheader()
                for item in items:
                    writer.writerow(
                        item if raw_csv else {k: spreadsheet_safe(v) for k, v in item.items()}
                    )
            elif fmt == "json":
                json.dump(items, f, ensure_ascii=False, indent=0)
                f.write("\n")
            else:
                for item in items:
                    f.write(json.dumps(item, ensure_ascii=False) + "\n")
    except OSError as e:
        raise FeedError(f"Cannot write {os.fspath(path)}: {e.strerror}") from None
    return len(items)


@dataclass(frozen=True)
class ItemVerdict:
    number: int  #: 1-based position of the item in the feed
    key: str
    item: Any
    verdict: Verdict


def dedup_items(
    items: Iterable[Any],
    dedup: Deduplicator,
    *,
    text_fields: Iterable[str],
    key_field: str,
    extractor: Callable[[str], str] | None = None,
    where: str = "the feed",
) -> Iterator[ItemVerdict]:
    """Check each item's text (the *text_fields*, HTML reduced by *extractor*, see
    :mod:`scrapy_simhash.extract.extractors`) against the index, in order; the first of a group of
    near-duplicates is kept (stored), the others match it. The text and the name of an
    item without *key_field* are made as the pipeline makes them (*where*: the feed's
    name, in those names)."""
    text_fields = tuple(text_fields)
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise FeedError(f"item {number} is a {type(item).__name__}, not an object")
        text = fields_text([item.get(name) for name in text_fields], extractor)
        key = item_key(item.get(key_field), number, key_field, where)
        yield ItemVerdict(number, key, item, dedup.check_text(text, key))


#: The columns of ``dedup``'s duplicates report, in order.
REPORT_FIELDS = ("item", "key", "duplicate_of", "distance", "match")


@dataclass
class FeedDedup:
    """The outcome of :func:`record_verdicts`: the items kept, one report row per
    duplicate, and how many texts of each kind were seen."""

    kept: list[Any] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)

    def summary(self) -> dict[str, int]:
        return {
            "items": len(self.kept) + len(self.duplicates),
            "kept": len(self.kept),
            "dropped": len(self.duplicates),
            "dropped_near": sum(d["match"] == "near" for d in self.duplicates),
            "dropped_contained": sum(d["match"] == "contained" for d in self.duplicates),
            "dropped_exact": sum(d["match"] == "exact" for d in self.duplicates),
            "no_text": self.kinds["empty"],
        }


def record_verdicts(verdicts: Iterable[ItemVerdict], index: NearDuplicateIndex) -> FeedDedup:
    """Sort the *verdicts* of :func:`dedup_items` into kept items and report rows, and
    write each drop to *index*'s audit log, as a crawl does."""
    result = FeedDedup()
    for found in verdicts:
        result.kinds[found.verdict.analysis.kind] += 1
        match = found.verdict.match
        if match is None:
            result.kept.append(found.item)
            continue
        exact = found.verdict.analysis.kind == "short"
        unchanged = found.verdict.status == "unchanged"
        index.record_drop(found.key, match, exact=exact, unchanged=unchanged)
        result.duplicates.append(
            {
                "item": found.number,
                "key": found.key,
                "duplicate_of": match.key,
                "distance": match.distance,
                "match": found.verdict.test,
            }
        )
    return result
