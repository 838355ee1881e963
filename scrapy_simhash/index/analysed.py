"""How a stored page was analysed: the record an index keeps beside each page, so that a
diagnostic reads the page as the crawl did instead of guessing.

A record is the item fields whose text was analysed (in order), the extractor that read
their HTML and its version, and a 64-bit hash of the text analysed. Pages of one crawl
share the first three: an index stores each distinct combination once (a *how*, named
by a small id) and per page only the id and the hash, about 16 bytes.

No Scrapy import.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RESPONSE_FIELD", "Analysed", "from_how", "how_of"]

#: The one "field" of a page the middleware checked: the response's text, as it is.
RESPONSE_FIELD = "(response)"
#: Marks a field that held nothing (``-summary``): its line is empty in the text analysed.
EMPTY_MARK = "-"
#: Separates the parts of a how as stored (field names never hold it: see :func:`how_of`).
_SEPARATOR = "\x1f"


@dataclass(frozen=True)
class Analysed:
    """How the text of a stored page was read."""

    #: The item's text fields (``SIMHASH_TEXT_FIELDS``) in the order their texts were
    #: joined, a field that held nothing marked (``-summary``, :data:`EMPTY_MARK`); for
    #: a page the middleware checked, :data:`RESPONSE_FIELD`.
    fields: tuple[str, ...]
    #: The extractor that read the HTML fields (``SIMHASH_EXTRACTOR``).
    extractor: str
    #: Its version: the fingerprint's terms version for ``builtin``, the package's
    #: version for ``trafilatura``; ``""`` when there is none.
    version: str
    #: A 64-bit hash of the text analysed (normalised, cut to ``max_length``): equal
    #: hashes, the same text.
    text_hash: int

    @property
    def text_fields(self) -> tuple[str, ...]:
        """The field names, unmarked: the ``SIMHASH_TEXT_FIELDS`` of the crawl."""
        return tuple(name.removeprefix(EMPTY_MARK) for name in self.fields)

    @property
    def held(self) -> tuple[str, ...]:
        """The fields that held text."""
        return tuple(name for name in self.fields if not name.startswith(EMPTY_MARK))

    @property
    def how(self) -> str:
        """The parts pages of a crawl share, as one string (see :func:`how_of`)."""
        return how_of(self.fields, self.extractor, self.version)

    def describe(self) -> str:
        """In words, for a diagnostic's output."""
        if self.fields == (RESPONSE_FIELD,):
            fields = "the response's text"
        else:
            empty = [name for name in self.text_fields if name not in self.held]
            fields = "fields " + (", ".join(self.held) or "none")
            fields += f" (empty: {', '.join(empty)})" if empty else ""
        version = f" {self.version}" if self.version else ""
        return f"{fields}; {self.extractor}{version} extractor"


def how_of(fields: tuple[str, ...], extractor: str, version: str) -> str:
    """*fields*, *extractor* and *version* as the one string an index stores once for all
    the pages that share them."""
    return _SEPARATOR.join((extractor, version, *fields))


def from_how(how: str, text_hash: int) -> Analysed:
    """The record of a page stored as *how* (see :func:`how_of`) and *text_hash*."""
    extractor, version, *fields = how.split(_SEPARATOR)
    return Analysed(tuple(fields), extractor, version, text_hash)
