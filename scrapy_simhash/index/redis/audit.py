"""The audit log of a Redis index, either layout: streams of :class:`DropRecord` entries.

A single-slot index writes one stream (``{prefix}:drops``); a spread one
``DROP_STREAMS`` of them, a record going to the stream its key's CRC names, so that no
shard takes every drop. Reading merges the streams by the writer's time.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence
from typing import Any

from ..stored import DropRecord
from .guards import RedisServer
from .spread_layout import crc

#: Entries read or removed per command.
_BATCH = 1000
#: Entry ids are the server's clock in ms, ``at`` the writer's: reads by time start (and
#: removals end) this many seconds beyond the time asked for.
_SKEW = 600


class RedisAuditLog:
    """The audit log in *streams* (names of stream keys), written through *server*."""

    def __init__(self, server: RedisServer, streams: Sequence[str]) -> None:
        self.server = server
        self.streams = list(streams)

    def add(self, record: DropRecord) -> None:
        fields: dict[str, Any] = {
            "key": record.key,
            "kept": record.kept_key,
            "distance": record.distance,
            "exact": int(record.exact),
            "at": repr(record.at),
        }
        if record.unchanged:
            fields["unchanged"] = 1
        if record.shared:
            fields["shared"] = record.shared
        if record.share is not None:
            fields["share"] = repr(float(record.share))
        stream = self.streams[crc(record.key) % len(self.streams)]
        with self.server.errors("record a drop"):
            self.server.client.xadd(stream, fields)

    def _entries(self, stream: str, start: str, end: str = "+") -> Iterator[tuple[str, dict]]:
        while True:
            with self.server.errors("read the drops"):
                batch = self.server.client.xrange(stream, min=start, max=end, count=_BATCH)
            yield from batch
            if len(batch) < _BATCH:
                return
            start = "(" + batch[-1][0]

    def drops(self, since: float | None) -> Iterator[DropRecord]:
        """The records, oldest first (by the writer's time, then each stream's order)."""
        start = "-" if since is None else f"{max(0, int((since - _SKEW) * 1000))}-0"

        def records(stream: str) -> Iterator[tuple[float, str, DropRecord]]:
            for entry, fields in self._entries(stream, start):
                record = _record(fields)
                if since is None or record.at >= since:
                    yield record.at, entry, record

        for _, _, record in heapq.merge(*(records(s) for s in self.streams)):
            yield record

    def expire(self, older_than: float) -> int:
        """Remove the records written before *older_than* (by the writer's clock, so
        that the result does not depend on the server's); return how many."""
        end = f"{int((older_than + _SKEW) * 1000)}-0"
        removed = 0
        for stream in self.streams:
            doomed = [
                entry
                for entry, fields in self._entries(stream, "-", end)
                if float(fields["at"]) < older_than
            ]
            for first in range(0, len(doomed), _BATCH):
                with self.server.errors("remove audit-log entries"):
                    removed += self.server.client.xdel(stream, *doomed[first : first + _BATCH])
        return removed


def _record(fields: dict[str, str]) -> DropRecord:
    return DropRecord(
        fields["key"],
        fields["kept"],
        int(fields["distance"]),
        fields["exact"] == "1",
        float(fields["at"]),
        fields.get("unchanged") == "1",
        int(fields.get("shared", 0)),
        float(fields["share"]) if "share" in fields else None,
    )
