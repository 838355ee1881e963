"""Processes checking contained or near copies at the same moments (issue 43, failure 3).

Each group is an article and the article plus a paragraph of its own (``contained``), or
the article with one word changed (``near``), under two keys.
Every process checks every group in turn, all of them released together by a barrier: the
even processes the article, the odd ones the longer page. Whatever the order, one of the
two pages holds the other (the article is contained in the longer page, and holds 400 of
its 424 words; a near copy holds all of it but a word), so exactly one key of each group
may be stored. Then one process checks, per group, a third page, the article plus another
paragraph (or with another word changed): three pages seen holding the article's
paragraphs, so they are no boilerplate and it is dropped.

Used by ``tests/index/test_contained_race.py`` and ``benchmarks/contained_race.py``.
"""

from __future__ import annotations

import multiprocessing
import random
from collections import Counter
from dataclasses import dataclass

from prose import prose

from scrapy_simhash import Fingerprinter, open_index
from scrapy_simhash.dedup import Analyser

#: Seconds a process waits at the barrier for the others before the race fails.
BARRIER_TIMEOUT = 120


def page_text(group: int, extra: int | None) -> str:
    """The article of *group* (10 paragraphs of 40 words), with paragraph *extra* of its
    own added: 24 words, 8 made-up ones repeated (often far enough from the article's
    fingerprint to be found by the anchors only), small enough for the article to hold
    400 of the longer page's 424 words."""
    paragraphs = prose(400, seed=group)
    if extra is not None:
        rng = random.Random(1_000_003 * (group + 1) + extra)
        letters = "abcdefghijklmnopqrstuvwxyz"
        own = ["".join(rng.choices(letters, k=rng.randint(5, 9))) for _ in range(8)]
        paragraphs.append(" ".join(rng.choices(own, k=24)))
    return "\n\n".join(paragraphs)


def near_text(group: int, variant: int) -> str:
    """The article of *group* with one word of its fourth paragraph changed (*variant*
    names the new word): a near copy, within the distance and held by the article."""
    paragraphs = prose(400, seed=group)
    words = paragraphs[3].split()
    words[len(words) // 2] = f"variant{'x' * (variant + 1)}"
    paragraphs[3] = " ".join(words)
    return "\n\n".join(paragraphs)


def copy_text(kind: str, group: int, variant: int) -> str:
    """Copy *variant* of the article of *group*: contained in it or near it (*kind*)."""
    return page_text(group, variant) if kind == "contained" else near_text(group, variant)


def page_key(group: int, which: str) -> str:
    return f"https://group-{group}.example/{which}"


@dataclass(frozen=True)
class RaceResult:
    groups: int
    workers: int
    #: groups with more than one of their two keys stored
    kept_twice: int
    #: later contained copies (one a group, checked alone) that were kept
    later_kept: int
    #: outcomes of the race, by status
    statuses: dict[str, int]


def _check(index, analyser: Analyser, text: str, key: str) -> str:
    a = analyser.analyse(text)
    return index.check_and_add(a.value, key, a.anchors, a.sketch).status


def _worker(uri: str, kind: str, worker: int, groups: int, barrier, results) -> None:
    analyser = Analyser(Fingerprinter())
    longer = worker % 2 == 1
    texts = [copy_text(kind, g, 0) if longer else page_text(g, None) for g in range(groups)]
    statuses: Counter[str] = Counter()
    try:
        with open_index(uri) as index:
            for group, text in enumerate(texts):
                barrier.wait(BARRIER_TIMEOUT)
                statuses[
                    _check(index, analyser, text, page_key(group, "b" if longer else "a"))
                ] += 1
        results.put((worker, dict(statuses), None))
    except BaseException as e:  # reported to the parent, which fails
        barrier.abort()
        results.put((worker, dict(statuses), repr(e)))


def race(uri: str, groups: int, workers: int, kind: str = "contained") -> RaceResult:
    """Run the race of *kind* copies (``contained`` or ``near``) on the index at *uri*
    (created here, empty) with *workers* processes, then check the later copies; raises
    when a process failed."""
    with open_index(uri):
        pass
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(workers), context.Queue()
    processes = [
        context.Process(target=_worker, args=(uri, kind, w, groups, barrier, results))
        for w in range(workers)
    ]
    for process in processes:
        process.start()
    replies = [results.get(timeout=BARRIER_TIMEOUT * max(groups, 1)) for _ in processes]
    for process in processes:
        process.join(timeout=60)
    errors = [f"worker {w}: {error}" for w, _, error in replies if error]
    if errors:
        raise RuntimeError("; ".join(errors))
    statuses: Counter[str] = Counter()
    for _, counts, _ in replies:
        statuses.update(counts)
    analyser = Analyser(Fingerprinter())
    with open_index(uri) as index:
        stored = Counter(page.key.split("/")[2] for page in index.pages())
        later = [
            _check(index, analyser, copy_text(kind, g, 1), page_key(g, "c")) for g in range(groups)
        ]
    return RaceResult(
        groups,
        workers,
        sum(count > 1 for count in stored.values()),
        sum(status == "new" for status in later),
        dict(statuses),
    )
