"""The job over Dask collections: it runs on any ``dask.distributed`` cluster (local
processes, Kubernetes, YARN, SSH), partition by partition, with the functions of the local
mode.

Steps (each a Dask DataFrame, persisted on the cluster):

1. fingerprint: one partition per input part (:func:`.job.fingerprint_part`);
2. exact duplicates: group by (kind, fingerprint), the first record of a group stands
   for it, the others are dropped;
3. explode: one ``(table, key)`` row per first record and table of the block plan;
4. candidates: shuffle on ``(table, key)``; in each partition, buckets of one member
   are dropped and the others compared by popcount, each pair reported by one table only;
5. decide: rounds of "drop a record with a kept earlier neighbour, keep one whose earlier
   neighbours are all dropped", each a join of the edges with the state of their earlier
   end; the undecided remainder and the matches are finished on the client.

Install with ``pip install 'scrapy-simhash[dask]'``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from ...index.base import StoredPage
from .batch import (
    EMPTY,
    SIMHASH,
    Batch,
    Outcomes,
    _outcomes,
    decide_batch,
    exact_groups,
    replay,
)
from .candidates import bucket_pairs, choose_plan, table_keys
from .decide import KEPT, NEAR, UNDECIDED, Decisions, Edges, finish_in_order
from .frames import RECORD_META, as_batch, as_frame
from .job import (
    ArchiveJob,
    ArchiveResult,
    Progress,
    StageLog,
    fingerprint_part,
    part_learners,
    stored_batch,
)
from .records import DEFAULT_BLOCKSIZE, Part, plan_parts
from .templates import Learned, first_learners

_ROW_META = pd.DataFrame(
    {
        "table": pd.Series(dtype="int16"),
        "bkey": pd.Series(dtype="uint64"),
        "order": pd.Series(dtype="int64"),
        "value": pd.Series(dtype="uint64"),
    }
)
_PAIR_META = pd.DataFrame(
    {
        "earlier": pd.Series(dtype="int64"),
        "later": pd.Series(dtype="int64"),
        "distance": pd.Series(dtype="int8"),
    }
)


def fingerprint_frame(part: Part, job: ArchiveJob, sites: Learned | None = None) -> pd.DataFrame:
    return as_frame(fingerprint_part(part, job, sites))


def _learned(client: Any, parts: list[Part], job: ArchiveJob, stage: StageLog) -> Learned:
    """Each site's first records that teach its template, read on the cluster (see
    :mod:`.templates`): partitions are read at once, each without the records before it."""
    started = time.perf_counter()
    sites = Learned(first_learners(client.gather(client.map(part_learners, parts, job=job))))
    stage("templates", f"the first records of {len(sites.learners):,} sites read", started)
    return sites


def _with_text(
    frame: pd.DataFrame,
    stored: pd.DataFrame | None = None,
    columns: list[str] | None = None,
    partition_info=None,
) -> pd.DataFrame:
    """The records of *frame* that have text (their *columns*); the first partition
    gets the index's pages, *stored*, before them."""
    frame = frame[frame["kind"].to_numpy() != EMPTY]
    if stored is not None and len(stored) and (partition_info or {}).get("number") == 0:
        frame = pd.concat([stored, frame], ignore_index=True)
    return frame[columns] if columns else frame


_FIRST_META = pd.DataFrame(
    {
        "kind": pd.Series(dtype="int8"),
        "value": pd.Series(dtype="uint64"),
        "first": pd.Series(dtype="int64"),
    }
)


def _firsts(frame: pd.DataFrame) -> pd.DataFrame:
    """The first record of each group of exact duplicates (same kind and value)."""
    first = frame.groupby(["kind", "value"], sort=False)["order"].min()
    return first.rename("first").reset_index().astype({"kind": "int8", "value": "uint64"})


def _earlier_states(joined: pd.DataFrame) -> pd.DataFrame:
    """For each record of a partition of edges (shuffled on ``later``): whether an
    earlier neighbour is kept, whether one is undecided."""
    state = joined["earlier_state"].to_numpy()
    flags = pd.DataFrame(
        {
            "order": joined["later"].to_numpy(),
            "kept_before": (state == KEPT).astype(np.int8),
            "open_before": (state == UNDECIDED).astype(np.int8),
        }
    )
    return flags.groupby("order", sort=False).max().reset_index()


def _initial_state(nodes: pd.DataFrame) -> pd.DataFrame:
    """Pages of the index (negative orders) are kept; records are undecided."""
    orders = nodes["order"].to_numpy()
    return pd.DataFrame({"order": orders, "state": np.where(orders < 0, KEPT, UNDECIDED)})


