"""The calls of a spread index's protocol, as ``(hash tag, script, keys, args)`` for
:meth:`~.spread_io.SpreadIO.batch`: reserving a page in its groups, releasing and
finalizing its entries there, and reading or aborting an attempt at its home; and what
the reserving calls return."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .layout import hex64
from .page_values import analysed_args, packed_sketch
from .spread_anchors import SpreadAnchors, stored_anchors
from .spread_io import Call
from .spread_layout import ABORT_TTL, MAX_ATTEMPT_AGE, Found, parse_member

if TYPE_CHECKING:
    from ...anchors import Anchors
    from ..analysed import Analysed
    from ..rule import Probe
    from .cluster import Cluster


class SpreadCalls:
    """Builds the calls of :class:`~.spread.SpreadStore` on *cluster*, with the calls of
    the page's *anchors*."""

    def __init__(self, cluster: Cluster, anchors: SpreadAnchors) -> None:
        self.cluster = cluster
        self.anchors = anchors

    def group_calls(self, fingerprint: int):
        """``(tag, set keys, members, per-table args)`` of each group of *fingerprint*."""
        calls = []
        for group in self.cluster.groups:
            tag = self.cluster.keys.group(group.block, group.value(fingerprint))
            sets, members, args = [], [], []
            for table, layout in zip(group.tables, group.layouts, strict=True):
                bucket, m = layout.split(fingerprint)
                sets.append(f"{tag}:t:{table}:{bucket}")
                members.append(m)
                key_part = fingerprint & (((1 << 64) - 1) ^ layout.rest_mask)
                args += (m, key_part >> 32, key_part & 0xFFFF_FFFF)
            calls.append((tag, sets, members, args))
        return calls

    def reserve_calls(
        self, value: int, exact: bool, txn: str, tail: str, reserve: bool, k: int | None = None
    ) -> list[Call]:
        hex_value, flag = hex64(value), "1" if reserve else "0"
        if exact:
            tag = self.cluster.keys.exact(value)
            return [
                (tag, self.cluster.sha["exact"], [f"{tag}:exact"], [hex_value, txn, tail, "", flag])
            ]
        k = self.cluster.max_distance if k is None else k
        return [
            (tag, sha, [*sets, f"{tag}:fp"], [k, *args, hex_value, txn, tail, "", flag])
            for sha, (tag, sets, _, args) in zip(
                self.cluster.check_sha, self.group_calls(value), strict=True
            )
        ]

    def release(self, exact: bool, hex_value: str, txns: list[str], tags=None) -> list[Call]:
        """Calls removing the records of *txns* under a fingerprint (or digest) from its
        groups (only those in *tags*, when given)."""
        sha = self.cluster.sha["release"]
        if exact:
            tag = self.cluster.keys.exact(int(hex_value, 16))
            return [(tag, sha, [f"{tag}:exact"], [0, hex_value, *txns])]
        return [
            (tag, sha, [*sets, f"{tag}:fp"], [len(sets), *members, hex_value, *txns])
            for tag, sets, members, _ in self.group_calls(int(hex_value, 16))
            if tags is None or tag in tags
        ]

    def finalize(self, exact: bool, hex_value: str, txn: str, tags) -> list[Call]:
        suffix = "exact" if exact else "fp"
        sha = self.cluster.sha["finalize"]
        return [(tag, sha, [f"{tag}:{suffix}"], [hex_value, txn]) for tag in tags]

    def home_keys(self, key: str, txn: str = "") -> list[str]:
        home = self.cluster.keys.home_of(key)
        return [
            f"{home}:keys", f"{home}:order", f"{home}:n", f"{home}:a:{txn}", f"{home}:pa",
            f"{home}:sk", f"{home}:an", f"{home}:how",
        ]  # fmt: skip

    def commit_call(
        self,
        key: str,
        listed: str,
        added_at: str,
        txn: str,
        anchors: Anchors | None,
        probe: Probe,
        analysed: Analysed | None,
    ) -> Call:
        """The call that lists the attempt *txn* under *key* (as *listed*) at the key's
        home unless it was aborted: step 3 of the protocol. It returns 0 if aborted, else
        1, the members the key listed before and where their anchors are (JSON)."""
        return (
            self.cluster.keys.home_of(key),
            self.cluster.sha["commit"],
            self.home_keys(key, txn),
            [key, listed, added_at, txn[:16], MAX_ATTEMPT_AGE, ABORT_TTL,
             stored_anchors(anchors), packed_sketch(probe.sketch), *analysed_args(analysed)],
        )  # fmt: skip

    def withdraw(
        self, exact: bool, hex_value: str, txn: str, key: str, reserved: list[str], anchors: dict
    ) -> list[Call]:
        """The calls that abort the attempt *txn* of a duplicate (it never commits) and
        release what it reserved: in its groups (*reserved*) and under its *anchors*."""
        own = Found(0, hex_value, txn, key, 0.0, False, exact)
        return [
            self.resolve_call(own, True),
            *self.release(exact, hex_value, [txn], set(reserved)),
            *self.anchors.settle(txn, anchors, False),
        ]

    def after_commit(
        self,
        exact: bool,
        hex_value: str,
        txn: str,
        reserved: list[str],
        anchors: dict,
        old: list[str],
        held: str,
    ) -> list[Call]:
        """The clean-up after the attempt *txn* was listed (step 4 of the protocol): its
        entries marked committed in its groups (*reserved*) and under its *anchors*; the
        entries of the pages its key listed before (*old*, their anchors *held*, as the
        commit returned them) removed."""
        calls = self.finalize(exact, hex_value, txn, reserved)
        calls += self.anchors.settle(txn, anchors, True)
        for name, value in zip(old, json.loads(held) or [""] * len(old), strict=True):
            old_exact, old_txn, old_hex = parse_member(name)
            calls += self.release(old_exact, old_hex, [old_txn])
            calls += self.anchors.release_page(old_txn, value)
        return calls

    def resolve_call(self, found: Found, wound: bool) -> Call:
        """The call that reads (*wound*: or aborts) the state of *found*'s attempt."""
        home_keys = self.home_keys(found.key, found.txn)
        return (
            self.cluster.keys.home_of(found.key),
            self.cluster.sha["resolve"],
            [home_keys[0], home_keys[3], home_keys[2]],
            [found.key, found.txn, "1" if wound else "0", ABORT_TTL],
        )

    @staticmethod
    def found(
        calls: list[Call], replies: list, exact: bool
    ) -> tuple[list[Found], list[str], list[tuple[str, Found]]]:
        """What the reserving calls returned: (the entries found, the tags where the page
        is reserved, (tag, entry) of each one found)."""
        found, reserved, where = [], [], []
        for (tag, *_), (flag, listed) in zip(calls, replies, strict=True):
            if int(flag):
                reserved.append(tag)
            for d, hex_value, txn, key, at, committed in json.loads(listed):
                entry = Found(int(d), hex_value, txn, key, float(at), committed == 1, exact)
                found.append(entry)
                where.append((tag, entry))
        return found, reserved, where

    def cleanup(self, where: list[tuple[str, Found]], states: dict[str, str]) -> list[Call]:
        """The calls that mark entries found committed as such and remove aborted ones."""
        calls = []
        for tag, found in where:
            state = states.get(found.txn)
            if state == "c":
                calls += self.finalize(found.exact, found.hex, found.txn, [tag])
            elif state == "a":
                calls += self.release(found.exact, found.hex, [found.txn], {tag})
        return calls
