"""Keeps a crawl's journal (see :mod:`.journal`) in a thread of its own: every
:data:`~.journal.HEARTBEAT` seconds the lease is renewed and the pending pages of dead
crawls are forgotten, and the keys of items now in the output are removed from the
journal as soon as they are handed over.

None of them waits behind the crawl's queued checks. A heartbeat queued behind them
reached 126 s on a busy crawl, past the lease, and another crawl took it for dead;
settlements queued behind them (1 to 22 s a round) left most of a crawl's exported pages
pending, so that a crawl killed then had them forgotten and exported again by the next
one; a recovery queued behind them left a dead crawl's pages stored for 31 s and more,
and the surviving crawl dropped them as unchanged meanwhile."""

from __future__ import annotations

import threading
from collections.abc import Callable

from .journal import HEARTBEAT, Journal, monotonic

__all__ = ["JournalKeeper"]

#: What the keeper was doing when an error was handed to ``on_error``.
RENEWING = "renew the crawl's lease"
SETTLING = "remove exported pages from the crawl journal"
RECOVERING = "forget the pages of dead crawls"


class JournalKeeper:
    """Renews *journal*'s lease and forgets the pages of dead crawls every *interval*
    seconds, and settles the keys given to :meth:`settle`, in a thread of its own. Errors
    are handed to *on_error* with what was being done; a renewal and a recovery are tried
    again at the next interval (a recovery only after a renewal that succeeded), keys that
    could not be settled with the next keys (or by :meth:`stop`'s caller). How many pages
    were forgotten is read with :meth:`take_forgotten`."""

    def __init__(
        self,
        journal: Journal,
        interval: float = HEARTBEAT,
        on_error: Callable[[str, BaseException], None] | None = None,
    ) -> None:
        self.journal = journal
        self.interval = interval
        self.on_error = on_error
        #: Renewals, settlements and recoveries done (tests read them to see the keeper
        #: at work).
        self.renewals = 0
        self.settlements = 0
        self.recoveries = 0
        self._keys: list[str] = []
        #: Pages of dead crawls forgotten and not yet taken by :meth:`take_forgotten`.
        self._forgotten = 0
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, name="scrapy-simhash-journal", daemon=True
        )
        self._thread.start()

    def settle(self, keys: list[str]) -> None:
        """Remove *keys* (their items are in the output) from the journal, soon, in the
        keeper's thread. Returns at once."""
        if keys:
            with self._lock:
                self._keys.extend(keys)
            self._wake.set()

    def take_forgotten(self) -> int:
        """How many pages of dead crawls were forgotten since the last call."""
        with self._lock:
            forgotten, self._forgotten = self._forgotten, 0
        return forgotten

    def stop(self) -> list[str]:
        """Settle what was handed over, stop renewing, and wait for the thread. Returns
        the keys that could not be settled, for the caller to settle or leave pending."""
        self._stopping.set()
        self._wake.set()
        self._thread.join()
        with self._lock:
            left, self._keys = self._keys, []
        return left

    def _serve(self) -> None:
        renew_at = monotonic() + self.interval
        while True:
            self._wake.wait(max(0.0, renew_at - monotonic()))
            self._wake.clear()
            self._settle_handed_over()
            if self._stopping.is_set():
                return
            if monotonic() >= renew_at:
                self._heartbeat()
                renew_at = monotonic() + self.interval

    def _heartbeat(self) -> None:
        """Renew the lease, then forget the pages of the crawls found dead."""
        try:
            self.journal.renew()
            self.renewals += 1
        except Exception as error:  # reported, then tried again
            self._report(RENEWING, error)
            return  # the index is failing: the recovery waits for the next heartbeat
        try:
            forgotten = self.journal.recover()
            self.recoveries += 1
        except Exception as error:
            self._report(RECOVERING, error)
            return
        with self._lock:
            self._forgotten += forgotten

    def _settle_handed_over(self) -> None:
        with self._lock:
            keys, self._keys = self._keys, []
        if not keys:
            return
        try:
            self.journal.settle(keys)
            self.settlements += 1
        except Exception as error:
            with self._lock:  # tried again with the next keys; pending meanwhile
                self._keys[:0] = keys
            self._report(SETTLING, error)

    def _report(self, doing: str, error: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(doing, error)
