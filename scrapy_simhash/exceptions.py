"""Exceptions raised by scrapy-simhash.

Every error the package raises on purpose derives from :class:`SimhashError`, so
``except SimhashError`` catches them all::

    SimhashError
    ├── ConfigurationError        a parameter or setting has a value that cannot work
    ├── ExportFormatError         a file given to import is not an export, or is damaged
    ├── FeedError                 a feed file (scrapy-simhash dedup) cannot be read or written
    ├── SourceError               a page to check (file, URL) cannot be read
    ├── SetupFailed               a crawl was stopped before it started (a setting or the
    │                             index cannot work; the reason is logged)
    └── SimhashIndexError         anything about an index
        ├── IndexNotFound         the index does not exist and creating it was not allowed
        ├── IndexParameterMismatch  stored parameters differ from the requested ones
        ├── NotAnIndex            the location holds something else (another app's database,
        │                         a file that is not SQLite, foreign Redis keys)
        ├── IndexCorrupt          the index is damaged (truncated, malformed)
        ├── IndexUnavailable      the index cannot be reached or written right now
        │                         (locked for too long, read-only, disk full, server down)
        └── UnsupportedIndexURI   no backend for that URI scheme, or a malformed URI

Messages name the file or server (never a password) and say what to do.

:class:`Interrupted` is no error but a :class:`KeyboardInterrupt` that says how far a long
maintenance command got before Ctrl-C stopped it.
"""

from __future__ import annotations


class SimhashError(Exception):
    """Base class of every error raised by scrapy-simhash."""


class ConfigurationError(SimhashError, ValueError):
    """A parameter or setting has a value that cannot work."""


class ExportFormatError(SimhashError, ValueError):
    """A file given to import is not a scrapy-simhash export, or is damaged."""


class FeedError(SimhashError, ValueError):
    """A feed file cannot be read or written."""


class SourceError(SimhashError, ValueError):
    """A page given to check or explain (a file, a URL) cannot be read."""


class SetupFailed(SimhashError):
    """A crawl component could not start: a setting or the index cannot work. Raised from
    ``from_crawler`` or ``open_spider``, before the spider opens, so that ``scrapy crawl``
    exits with status 1 and no feed file is opened (or truncated). The reason was logged
    in one ERROR line; the original error is the ``__cause__``."""


class SimhashIndexError(SimhashError):
    """Base class of index errors."""


class IndexNotFound(SimhashIndexError):
    """The index does not exist and creating it was not allowed."""


class IndexParameterMismatch(SimhashIndexError):
    """The index was built with other parameters than the ones requested."""


class NotAnIndex(SimhashIndexError):
    """The location holds something that is not a scrapy-simhash index."""


class IndexCorrupt(SimhashIndexError):
    """The index is damaged."""


class IndexUnavailable(SimhashIndexError):
    """The index cannot be reached or written right now."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a long maintenance command (expire, import) of a SQLite index,
    which commits in batches: *done* pages were removed or added and committed, the batch
    under way was rolled back, and the index is consistent. Running the command again goes
    on where it stopped."""

    def __init__(self, done: int) -> None:
        super().__init__(done)
        self.done = done


class UnsupportedIndexURI(SimhashIndexError, ConfigurationError):
    """No backend handles the URI, or the URI is malformed."""
