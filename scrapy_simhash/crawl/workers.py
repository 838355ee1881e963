"""Worker processes that analyse pages beside the crawl (``SIMHASH_WORKERS``).

Each worker is a new Python process (``python -c``, with the crawl's ``sys.path``) that
inherits one end of a socket pair and nothing else. Not ``fork``: forking a process that
runs the reactor's threads can deadlock. Not ``multiprocessing``'s "spawn" either: it runs
the crawl's main script again in every worker, so a script that starts a crawl without an
``if __name__ == "__main__":`` guard would start another crawl there. Requests and replies
are length-prefixed pickles, the analysis parameters first; a worker answers its requests
in order, so each connection needs only a queue of the futures waiting on it. The worker
holds the only other end of its socket: when it exits, however it dies, the socket reads
as closed.

Why not ``concurrent.futures.ProcessPoolExecutor``: its feeder and manager threads, and the
hand-over of every result from them to the event loop, cost the crawl's process about
0.9 ms of CPU per page (measured with a worker that does nothing), more than the whole
check-and-insert. Here the socket is read and written by the event loop itself
(``add_reader``/``add_writer``), with no thread in the crawl's process.

The pool needs a selector-based asyncio event loop on a POSIX system (the socket is handed
to the worker as an inherited file descriptor), which is what Scrapy's default reactor runs
on there.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import pickle
import socket
import subprocess
import sys
import time
from typing import Any

from ..dedup import Analysis, AnalysisParams
from .worker_process import HEADER

logger = logging.getLogger(__name__)


class WorkerDied(Exception):
    """The worker process analysing a page exited before answering."""


class WorkerError(Exception):
    """The analysis raised an exception in the worker; the message names it."""


class WorkerHung(Exception):
    """The worker process gave no answer for this page in time; it was killed."""


#: Worker processes started in place of dead ones, at most, over the life of a pool. A
#: worker that keeps dying (a broken installation, the out-of-memory killer) is not
#: restarted forever.
MAX_RESTARTS = 10


#: Seconds a new worker process may take to start and load its dictionaries before the
#: pages waiting on it count as hung. Its pages' own time limit starts once it is ready.
STARTUP_TIMEOUT = 120.0


#: What a worker process runs: the crawl's import path, then
#: :func:`.worker_process.worker_main`.
_BOOTSTRAP = (
    "import sys; sys.path[:] = {path!r}; "
    "from scrapy_simhash.crawl.worker_process import worker_main; worker_main({fd})"
)


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return True


class _Worker:
    """One worker process and the crawl's end of its socket.

    With a *timeout*, a watchdog on the event loop runs while pages wait: when the worker
    has answered nothing for *timeout* seconds since it became ready, or since its last
    answer, the page at the head of its queue (the one it is stuck on) fails with
    :class:`WorkerHung`, the process is killed, and the pages queued behind fail with
    :class:`WorkerDied`. One timer per worker, not one per page.
    """

    def __init__(self, params: AnalysisParams, timeout: float | None = None) -> None:
        ours, theirs = socket.socketpair()
        try:
            fd = theirs.fileno()
            self.process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP.format(path=sys.path, fd=fd)],
                pass_fds=(fd,),
                stdin=subprocess.DEVNULL,
                # Its own session, so Ctrl-C in a terminal (SIGINT to the crawl's process
                # group) never reaches it: ignoring SIGINT once started left the time the
                # interpreter starts, in which a Ctrl-C killed the worker with pages to answer.
                start_new_session=True,
                # Anything a worker prints goes to stderr: the crawl's stdout may be a feed
                # (scrapy crawl -O -).
                stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else subprocess.DEVNULL,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()  # the worker has its own copy; this one would hide its exit
        self.sock = ours
        self.pid = self.process.pid
        self.waiting: collections.deque[asyncio.Future[Analysis]] = collections.deque()
        self.alive = True
        self.timeout = timeout
        #: The worker has loaded its dictionaries and answers pages.
        self.ready = False
        self._started = time.monotonic()
        #: When the page at the head of the queue started to count against the timeout.
        self._since = self._started
        self._watchdog: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox = bytearray()
        # The parameters go first.
        payload = pickle.dumps(params, protocol=pickle.HIGHEST_PROTOCOL)
        self._outbox = bytearray(HEADER.pack(len(payload)) + payload)
        ours.setblocking(False)
        self._write()

    def submit(self, values: list[Any]) -> asyncio.Future[Analysis]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Analysis] = loop.create_future()
        if not self.alive:
            future.set_exception(WorkerDied(f"worker {self.pid} has exited"))
            return future
        payload = pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)
        header = HEADER.pack(len(payload))  # before queueing: it raises for 4 GiB and more
        if self._loop is not loop:
            self._attach(loop)
        if not self.waiting:
            self._since = time.monotonic()
        self.waiting.append(future)
        self._arm()
        queued = bool(self._outbox)
        self._outbox += header
        self._outbox += payload
        if not queued:  # else the loop writes it after what is queued
            self._write()
        return future

    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        # On first use, from inside the running loop (or a new loop, if the first one is
        # gone).
        self._detach()
        loop.add_reader(self.sock.fileno(), self._on_readable)
        self._loop = loop
        if self._outbox:
            loop.add_writer(self.sock.fileno(), self._write)

    def _arm(self) -> None:
        """Start the watchdog if pages wait and it is not running."""
        loop = self._loop
        if self.timeout is None or self._watchdog is not None or loop is None:
            return
        if self.waiting and self.alive:
            delay = max(0.0, self._deadline() - time.monotonic())
            self._watchdog = loop.call_later(delay, self._watch)

    def _deadline(self) -> float:
        if self.ready:
            assert self.timeout is not None
            return self._since + self.timeout
        return self._started + STARTUP_TIMEOUT

    def _watch(self) -> None:
        self._watchdog = None
        if not (self.alive and self.waiting):
            return
        if time.monotonic() < self._deadline():
            self._arm()  # an answer came meanwhile: wait for the next page's deadline
            return
        future = self.waiting.popleft()
        if not future.done():
            if self.ready:
                problem = f"gave no answer in {self.timeout:g} s"
            else:
                problem = f"did not start in {STARTUP_TIMEOUT:g} s"
            future.set_exception(WorkerHung(f"worker {self.pid} {problem}; it was killed"))
        self.process.kill()
        self._died()

    def _detach(self) -> None:
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:
            watchdog.cancel()
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.remove_reader(self.sock.fileno())
            loop.remove_writer(self.sock.fileno())

    def _write(self) -> None:
        try:
            sent = self.sock.send(self._outbox)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._died()
            return
        del self._outbox[:sent]
        loop = self._loop
        if loop is None:
            return
        if self._outbox:
            loop.add_writer(self.sock.fileno(), self._write)
        else:
            loop.remove_writer(self.sock.fileno())

    def _on_readable(self) -> None:
        try:
            data = self.sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._died()
            return
        inbox = self._inbox
        inbox += data
        start = 0
        while len(inbox) - start >= HEADER.size:
            (size,) = HEADER.unpack_from(inbox, start)
            end = start + HEADER.size + size
            if len(inbox) < end:
                break
            status, value = pickle.loads(inbox[start + HEADER.size : end])
            start = end
            # The next page's time starts now: from the last answer, not from when it was
            # queued behind others.
            self._since = time.monotonic()
            if status == "ready":
                # The deadline moves from the start-up limit to the pages' own, earlier one.
                self.ready = True
                if self._watchdog is not None:
                    self._watchdog.cancel()
                    self._watchdog = None
                    self._arm()
                continue
            future = self.waiting.popleft()
            if future.done():  # cancelled while the worker was busy with it
                continue
            if status == "ok":
                future.set_result(value)
            else:
                future.set_exception(WorkerError(value))
        del inbox[:start]

    def _died(self) -> None:
        """Mark the worker dead, stop watching it, fail the pages waiting on it."""
        self.alive = False
        self._detach()
        self._outbox.clear()
        while self.waiting:
            future = self.waiting.popleft()
            # A future of a closed loop can take no result; nobody can await it either.
            if not future.done() and not future.get_loop().is_closed():
                future.set_exception(WorkerDied(f"worker {self.pid} has exited"))

    def stop(self) -> None:
        """Close the crawl's end: the worker reads the end of its input and exits."""
        self._died()
        self.sock.close()

    def reap(self, deadline: float) -> None:
        """Wait for the stopped process until *deadline* (``time.monotonic()``), then
        terminate it, then kill it."""
        try:
            self.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(1.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class WorkerPool:
    """*size* worker processes analysing item fields with *params*.

    Processes start at once and load their dictionaries; :meth:`analyse` must be awaited
    on the event loop. A worker that dies fails its pending pages with
    :class:`WorkerDied` and is replaced on the next :meth:`analyse`, at most
    *max_restarts* times over the life of the pool; then :attr:`exhausted` tells the
    caller to give up on it. A worker that takes more than *timeout* seconds over one page
    is killed: that page fails with :class:`WorkerHung`, the others waiting on it with
    :class:`WorkerDied`, and it is replaced in the same way.
    """

    def __init__(
        self,
        params: AnalysisParams,
        size: int,
        *,
        max_restarts: int = MAX_RESTARTS,
        timeout: float | None = None,
    ) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least 1 process, not {size}")
        if os.name != "posix":
            raise RuntimeError("worker processes need a POSIX system (Linux, macOS)")
        self.params = params
        self.max_restarts = max_restarts
        self.timeout = timeout
        #: Workers started in place of dead ones so far.
        self.restarts = 0
        self._workers: list[_Worker] = []
        try:
            for _ in range(size):
                self._workers.append(_Worker(params, timeout))
        except BaseException:
            self.close()
            raise

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self._workers]

    @property
    def exhausted(self) -> bool:
        """Every worker is dead and no restart is left."""
        return self.restarts >= self.max_restarts and not any(w.alive for w in self._workers)

    async def analyse(self, values: list[Any]) -> Analysis:
        """The :func:`~scrapy_simhash.dedup.analyse_fields` of *values*, from the least
        busy worker."""
        self._replace_dead()
        worker = min(self._workers, key=lambda w: (not w.alive, len(w.waiting)))
        return await worker.submit(values)

    def _replace_dead(self) -> None:
        for n, worker in enumerate(self._workers):
            if worker.alive or self.restarts >= self.max_restarts:
                continue
            worker.stop()
            worker.reap(time.monotonic() + 1.0)
            # Counted first: a start that fails (OSError) counts too, so that a machine that
            # cannot start processes does not try again for every page.
            self.restarts += 1
            self._workers[n] = _Worker(self.params, self.timeout)
            logger.error(
                "A scrapy-simhash worker process (pid %s) died; started a new one (%d of at "
                "most %d restarts)",
                worker.pid,
                self.restarts,
                self.max_restarts,
            )

    def close(self, timeout: float = 10.0) -> None:
        """Stop every worker; pages still waiting fail with :class:`WorkerDied`. Waits
        at most *timeout* seconds in all for the processes to exit."""
        workers, self._workers = self._workers, []
        for worker in workers:
            worker.stop()
        deadline = time.monotonic() + timeout
        for worker in workers:
            worker.reap(deadline)
