"""What a check of a SQLite index reads inside its transaction: the candidates handed to
the policy (see :class:`~scrapy_simhash.index.store.Reading`)."""

from __future__ import annotations

import sqlite3

from ..base import nearest
from ..rule import Candidate, Probe, anchor_candidates, boilerplate, by_anchors
from .anchors import anchor_hits, page_summaries, seen_holding
from .sketches import stored_sketches
from .tables import BlockTables, from_signed64, to_signed64


def near_pages(
    conn: sqlite3.Connection,
    tables: BlockTables,
    fingerprint: int,
    max_distance: int,
    shares: bool,
) -> list[Candidate]:
    """The pages within *max_distance*, nearest first; with their sketches if *shares*."""
    permuted, args = tables.probe(fingerprint)
    rows = conn.execute(tables.probe_sql, args).fetchall()
    fingerprints = tables.candidates(rows, permuted, max_distance)
    if not fingerprints:
        return []
    pages = {
        page_id: (key, added_at, from_signed64(fp))
        for page_id, key, added_at, fp in conn.execute(
            f"SELECT id, key, added_at, fingerprint FROM page_view "
            f"WHERE fingerprint IN ({','.join('?' * len(fingerprints))})",
            [to_signed64(fp) for fp in fingerprints],
        )
    }
    found = nearest(fingerprint, [(i, page[2]) for i, page in pages.items()], max_distance)
    sketches = stored_sketches(conn, [i for _, i in found]) if shares else {}
    return [
        Candidate(i, pages[i][0], pages[i][2], pages[i][1], i, d, sketch=sketches.get(i))
        for d, i in found
    ]


class SqliteReading:
    """The candidates of one check, read on *conn* inside its transaction. *seen*: the
    pages seen holding the probe's anchors, as the check read them (see
    :func:`~.anchors.seen_holding`), or ``None`` to read them here."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        tables: BlockTables,
        shares: bool,
        seen: tuple[dict, dict] | None = None,
    ) -> None:
        self.conn, self.tables, self.shares, self.seen = conn, tables, shares, seen

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        return near_pages(self.conn, self.tables, fingerprint, max_distance, self.shares)

    def anchored(self, probe: Probe) -> list[Candidate]:
        """The pages sharing long paragraphs with *probe*."""
        assert probe.anchors is not None
        conn = self.conn
        hits = anchor_hits(conn, probe.anchors.hashes)
        seen, _ = self.seen or seen_holding(conn, hits, hits)
        pages = by_anchors(hits, boilerplate(seen, probe.key))
        if not pages:
            return []
        facts = page_summaries(conn, pages)
        sketches = stored_sketches(conn, facts) if self.shares else {}
        stored = {}
        for page, (summary, key, signed, added_at) in facts.items():
            fingerprint = from_signed64(signed)
            distance = (probe.fingerprint ^ fingerprint).bit_count()
            stored[page] = Candidate(
                page, key, fingerprint, added_at, page, distance,
                summary=summary, sketch=sketches.get(page),
            )  # fmt: skip
        return anchor_candidates(probe, pages, stored)