def _unique(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop_duplicates()


def _ends(pairs: pd.DataFrame) -> pd.DataFrame:
    """Both ends of every pair: the records the rounds decide (and the index's pages)."""
    orders = np.concatenate([pairs["earlier"].to_numpy(), pairs["later"].to_numpy()])
    return pd.DataFrame({"order": np.unique(orders)})


def explode_frame(firsts: pd.DataFrame, blocks: int, max_distance: int) -> pd.DataFrame:
    """One row per fingerprint of *firsts* (the first record of each group of exact
    duplicates: ``kind, value, first``) and table of the plan: ``(table, bkey, order,
    value)``."""
    from ...index.blocks import BlockPlan

    plan = BlockPlan(max_distance=max_distance, blocks=blocks)
    simhash = firsts["kind"].to_numpy() == SIMHASH
    values = firsts["value"].to_numpy(dtype=np.uint64)[simhash]
    orders = firsts["first"].to_numpy(dtype=np.int64)[simhash]
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "table": np.full(len(values), t, dtype=np.int16),
                    "bkey": table_keys(plan, values, t),
                    "order": orders,
                    "value": values,
                }
            )
            for t in range(plan.table_count)
        ]
        or [_ROW_META],
        ignore_index=True,
    )


def pairs_frame(rows: pd.DataFrame, blocks: int, max_distance: int) -> pd.DataFrame:
    """The pairs within the distance among the rows of one partition of the shuffle:
    every bucket is whole in one partition."""
    from ...index.blocks import BlockPlan
    from .candidates import Pairs

    plan = BlockPlan(max_distance=max_distance, blocks=blocks)
    found = []
    for table, group in rows.groupby("table", sort=True):
        found.append(
            bucket_pairs(
                plan,
                max_distance,
                int(table),
                group["bkey"].to_numpy(dtype=np.uint64),
                group["order"].to_numpy(dtype=np.int64),
                group["value"].to_numpy(dtype=np.uint64),
            )
        )
    pairs = Pairs.concat(found)
    # Pairs of two index pages decide nothing.
    pairs = Pairs(*(a[pairs.later >= 0] for a in (pairs.earlier, pairs.later, pairs.distance)))
    return pd.DataFrame(
        {"earlier": pairs.earlier, "later": pairs.later, "distance": pairs.distance}
    )


def _round_state(frame: pd.DataFrame) -> pd.DataFrame:
    """The rule of one round, for the records of one partition: ``kept_before`` and
    ``open_before`` say whether an earlier neighbour is kept, or undecided."""
    state = frame["state"].to_numpy().copy()
    undecided = state == UNDECIDED
    kept_before = frame["kept_before"].fillna(0).to_numpy() > 0
    open_before = frame["open_before"].fillna(0).to_numpy() > 0
    state[undecided & kept_before] = 2
    state[undecided & ~kept_before & ~open_before] = KEPT
    return pd.DataFrame({"order": frame["order"].to_numpy(), "state": state.astype(np.int8)})


def run_dask(
    paths: list[str],
    job: ArchiveJob,
    client: Any,
    *,
    stored: list[StoredPage] | None = None,
    progress: Progress | None = None,
    blocksize: int = DEFAULT_BLOCKSIZE,
    max_rounds: int = 50,
    remainder: int = 10_000,
) -> ArchiveResult:
    """The job on the cluster of *client* (a :class:`distributed.Client`)."""
    import dask.dataframe as dd
    from distributed import wait

    stage = StageLog(progress)

    def persist(collection):
        collection = client.persist(collection)
        wait(collection)
        return collection

    started = time.perf_counter()
    parts = plan_parts(paths, blocksize)
    sites = _learned(client, parts, job, stage) if job.analysis.templates else None
    records = persist(dd.from_map(fingerprint_frame, parts, job=job, sites=sites, meta=RECORD_META))
    count = len(records)
    workers = len(client.scheduler_info()["workers"])
    stage(
        "fingerprint",
        f"{count:,} records from {len(paths)} inputs in {len(parts)} partitions, {workers} workers",
        started,
    )
    stored_b = stored_batch(stored)
    started = time.perf_counter()
    # Filters run inside the partitions (plain pandas): boolean indexing of a Dask
    # DataFrame aligns on indexes, which repeat across partitions here.
    texts = records.map_partitions(_with_text, meta=RECORD_META)
    repeated = int((texts["key"].value_counts() > 1).sum().compute())
    if len(stored_b):
        repeated += int(texts["key"].isin(set(stored_b.key.tolist())).sum().compute())
    plan, why = choose_plan(job.max_distance, job.blocks, count + len(stored_b))
    stage("plan", f"{why}; {repeated:,} repeated keys", started)
    reads_texts = job.min_share > 0 or job.analysis.anchors
    if repeated or reads_texts or any(t is not None for t in stored_b.text):
        started = time.perf_counter()
        outcomes = _decide_on_client(as_batch(records.compute()), stored_b, plan, job, repeated)
        stage("decide", _decided(outcomes), started)
    else:
        npartitions = max(records.npartitions, workers)
        pairs = _pairs(records, stored_b, plan, job, npartitions, persist, stage)
        started = time.perf_counter()
        state, rounds, left = _rounds(pairs, stored_b, npartitions, persist, max_rounds, remainder)
        stage("decide in rounds", f"{rounds} rounds, {left:,} records left undecided", started)
        started = time.perf_counter()
        outcomes = _finish(as_batch(records.compute()), stored_b, pairs, state, rounds)
        stage("decide", _decided(outcomes), started)
    return ArchiveResult(parts, outcomes, stage.lines)


