"""The Redis Cluster of a spread index: its server, the names of its keys, and once the
index is open the connections to each master, the scripts and the groups of the block
plan. What the parts of :class:`~.spread.SpreadStore` (its parameters, its calls, its
anchors, its verdict, its maintenance) share, as a single-slot store's parts share its
:class:`~.slot.Slot`."""

from __future__ import annotations

from typing import Any

from ...exceptions import IndexUnavailable
from ..parameters import IndexParameters
from .guards import RedisServer
from .layout import with_layouts
from .spread_io import NotReplicated, SpreadIO
from .spread_layout import DEFAULT_HOMES, Attempts, Group, Keys, groups
from .spread_scripts import (
    CHECK,
    CHECK_ANCHORS,
    CHECK_EXACT,
    COMMIT,
    FINALIZE,
    RELEASE,
    RESOLVE,
    SETTLE_ANCHORS,
    STORE,
    STORE_HOME,
    UNLIST,
)


class Cluster:
    """The keys of the index under *server*'s prefix, over *server*'s cluster client;
    *client_kwargs*, *replicas*, *retry_for* and *lease* are the connections' to each
    master (see :class:`~.spread_io.SpreadIO`) and the protocol's."""

    def __init__(
        self,
        server: RedisServer,
        client_kwargs: dict,
        *,
        lease: float,
        replicas: int,
        retry_for: float,
    ) -> None:
        self.server = server
        self.location = server.location
        self.lease = lease
        #: The names of the keys (homes as many as the stored parameters say, once read).
        self.keys = Keys(server.prefix, DEFAULT_HOMES)
        self.attempts = Attempts()
        self._client_kwargs = client_kwargs
        self._replicas, self._retry_for = replicas, retry_for
        self._io: SpreadIO | None = None
        #: Set by :meth:`open`: the distance of a check, the groups, the scripts' SHA-1s
        #: (``check_sha``: one check script per group, its table layouts written in).
        self.max_distance = 0
        self.groups: list[Group] = []
        self.sha: dict[str, str] = {}
        self.check_sha: list[str] = []

    @property
    def client(self) -> Any:
        return self.server.client

    @property
    def io(self) -> SpreadIO:
        """The connections to each master (the index must be open)."""
        if self._io is None:
            raise IndexUnavailable(f"The index at {self.location} is closed")
        return self._io

    def open(self, parameters: IndexParameters, bucket_bits: int, max_distance: int) -> None:
        """Connect to each master and load the scripts, once the parameters (and with
        them the groups) are known."""
        self.max_distance = max_distance
        self.groups = groups(parameters, bucket_bits)
        with self.server.errors("open"):
            self._io = io = SpreadIO(
                self.client,
                self._client_kwargs,
                replicas=self._replicas,
                wait_ms=max(100, int(self.lease * 1000)),
                retry_for=self._retry_for,
            )
        self.sha = {
            name: io.script(lua)
            for name, lua in (
                ("exact", CHECK_EXACT), ("commit", COMMIT), ("finalize", FINALIZE),
                ("release", RELEASE), ("resolve", RESOLVE), ("store", STORE),
                ("store_home", STORE_HOME), ("unlist", UNLIST),
                ("check_anchors", CHECK_ANCHORS), ("settle_anchors", SETTLE_ANCHORS),
            )
        }  # fmt: skip
        self.check_sha = [io.script(with_layouts(CHECK, g.layouts)) for g in self.groups]

    def run(self, doing: str, function, *args):
        """``function(*args)`` with the driver's errors as ours (see
        :meth:`~.guards.RedisServer.errors`), and a write no replica confirmed as a
        failure."""
        if self._io is None:
            raise IndexUnavailable(f"The index at {self.location} is closed")
        with self.server.errors(doing):
            try:
                return function(*args)
            except NotReplicated as e:
                raise IndexUnavailable(
                    f"The index at {self.location} could not confirm a write on a replica "
                    f"({e}); the page was not acknowledged"
                ) from None

    def close(self) -> None:
        """Wait for the last clean-up and close the connections. Idempotent."""
        io, self._io = self._io, None
        if io is not None:
            io.close()
        self.server.close()
