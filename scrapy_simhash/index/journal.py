"""The journal of a crawl's pages that are in the index but not yet in its output.

A crawl stores a page in the index when it checks it (so that a near-copy checked a moment
later is found), but the page's item reaches the crawl's output (a feed file) only later:
Scrapy's exporters buffer. A crawl killed in between would leave the index remembering
pages that no output holds, and the next crawl would drop them as already seen.

So each crawl keeps a journal in the index: a page's key is written to it *before* the
check that may store the page (:meth:`Journal.pending`), and removed once the item is in
the output (:meth:`Journal.settle`). A crawl also holds a lease: it records its host and
process, and renews the lease every :data:`HEARTBEAT` seconds (:meth:`Journal.renew`). Both
run in a thread of their own (:class:`~.journal_keeper.JournalKeeper`), never behind the
crawl's queued checks, and so does the recovery of dead crawls below.

Whether a crawl is dead never rests on the wall clocks of two hosts:

- on the crawl's own host, it is dead exactly when its process is gone (no clock at all);
- on another host, Redis keeps the lease as a key that the *server* expires (``PX``,
  renewed by each heartbeat); a SQLite file (one file, normally one host) is judged by
  an observer's own monotonic clock: a crawl whose heartbeat has not *changed* for the
  lease, timed by the observer, is dead.

The next crawl that opens the index, or a running crawl at its next heartbeat (in the
keeper's thread), forgets the dead crawl's pending pages (:meth:`Journal.recover`), so
that they are kept again when they are seen again. Forgetting too much only keeps a page
twice; it never loses one.

A crawl record is removed only once every pending key it had is forgotten and only while
its lease is still lapsed; a crawl that nevertheless finds its record (or its lease)
gone, because it was stalled past its lease, recreates it and writes its pending keys
again (:meth:`Journal.renew`, :meth:`Journal.pending`): nothing is written into a journal
that no record names.

The journal lives beside the index's own data (tables of the SQLite file, keys under the
Redis prefix) and never touches how pages are checked and stored.
"""

from __future__ import annotations

import math
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from .base import storable_key

__all__ = [
    "HEARTBEAT",
    "LEASE",
    "CrawlRecord",
    "Journal",
    "journal_for",
    "new_crawl_id",
]

#: Seconds between two heartbeats of a running crawl.
HEARTBEAT = 10.0
#: Seconds without a heartbeat after which a crawl on another host is taken for dead.
LEASE = 120.0


def monotonic() -> float:
    """This host's monotonic clock (seconds): what an observer times a lease with."""
    return time.monotonic()


def new_crawl_id() -> str:
    """A name for one crawl, unique across hosts."""
    return uuid.uuid4().hex


def this_host() -> str:
    """Names this machine and its process namespace: where two records show the same
    host, a process id means the same process."""
    parts = [socket.gethostname()]
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            parts.append(f.read().strip())
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    except OSError:
        pass
    return "/".join(parts)


def process_start(pid: int) -> str:
    """When process *pid* started (clock ticks since boot, from ``/proc``); ``""`` where
    that cannot be read, ``"gone"`` when there is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except FileNotFoundError:
        return "gone"
    except OSError:
        return ""
    # The command name (2nd field) may hold spaces: count fields after its ')'.
    return stat.rsplit(b")", 1)[1].split()[19].decode()


def process_gone(pid: int, started: str) -> bool:
    """Whether process *pid* (started at *started*, see :func:`process_start`) has ended,
    on this host; a process id since reused by another process counts as ended."""
    now = process_start(pid)
    if now == "gone":
        return True
    if now and started:
        return now != started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


@dataclass(frozen=True)
class CrawlRecord:
    crawl: str
    host: str
    pid: int
    started: str
    #: The crawl's own wall clock at its last heartbeat: shown, and compared only for
    #: *change* (never with another host's clock).
    beat: float
    #: Whether the server still holds the crawl's lease (Redis: a key the server
    #: expires); ``None`` where the backend has no such lease (see :meth:`Journal.recover`).
    leased: bool | None = None

    def gone_here(self, host: str) -> bool | None:
        """On *host*, the crawl's own: whether its process is gone; ``None`` elsewhere."""
        if self.host != host:
            return None
        return process_gone(self.pid, self.started)