def _decide_on_client(
    rec: Batch, stored_b: Batch, plan, job: ArchiveJob, repeated: int
) -> Outcomes:
    """The records decided on the client, as the local mode does: when a key repeats (it
    replaces or matches its own entry, decided in order through the index itself), or
    when the rule reads the texts (anchors, sketches), which then come to the client."""
    if repeated:
        return replay(rec, stored_b, plan, job.max_distance, job.min_share)
    outcomes = decide_batch(rec, stored_b, plan, job.max_distance, min_share=job.min_share)
    outcomes.how += "; fingerprinted on the cluster, decided on the client"
    return outcomes


def _pairs(records, stored_b: Batch, plan, job: ArchiveJob, npartitions: int, persist, stage):
    """The first records of the distinct texts, and of the index's pages, and the pairs
    of them within the distance, as a Dask DataFrame ``(earlier, later, distance)``."""
    started = time.perf_counter()
    # The index's pages join the first partition (dd.concat would align the pieces on
    # their indexes).
    everything = records.drop(columns="text").map_partitions(
        _with_text,
        as_frame(stored_b).drop(columns="text"),
        ["order", "kind", "value"],
        meta=RECORD_META.drop(columns="key"),
    )
    # Groups by shuffles and plain pandas in each partition: with Dask 2026.8, a
    # persisted groupby reduction over these partitions (whose indexes repeat) kept 94 of
    # 220 groups, where computing the same expression gave all 220.
    firsts = everything.shuffle(["kind", "value"], npartitions=npartitions).map_partitions(
        _firsts, meta=_FIRST_META
    )
    firsts = persist(firsts)
    stage("exact duplicates", f"{len(firsts):,} distinct texts", started)

    started = time.perf_counter()
    rows = firsts.map_partitions(
        explode_frame, plan.blocks, job.max_distance, meta=_ROW_META
    ).shuffle(["table", "bkey"], npartitions=npartitions)
    pairs = persist(
        rows.map_partitions(pairs_frame, plan.blocks, job.max_distance, meta=_PAIR_META)
    )
    stage("candidates", f"{len(pairs):,} pairs within distance {job.max_distance}", started)
    return pairs


def _finish(rec: Batch, stored_b: Batch, pairs, state, rounds: int) -> Outcomes:
    """The client finishes: the records the rounds left undecided in order, then the
    matches of the drops."""
    edge_frame = pairs.compute()
    edges = Edges.of(edge_frame["earlier"], edge_frame["later"], NEAR, edge_frame["distance"])
    state_frame = state.compute().sort_values("order")
    orders = state_frame["order"].to_numpy()
    decided = state_frame["state"].to_numpy().copy()
    i = np.searchsorted(orders, edges.earlier)
    j = np.searchsorted(orders, edges.later)
    finished = finish_in_order(decided, i, j)
    decisions = Decisions(orders, decided, rounds, finished)
    order, first = exact_groups(Batch.concat([stored_b, rec.take(rec.kind != EMPTY)]))
    outcomes = _outcomes(rec, stored_b, order, first, edges, decisions)
    outcomes.how = f"in rounds on the cluster ({rounds} rounds, {finished} finished in order)"
    return outcomes


def _rounds(pairs, stored_b: Batch, npartitions: int, persist, max_rounds: int, remainder: int):
    """Rounds on the cluster: the state of every record with an edge, as a Dask
    DataFrame ``(order, state)``."""
    nodes = pairs.map_partitions(_ends, meta={"order": "int64"})
    nodes = nodes.shuffle("order", npartitions=npartitions).map_partitions(
        _unique, meta={"order": "int64"}
    )
    state = persist(nodes.map_partitions(_initial_state, meta={"order": "int64", "state": "int8"}))
    edges = pairs[["earlier", "later"]]
    rounds, left = 0, int((state["state"] == UNDECIDED).sum().compute())
    while rounds < max_rounds and left > remainder:
        joined = edges.merge(
            state.rename(columns={"order": "earlier", "state": "earlier_state"}),
            on="earlier",
            how="left",
        )
        before = joined.shuffle("later", npartitions=npartitions).map_partitions(
            _earlier_states,
            meta={"order": "int64", "kept_before": "int8", "open_before": "int8"},
        )
        merged = state.merge(before, on="order", how="left")
        state = persist(
            merged.map_partitions(_round_state, meta={"order": "int64", "state": "int8"})
        )
        rounds += 1
        left = int((state["state"] == UNDECIDED).sum().compute())
    return state, rounds, left


def _decided(outcomes: Outcomes) -> str:
    kept = int(np.count_nonzero(outcomes.kept))
    return f"kept {kept:,}, dropped {len(outcomes.order) - kept:,}, {outcomes.how}"
