"""Worker processes that analyse pages beside the crawl (``SIMHASH_WORKERS``).

Each worker is a process started with "spawn" (forking a process that runs the reactor's
threads can deadlock) and connected to the crawl's process by a socket pair. Requests and
replies are length-prefixed pickles; a worker answers its requests in order, so each
connection needs only a queue of the futures waiting on it.

Why not ``concurrent.futures.ProcessPoolExecutor``: its feeder and manager threads, and the
hand-over of every result from them to the event loop, cost the crawl's process about
0.9 ms of CPU per page (measured with a worker that does nothing), more than the whole
check-and-insert. Here the socket is read and written by the event loop itself
(``add_reader``/``add_writer``), with no thread in the crawl's process.

The pool needs a selector-based asyncio event loop, which is what Scrapy's default reactor
runs on.
"""

from __future__ import annotations

import asyncio
import collections
import multiprocessing
import pickle
import signal
import socket
import struct
from typing import Any

from .dedup import Analysis, AnalysisParams, analyse_fields

_HEADER = struct.Struct("!I")


class WorkerDied(Exception):
    """The worker process analysing a page exited before answering."""


class WorkerError(Exception):
    """The analysis raised an exception in the worker; the message names it."""


def serve(sock: socket.socket, params: AnalysisParams) -> None:
    """A worker's main loop: answer requests on *sock* until the crawl closes it."""
    # Ctrl-C in a terminal signals the whole process group: the crawl shuts down gracefully
    # and closes the socket; the worker must not die first, with pages still to answer.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    analyse_fields(params, ["warm up"])  # loads the dictionaries while the first pages download
    stream = sock.makefile("rb")
    while True:
        header = stream.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        (size,) = _HEADER.unpack(header)
        values = pickle.loads(stream.read(size))
        try:
            reply: tuple[str, Any] = ("ok", analyse_fields(params, values))
        except Exception as e:  # reported to the crawl, which keeps the page and counts it
            reply = ("error", f"{type(e).__name__}: {e}")
        payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            sock.sendall(_HEADER.pack(len(payload)) + payload)
        except OSError:  # the crawl closed the pool (or died) while this page was analysed
            return


class _Worker:
    """One worker process and the crawl's end of its socket."""

    def __init__(self, params: AnalysisParams) -> None:
        ours, theirs = socket.socketpair()
        context = multiprocessing.get_context("spawn")
        self.process = context.Process(
            target=serve, args=(theirs, params), name="scrapy-simhash-worker", daemon=True
        )
        self.process.start()
        theirs.close()
        ours.setblocking(False)
        self.sock = ours
        self.waiting: collections.deque[asyncio.Future[Analysis]] = collections.deque()
        self.alive = True
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox = bytearray()
        self._outbox = bytearray()

    def submit(self, values: list[Any]) -> asyncio.Future[Analysis]:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            # Attached on first use, from inside the running loop.
            self._loop = loop
            loop.add_reader(self.sock.fileno(), self._on_readable)
            # The process's sentinel becomes readable when it exits, however it dies.
            loop.add_reader(self.process.sentinel, self._on_exit)
        future: asyncio.Future[Analysis] = loop.create_future()
        if not self.alive:
            future.set_exception(WorkerDied(f"worker {self.process.pid} has exited"))
            return future
        payload = pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)
        self.waiting.append(future)
        self._outbox += _HEADER.pack(len(payload))
        self._outbox += payload
        if len(self._outbox) == _HEADER.size + len(payload):  # nothing was queued before
            self._write()
        return future

    def _write(self) -> None:
        try:
            sent = self.sock.send(self._outbox)
        except BlockingIOError:
            sent = 0
        except OSError:
            self._died()
            return
        del self._outbox[:sent]
        assert self._loop is not None
        if self._outbox:
            self._loop.add_writer(self.sock.fileno(), self._write)
        else:
            self._loop.remove_writer(self.sock.fileno())

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
        while len(inbox) - start >= _HEADER.size:
            (size,) = _HEADER.unpack_from(inbox, start)
            end = start + _HEADER.size + size
            if len(inbox) < end:
                break
            status, value = pickle.loads(inbox[start + _HEADER.size : end])
            start = end
            future = self.waiting.popleft()
            if future.done():  # cancelled while the worker was busy with it
                continue
            if status == "ok":
                future.set_result(value)
            else:
                future.set_exception(WorkerError(value))
        del inbox[:start]

    def _on_exit(self) -> None:
        # Replies already on the socket are still delivered before the loss is declared.
        self._on_readable()
        self._died()

    def _died(self) -> None:
        if not self.alive:
            return
        self.alive = False
        self._detach()
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(WorkerDied(f"worker {self.process.pid} has exited"))

    def _detach(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self.sock.fileno())
            self._loop.remove_writer(self.sock.fileno())
            self._loop.remove_reader(self.process.sentinel)
        self._loop = None

    def close(self, timeout: float) -> None:
        self._died()
        self.sock.close()  # the worker reads the end of its input and exits
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout)
        self.process.close()


class WorkerPool:
    """*size* worker processes analysing item fields with *params*.

    Processes start at once and load their dictionaries; :meth:`analyse` must be awaited
    on the event loop. A dead worker fails its pending pages with :class:`WorkerDied`;
    :meth:`replace_dead` starts new ones in its place.
    """

    def __init__(self, params: AnalysisParams, size: int) -> None:
        if size < 1:
            raise ValueError(f"a worker pool needs at least 1 process, not {size}")
        self.params = params
        self._workers = [_Worker(params) for _ in range(size)]

    @property
    def pids(self) -> list[int | None]:
        return [w.process.pid for w in self._workers]

    async def analyse(self, values: list[Any]) -> Analysis:
        """The :func:`~scrapy_simhash.dedup.analyse_fields` of *values*, from the least
        busy worker."""
        worker = min(self._workers, key=lambda w: (not w.alive, len(w.waiting)))
        return await worker.submit(values)

    def replace_dead(self) -> int:
        """Start a new process for every worker that has exited; return how many."""
        replaced = 0
        for n, worker in enumerate(self._workers):
            if not worker.alive:
                worker.close(timeout=1.0)
                self._workers[n] = _Worker(self.params)
                replaced += 1
        return replaced

    def close(self, timeout: float = 10.0) -> None:
        """Stop every worker; pages still waiting fail with :class:`WorkerDied`."""
        for worker in self._workers:
            worker.close(timeout)
        self._workers = []