class Journal:
    """One crawl's journal in one index. Used from the thread that uses the index, except
    :meth:`renew`, :meth:`settle` and :meth:`recover`, which may run in a thread of their
    own (:class:`~.journal_keeper.JournalKeeper`): a backend's ``_renew``,
    ``_readd_pending``, ``_remove_pending``, ``_records``, ``_pending``,
    ``_forget_pending``, ``_drop_dead`` and ``_end_lease`` are safe beside the index's
    thread. Backends implement the ``_``-methods."""

    def __init__(self, index: Any, crawl: str | None = None, *, lease: float = LEASE) -> None:
        self.index = index
        self.crawl = crawl or new_crawl_id()
        self.lease = lease
        self.host = this_host()
        self.pid = os.getpid()
        self.started = process_start(self.pid)
        if self.started == "gone":
            self.started = ""
        #: Keys this process wrote as pending and has not settled: written again when
        #: the crawl finds its record or lease gone.
        self._mine: set[str] = set()
        self._mine_lock = threading.Lock()
        #: Another host's crawl -> (its beat as last read, this host's monotonic time
        #: when that beat was first read): a beat that does not change for the lease,
        #: timed here, is a dead crawl's.
        self._seen: dict[str, tuple[float, float]] = {}
        #: How many times this crawl found its record or lease gone and recreated it.
        self.reregistered = 0
        #: Serialises renewals (the lease keeper's thread and the index's thread).
        self._renew_lock = threading.Lock()
        #: This host's monotonic time when the last renewal that succeeded began.
        self._renewed_at = -math.inf

    # -- the crawl's lifecycle --------------------------------------------------------

    def begin(self) -> int:
        """Forget the pending pages of dead crawls, then register this one. Returns how
        many pages were forgotten."""
        self._prepare()
        forgotten = self.recover()
        with self._renew_lock:
            started = monotonic()
            self._renew(self._record(time.time()))
            self._renewed_at = started
        return forgotten

    def pending(self, key: str) -> None:
        """Write *key* to the journal, before the check that may store its page."""
        key = storable_key(key)
        with self._mine_lock:
            self._mine.add(key)
        if monotonic() - self._renewed_at > self.lease / 2:
            # No renewal for half the lease (the process was stalled, or renewals fail):
            # the lease may have lapsed and the record be gone. Renew first (writing the
            # record and the pending keys again if so), so that the key goes into a journal
            # that a record names, on every layout.
            self.renew()
        if self._add_pending(key):
            self._lost()

    def settle(self, keys: list[str]) -> None:
        """Remove *keys* from the journal: their items are in the output, or their check
        stored nothing."""
        if keys:
            stored = [storable_key(key) for key in keys]
            self._remove_pending(stored)
            with self._mine_lock:
                self._mine.difference_update(stored)

    def renew(self) -> bool:
        """Renew this crawl's lease. Where the crawl's record or lease was gone (another
        crawl took it for dead while it was stalled), recreate it and write every key this
        process still has pending again. Returns whether it was gone. Thread-safe: runs
        in :class:`~.journal_keeper.JournalKeeper`'s thread, beside the checks."""
        with self._renew_lock:
            # Timed from before the call: the server's lease runs from a later moment.
            started = monotonic()
            lost = self._renew(self._record(time.time()))
            self._renewed_at = started
        if lost:
            self._lost()
        return lost

    def _lost(self) -> None:
        with self._renew_lock:
            self.reregistered += 1
            with self._mine_lock:
                mine = sorted(self._mine)
            if mine:
                self._readd_pending(mine)

    def heartbeat(self) -> int:
        """Renew this crawl's lease; forget the pages of crawls found dead. Returns how
        many pages were forgotten."""
        self.renew()
        return self.recover()

    def dead(self, record: CrawlRecord) -> bool:
        """Whether *record*'s crawl is dead, judged without comparing clocks of two hosts."""
        gone = record.gone_here(self.host)
        if gone is not None:
            return gone  # this host: the process decides, no clock
        if record.leased is not None:
            return not record.leased  # the server's clock decides
        # No server lease: this host's monotonic clock times how long the beat stays the same.
        now = monotonic()
        seen = self._seen.get(record.crawl)
        if seen is None or seen[0] != record.beat:
            self._seen[record.crawl] = (record.beat, now)
            return False
        return now - seen[1] > self.lease

    def recover(self) -> int:
        """Forget the pending pages of every dead crawl, and its journal. Returns how
        many pages were forgotten. Safe beside the index's thread (not beside another
        :meth:`recover` of this journal)."""
        forgotten = 0
        records = self._records()
        for record in records:
            if record.crawl != self.crawl and self.dead(record):
                forgotten += self._forget_dead(record)
        known = {record.crawl for record in records}
        for crawl in list(self._seen):
            if crawl not in known:
                del self._seen[crawl]
        return forgotten

    def end(self) -> int:
        """This crawl is over: forget the pages still pending (their items never reached
        the output) and remove its journal. Returns how many pages were forgotten."""
        forgotten = 0
        for key in self._pending(self.crawl):
            forgotten += bool(self.index.forget(key))
        # Last: a process killed before this line leaves the journal for the next one.
        self._drop(self.crawl)
        with self._mine_lock:
            self._mine.clear()
        return forgotten

    def close(self) -> None:
        """Release what the journal holds beside the index (a connection of its own)."""

    def unsettled(self) -> list[str]:
        return self._pending(self.crawl)

    def _forget_dead(self, record: CrawlRecord) -> int:
        """Forget the pending pages of *record*'s crawl, found dead; remove its record
        only if no key is pending any more and it is still dead by the same token (its
        lease still lapsed, its beat unchanged): a crawl that was only stalled keeps its
        record and what it wrote since."""
        if record.gone_here(self.host):
            # Its process is gone: no one can renew its lease any more.
            self._end_lease(record.crawl)
        forgotten = self._forget_pending(record)
        self._seen.pop(record.crawl, None)
        return forgotten

    def _record(self, now: float) -> CrawlRecord:
        return CrawlRecord(self.crawl, self.host, self.pid, self.started, now)

    # -- storage, per backend ---------------------------------------------------------

    def _prepare(self) -> None:
        """Create what the journal needs in the index, if it is not there."""

    def _renew(self, record: CrawlRecord) -> bool:
        """Write *record* and renew its lease; return whether the record or the lease was
        gone. Called under ``_renew_lock``, from any thread."""
        raise NotImplementedError

    def _register(self, record: CrawlRecord) -> None:
        with self._renew_lock:
            self._renew(record)

    def _records(self) -> list[CrawlRecord]:
        raise NotImplementedError

    def _add_pending(self, key: str) -> bool:
        """Write *key* as pending; return whether the crawl's record (or lease) was gone,
        in which case it is recreated."""
        raise NotImplementedError

    def _readd_pending(self, keys: list[str]) -> None:
        """Write *keys* as pending again (after the record was recreated). Called under
        ``_renew_lock``, from any thread."""
        raise NotImplementedError

    def _remove_pending(self, keys: list[str]) -> None:
        raise NotImplementedError

    def _pending(self, crawl: str) -> list[str]:
        raise NotImplementedError

    def _forget_pending(self, record: CrawlRecord) -> int:
        """Forget the pages pending in dead *record*'s journal, then drop them (see
        :meth:`_drop_dead`); return how many pages were forgotten. Runs beside the index's
        thread: here through ``index.forget``, which a backend whose client is shared
        safely between threads allows (Redis); SQLite, whose connection is not, overrides
        it."""
        keys = self._pending(record.crawl)
        forgotten = sum(bool(self.index.forget(key)) for key in keys)
        self._drop_dead(record, keys)
        return forgotten

    def _drop_dead(self, record: CrawlRecord, keys: list[str]) -> None:
        """Remove *keys* (forgotten) from dead *record*'s journal, then its record if no
        key remains and the crawl is still dead by the same token."""
        raise NotImplementedError

    def _drop(self, crawl: str) -> None:
        raise NotImplementedError

    def _end_lease(self, crawl: str) -> None:
        """End the lease of *crawl*, whose process is known to be gone (where the backend
        keeps leases)."""


def journal_for(index: Any, crawl: str | None = None, **kwargs: Any) -> Journal:
    """The journal of *index*'s backend (its ``journal`` method), for the crawl named
    *crawl* (a new name by default)."""
    make = getattr(index, "journal", None)
    if make is None:
        raise TypeError(f"No crawl journal for {type(index).__name__}")
    return make(crawl, **kwargs)
