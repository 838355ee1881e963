"""What runs in a worker process (see :mod:`.workers`, the crawl's side): read the
analysis parameters, then answer each page's request with its analysis, in order, until
the crawl closes the socket. Imports the analysis and nothing of Scrapy's."""

from __future__ import annotations

import pickle
import signal
import socket
import struct
from typing import Any

from ..dedup import AnalysisParams, analyse_fields

#: Requests and replies are pickles, each after its length.
HEADER = struct.Struct("!I")


def worker_main(fd: int) -> None:
    """Entry point of a worker process: serve the socket inherited as file descriptor *fd*."""
    # The crawl shuts down gracefully on Ctrl-C and then closes the socket; the worker must
    # not die first, with pages still to answer (a SIGINT sent to it alone is ignored too).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with socket.socket(fileno=fd) as sock:
        serve(sock)


def serve(sock: socket.socket) -> None:
    """A worker's main loop: read the analysis parameters from *sock*, then answer
    requests until the crawl closes it."""
    stream = sock.makefile("rb")
    params: AnalysisParams | None = None
    while True:
        try:
            header = stream.read(HEADER.size)
            if len(header) < HEADER.size:
                return  # the crawl closed the pool
            (size,) = HEADER.unpack(header)
            request = stream.read(size)
        except OSError:  # the crawl closed the pool with replies unread, or died
            return
        if params is None:
            params = pickle.loads(request)
            # Loads the dictionaries now, while the crawl's first pages download, then says
            # so: the time limit of the pages waiting starts from here.
            analyse_fields(params, ["warm up"])
            reply: tuple[str, Any] = ("ready", None)
        else:
            values = pickle.loads(request)
            try:
                reply = ("ok", analyse_fields(params, values))
            except Exception as e:  # reported to the crawl, which keeps the page and counts it
                reply = ("error", f"{type(e).__name__}: {e}")
        payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            sock.sendall(HEADER.pack(len(payload)) + payload)
        except OSError:
            return
