"""The journal of a crawl's pages that are in the index but not yet in its output.

A crawl stores a page in the index when it checks it (so that a near-copy checked a moment
later is found), but the page's item reaches the crawl's output (a feed file) only later:
Scrapy's exporters buffer. A crawl killed in between would leave the index remembering
pages that no output holds, and the next crawl would drop them as already seen.

So each crawl keeps a journal in the index: a page's key is written to it *before* the
check that may store the page (:meth:`Journal.pending`), and removed once the item is in
the output (:meth:`Journal.settle`). A crawl also holds a lease: it records its host and
process and renews a heartbeat (:meth:`Journal.heartbeat`). A crawl whose process is gone
(same host) or whose heartbeat is older than the lease (another host) is dead: the next
crawl that opens the index, or a running crawl at its next heartbeat, forgets the dead
crawl's pending pages (:meth:`Journal.recover`), so that they are kept again when they
are seen again. Forgetting too much only keeps a page twice; it never loses one.

The journal lives beside the index's own data (tables of the SQLite file, keys under the
Redis prefix) and never touches how pages are checked and stored.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

from .base import storable_key

__all__ = ["HEARTBEAT", "LEASE", "CrawlRecord", "Journal", "journal_for", "new_crawl_id"]

#: Seconds between two heartbeats of a running crawl.
HEARTBEAT = 10.0
#: Seconds without a heartbeat after which a crawl on another host is taken for dead.
LEASE = 120.0


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
    beat: float

    def dead(self, now: float, lease: float, host: str) -> bool:
        if self.host == host and process_gone(self.pid, self.started):
            return True
        return now - self.beat > lease


class Journal:
    """One crawl's journal in one index. Not thread-safe: used from the thread that uses
    the index. Backends implement the ``_``-methods."""

    def __init__(self, index: Any, crawl: str | None = None, *, lease: float = LEASE) -> None:
        self.index = index
        self.crawl = crawl or new_crawl_id()
        self.lease = lease
        self.host = this_host()
        self.pid = os.getpid()
        self.started = process_start(self.pid)
        if self.started == "gone":
            self.started = ""

    # -- the crawl's lifecycle --------------------------------------------------------

    def begin(self) -> int:
        """Forget the pending pages of dead crawls, then register this one. Returns how
        many pages were forgotten."""
        self._prepare()
        forgotten = self.recover()
        self._register(self._record(time.time()))
        return forgotten

    def pending(self, key: str) -> None:
        """Write *key* to the journal, before the check that may store its page."""
        self._add_pending(storable_key(key))

    def settle(self, keys: list[str]) -> None:
        """Remove *keys* from the journal: their items are in the output, or their check
        stored nothing."""
        if keys:
            self._remove_pending([storable_key(key) for key in keys])

    def heartbeat(self) -> int:
        """Renew this crawl's lease; forget the pages of crawls found dead. Returns how
        many pages were forgotten."""
        self._register(self._record(time.time()))
        return self.recover()

    def recover(self) -> int:
        """Forget the pending pages of every dead crawl, and its journal."""
        now, forgotten = time.time(), 0
        for record in self._records():
            if record.crawl != self.crawl and record.dead(now, self.lease, self.host):
                forgotten += self._forget_all(record.crawl)
        return forgotten

    def end(self) -> int:
        """This crawl is over: forget the pages still pending (their items never reached
        the output) and remove its journal. Returns how many pages were forgotten."""
        return self._forget_all(self.crawl)

    def unsettled(self) -> list[str]:
        return self._pending(self.crawl)

    def _forget_all(self, crawl: str) -> int:
        forgotten = 0
        for key in self._pending(crawl):
            forgotten += bool(self.index.forget(key))
        # Last: a process killed before this line leaves the journal for the next one.
        self._drop(crawl)
        return forgotten

    def _record(self, now: float) -> CrawlRecord:
        return CrawlRecord(self.crawl, self.host, self.pid, self.started, now)

    # -- storage, per backend ---------------------------------------------------------

    def _prepare(self) -> None:
        """Create what the journal needs in the index, if it is not there."""

    def _register(self, record: CrawlRecord) -> None:
        raise NotImplementedError

    def _records(self) -> list[CrawlRecord]:
        raise NotImplementedError

    def _add_pending(self, key: str) -> None:
        raise NotImplementedError

    def _remove_pending(self, keys: list[str]) -> None:
        raise NotImplementedError

    def _pending(self, crawl: str) -> list[str]:
        raise NotImplementedError

    def _drop(self, crawl: str) -> None:
        raise NotImplementedError


class MemoryJournal(Journal):
    """The journal of an in-memory index: it dies with the crawl's process, so only the
    crawl's own pending pages matter (forgotten at :meth:`end`)."""

    def __init__(self, index: Any, crawl: str | None = None, **kwargs: Any) -> None:
        super().__init__(index, crawl, **kwargs)
        self._crawls: dict[str, CrawlRecord] = {}
        self._keys: dict[str, set[str]] = {}

    def _register(self, record: CrawlRecord) -> None:
        self._crawls[record.crawl] = record

    def _records(self) -> list[CrawlRecord]:
        return list(self._crawls.values())

    def _add_pending(self, key: str) -> None:
        self._keys.setdefault(self.crawl, set()).add(key)

    def _remove_pending(self, keys: list[str]) -> None:
        self._keys.get(self.crawl, set()).difference_update(keys)

    def _pending(self, crawl: str) -> list[str]:
        return sorted(self._keys.get(crawl, ()))

    def _drop(self, crawl: str) -> None:
        self._keys.pop(crawl, None)
        self._crawls.pop(crawl, None)


def journal_for(index: Any, crawl: str | None = None, **kwargs: Any) -> Journal:
    """The journal of *index*'s backend (its ``journal`` method), for the crawl named
    *crawl* (a new name by default)."""
    make = getattr(index, "journal", None)
    if make is None:
        raise TypeError(f"No crawl journal for {type(index).__name__}")
    return make(crawl, **kwargs)
