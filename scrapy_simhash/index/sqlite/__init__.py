"""The SQLite backend: one file, one table per block (:mod:`.tables`), its schema and
versions (:mod:`.layout`), opening and locking the file (:mod:`.file`), maintenance
(:mod:`.maintenance`), and :class:`SqliteIndex` (:mod:`.index`)."""

from .index import SqliteIndex

__all__ = ["SqliteIndex"]
