"""Reaching a Dask scheduler within a timeout, its handshake included, before a
``distributed.Client`` is made for it.

Dask bounds the TCP connect by its timeout but not the handshake after it: a server that
accepts and never answers would hold ``Client()`` for ever. A first connection,
handshake included, is bounded here; the client's own connection then follows. Apart from
the command because it is about Dask's protocol, not about how a failure is shown.

Install with ``pip install 'scrapy-simhash[dask]'``.
"""

from __future__ import annotations

import asyncio
import threading
import time

__all__ = ["NotAScheduler", "probe_scheduler"]


class NotAScheduler(Exception):
    """What answered at the scheduler's address does not speak Dask's protocol."""


def probe_scheduler(scheduler: str, timeout: float) -> None:
    """Connect to the Dask *scheduler* and complete its handshake within *timeout*
    seconds, in a thread with an event loop of its own (the caller's thread may run one
    already: Dask's, a test's). Raises ``ConnectionError`` (nothing reached, with the
    reason), ``asyncio.TimeoutError`` (a connection but no answer), :class:`NotAScheduler`,
    or ``ValueError``/``TypeError`` for an address Dask cannot read."""
    failed: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(_probe(scheduler, timeout))
        except BaseException as e:
            failed.append(e)

    thread = threading.Thread(target=run, name="scheduler-probe", daemon=True)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


async def _reach(scheduler: str, timeout: float) -> None:
    """The connection alone, tried again until the deadline (a scheduler starting)."""
    from distributed.comm import parse_address
    from distributed.comm.registry import get_backend

    scheme, location = parse_address(scheduler)
    connector = get_backend(scheme).get_connector()
    deadline = time.monotonic() + timeout
    while True:
        try:
            left = max(deadline - time.monotonic(), 0.01)
            comm = await asyncio.wait_for(connector.connect(location), left)
            comm.abort()
            return
        except OSError as e:  # Dask's CommClosedError included
            if time.monotonic() + 0.2 >= deadline:
                cause = e.__cause__ or e.__context__ or e
                raise ConnectionError(getattr(cause, "strerror", None) or "no connection") from None
            await asyncio.sleep(0.2)


async def _probe(scheduler: str, timeout: float) -> None:
    from distributed.comm import connect

    try:
        await _reach(scheduler, timeout)
    except asyncio.TimeoutError:
        raise ConnectionError("no connection") from None
    # Then Dask's handshake, which only the scheduler answers.
    try:
        comm = await asyncio.wait_for(connect(scheduler, timeout=timeout), timeout)
    except asyncio.TimeoutError:
        raise
    except Exception as e:  # an answer, but not Dask's (some read 3 EiB from it)
        raise NotAScheduler(f"its answer is not Dask's: {type(e).__name__}") from None
    await comm.close()
