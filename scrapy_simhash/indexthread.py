"""One thread per index in a crawl, that runs every check-and-insert, one at a time, in order.

A check-and-insert can wait: for another process's write transaction (a long ``expire``,
``import`` or ``vacuum``, up to the index's timeout), for a slow disk, for a Redis server
that reconnects. On the reactor thread that wait would stop the whole crawl: no download,
no log line, no timer. Here the reactor only queues the check and goes on; the item waits.

One thread, not a pool: checks run in the order they were queued and never interleave, so
of two near-duplicate items checked "at the same time" the second always finds the first
(the same guarantee as when every check ran on the reactor thread with no ``await`` in
between).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from scrapy.utils.asyncio import is_asyncio_available
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

T = TypeVar("T")


class IndexThread:
    """A thread that runs the calls given to :meth:`run`, one at a time, in order."""

    def __init__(self, name: str = "scrapy-simhash-index") -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    async def run(self, func: Callable[..., T], *args: Any) -> T:
        """``func(*args)`` in the thread, awaited on the reactor without blocking it."""
        future = self._executor.submit(func, *args)
        if is_asyncio_available():
            return await asyncio.wrap_future(future)
        return await maybe_deferred_to_future(_deferred(future))

    def close(self) -> None:
        """Wait for the calls already queued, then stop the thread."""
        self._executor.shutdown(wait=True)


def _deferred(future: Future) -> Deferred:
    """A Deferred fired on the reactor thread with *future*'s outcome (for reactors
    without asyncio)."""
    from twisted.internet import reactor

    deferred: Deferred = Deferred()

    def settle(done: Future) -> None:
        error = done.exception()
        if error is not None:
            deferred.errback(Failure(error))
        else:
            deferred.callback(done.result())

    future.add_done_callback(lambda done: reactor.callFromThread(settle, done))  # type: ignore[attr-defined]
    return deferred
