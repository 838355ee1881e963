"""sqlite3's errors as ours: what each of SQLite's messages means for an index file, and
what to do about it.

Apart from :mod:`~.index`: a table of SQLite's failures (locks, damage, permissions, a
full or failing disk), read only when something failed, beside the checks that never
need it.
"""

from __future__ import annotations

from pathlib import Path

from ...exceptions import IndexCorrupt, IndexUnavailable, SimhashIndexError


def translate(error: BaseException, path: Path, timeout: float, doing: str) -> SimhashIndexError:
    """*error*, raised by sqlite3 while *doing* something with the index file at *path*
    (writes waiting *timeout* seconds for a lock), as ours, naming the file and what to
    do."""
    message = str(error)
    lowered = message.lower()
    where = f"the index {path} ({doing}: {message})"
    if "locked" in lowered or "busy" in lowered:
        return IndexUnavailable(
            f"Timed out after {timeout:g} s waiting for another process to release {where}"
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return IndexCorrupt(
            f"{where[0].upper()}{where[1:]} is damaged. It was left untouched: restore "
            "it from a backup (scrapy-simhash export/import) or use another file"
        )
    if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
        return IndexUnavailable(
            f"Cannot write {where}: make the file and its directory writable (SQLite "
            "also writes -wal and -shm files beside it)"
        )
    if "disk is full" in lowered:
        return IndexUnavailable(
            f"Cannot write {where}: free some space on its disk; nothing committed was lost"
        )
    if "disk i/o" in lowered:
        return IndexUnavailable(
            f"Cannot read or write {where}: check the disk and the file system it is "
            "on (full, removed, failing?); nothing committed was lost"
        )
    return IndexUnavailable(f"SQLite failed on {where}")
