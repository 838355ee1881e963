"""One thread per index in a crawl, that runs every check-and-insert, one at a time, in order.

A check-and-insert can wait: for another process's write transaction (a long ``expire``,
``import`` or ``vacuum``, up to the index's timeout), for a slow disk, for a Redis server
that reconnects. On the reactor thread that wait would stop the whole crawl: no download,
no log line, no timer. Here the reactor only queues the check and goes on; the item waits.

One thread, not a pool: checks run in the order they were queued and never interleave, so
of two near-duplicate items checked "at the same time" the second always finds the first
(the same guarantee as when every check ran on the reactor thread with no ``await`` in
between).

The answers go back to the reactor in batches: the thread wakes the reactor once for all
the answers it gives before the reactor gets to them, not once per check (in a busy crawl,
each wake-up costs the crawl's thread more than the check's own answer).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

T = TypeVar("T")

#: Where an answer goes: the asyncio future or the Deferred its caller awaits.
_Waiter = asyncio.Future | Deferred


class IndexThread:
    """A thread that runs the calls given to :meth:`run`, one at a time, in order."""

    def __init__(self, name: str = "scrapy-simhash-index") -> None:
        self._calls: collections.deque[tuple[Callable[..., Any], tuple, _Waiter]] = (
            collections.deque()
        )
        self._wake = threading.Condition(threading.Lock())
        self._closing = False
        #: Answers given and not yet handed to their waiters. The first one asks the
        #: reactor to hand them over; the next ones join it until the reactor does.
        self._answers: list[tuple[_Waiter, bool, Any]] = []
        self._answers_lock = threading.Lock()
        self._post: Callable[[Callable[[], None]], object] | None = None
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` in the thread, awaited on the reactor without blocking it."""
        waiter: _Waiter
        if is_asyncio_available():
            loop = asyncio.get_running_loop()
            waiter = loop.create_future()
            self._post = loop.call_soon_threadsafe
        else:
            from twisted.internet import reactor

            waiter = Deferred()
            self._post = reactor.callFromThread  # type: ignore[attr-defined]
        with self._wake:
            if self._closing:
                raise RuntimeError("IndexThread.run called after close")
            self._calls.append((func, args, waiter))
            self._wake.notify()
        if isinstance(waiter, Deferred):
            return await maybe_deferred_to_future(waiter)
        return await waiter

    def close(self) -> None:
        """Wait for the calls already queued, then stop the thread."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._thread.join()

    def _serve(self) -> None:
        while True:
            with self._wake:
                while not self._calls and not self._closing:
                    self._wake.wait()
                if not self._calls:
                    return
                func, args, waiter = self._calls.popleft()
            try:
                answer = (waiter, True, func(*args))
            except BaseException as error:  # handed to the caller, as a pool would
                answer = (waiter, False, error)
            with self._answers_lock:
                self._answers.append(answer)
                first = len(self._answers) == 1
            if first and self._post is not None:
                # RuntimeError: the loop is closed, and nobody awaits the answers.
                with contextlib.suppress(RuntimeError):
                    self._post(self._hand_over)

    def _hand_over(self) -> None:
        """On the reactor: give every answer so far to its waiter."""
        with self._answers_lock:
            answers, self._answers = self._answers, []
        for waiter, ok, value in answers:
            if isinstance(waiter, Deferred):
                if waiter.called:  # cancelled
                    continue
                if ok:
                    waiter.callback(value)
                else:
                    waiter.errback(Failure(value))
            elif not waiter.done():  # else cancelled
                if ok:
                    waiter.set_result(value)
                else:
                    waiter.set_exception(value)
