"""Opening an index file: its path in a URI, refusing what is not one, creating one
atomically, and waiting out the locks of processes opening the same file at the same
moment. An index file is never deleted, truncated or rebuilt here: whatever cannot be
opened is left untouched."""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ...exceptions import IndexUnavailable, NotAnIndex, UnsupportedIndexURI
from ..base import IndexParameters
from ..uri import path_and_options
from .layout import APPLICATION_ID, SQLITE_HEADER, create_schema, sqlite_file_uri

T = TypeVar("T")


def sqlite_path(uri: str) -> str:
    """The file path of a ``sqlite:///...`` URI or a plain path, exactly as written.

    ``sqlite:///crawl.db`` is ``crawl.db`` (relative), ``sqlite:////data/crawl.db`` is
    ``/data/crawl.db``. Nothing is resolved, expanded or unquoted; a ``?`` belongs to the
    path unless what follows it is options (``name=value&...``).
    """
    path = path_and_options(uri)[0]
    if path.lower().startswith("sqlite:"):
        rest = path[len("sqlite:") :]
        if not rest.startswith("///"):
            raise UnsupportedIndexURI(
                f"{uri!r} is not a SQLite index URI; write sqlite:///relative/path.db or "
                "sqlite:////absolute/path.db"
            )
        path = rest[3:]
    if not path:
        raise UnsupportedIndexURI(f"{uri!r} names no file; write sqlite:///path/to/index.db")
    return path


def check_file(path: Path) -> bool:
    """Refuse what cannot be an index; return whether the file exists."""
    if path.is_dir():
        raise NotAnIndex(f"{path} is a directory; give the path of an index file")
    if not path.exists():
        return False
    try:
        mode = path.stat().st_mode
    except OSError as e:
        raise IndexUnavailable(f"Cannot read the index {path}: {e.strerror}") from None
    if not stat.S_ISREG(mode):
        # Opening a FIFO waits for a writer for ever; a device never ends.
        raise NotAnIndex(
            f"{path} is not a regular file (a FIFO, socket or device); give the path of an "
            "index file"
        )
    try:
        with path.open("rb") as f:
            header = f.read(len(SQLITE_HEADER))
    except OSError as e:
        raise IndexUnavailable(f"Cannot read the index {path}: {e.strerror}") from None
    if not header:
        # New indexes appear complete (see create_file), so an empty file is never
        # one being created: it is an index truncated by a failed copy or a full disk,
        # or a file made by something else.
        raise NotAnIndex(
            f"{path} is empty (0 bytes), so not a scrapy-simhash index; it was left "
            "untouched. Restore the index from a backup, or delete the file to start a "
            "new index there."
        )
    if header != SQLITE_HEADER:
        raise NotAnIndex(
            f"{path} is not a SQLite file, so not a scrapy-simhash index; it was left "
            "untouched. Point SIMHASH_INDEX_URI at another file."
        )
    return True


def create_file(path: Path, parameters: IndexParameters) -> None:
    """Build a new index beside *path* and link it into place: another process sees
    no file or a complete index, never an empty file; of two processes creating the
    same index at once, the first link wins and the other opens that one."""
    if not path.parent.is_dir():
        raise IndexUnavailable(
            f"Cannot create the index {path}: directory {path.parent} "
            "does not exist; create it or choose another path"
        )
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        conn = sqlite3.connect(sqlite_file_uri(temp, "rwc"), uri=True, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("BEGIN IMMEDIATE")
            create_schema(conn, parameters)
            conn.execute("COMMIT")
        finally:
            conn.close()
        try:
            os.link(temp, path)
        except FileExistsError:
            pass  # created meanwhile by another process: open that one
        except OSError:
            # A file system without hard links: not atomic against another process
            # creating the same index at this very moment, but never overwrites one.
            if not path.exists():
                os.replace(temp, path)
    finally:
        for leftover in (temp, Path(f"{temp}-wal"), Path(f"{temp}-shm")):
            with contextlib.suppress(OSError):
                leftover.unlink()


def check_application(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a SQLite database that is not one of our indexes."""
    app_id = conn.execute("PRAGMA application_id").fetchone()[0]
    if app_id == APPLICATION_ID:
        return
    if app_id != 0 or _has_tables(conn):
        raise NotAnIndex(
            f"{path} is a SQLite database of another application (application_id "
            f"{app_id:#x}), not a scrapy-simhash index; it was left untouched. Point "
            "SIMHASH_INDEX_URI at another file."
        )
    raise NotAnIndex(
        f"{path} is an empty SQLite database, not a scrapy-simhash index; it was left "
        "untouched. Restore the index from a backup, or delete the file to start a new "
        "index there."
    )


def _has_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] > 0


def retry_while_locked(action: Callable[[], T], timeout: float) -> T:
    """Run *action*, again and again while SQLite says "database is locked", until the
    timeout.

    Where waiting could deadlock, SQLite answers "locked" at once instead of calling
    the busy handler: when several processes open a new file together, all but one
    fail to switch it to WAL mode that way. Every step of opening can be repeated.
    """
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            return action()
        except sqlite3.OperationalError as e:
            if "locked" not in str(e).lower() or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.25)
