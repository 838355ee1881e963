"""The methods quality.py compares: ours (by distance, with paragraph anchors, with the share
check, with each extractor) and the peers (the ``simhash`` package, trafilatura's Simhash,
MinHash LSH). Each signs a document and flags the pairs of signatures it calls duplicates.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace

import numpy as np
from quality_data import JACCARD, MAX_DISTANCE, Doc

from scrapy_simhash.analysis.fingerprint import Fingerprinter
from scrapy_simhash.anchors import DEFAULT_ANCHORS, MAX_ANCHOR_PAGES, contained
from scrapy_simhash.dedup import Analyser
from scrapy_simhash.extract.extractors import get_extractor
from scrapy_simhash.index.rule import Candidate, Probe, decide
from scrapy_simhash.sketch import DEFAULT_MIN_SHARE

# ------------------------------------------------------------------------------ methods


class Method:
    """Signs documents; flags pairs of signatures as duplicates."""

    name = ""

    def sign(self, doc: Doc) -> object:
        raise NotImplementedError

    def flagged(self, signatures: list) -> set[tuple[int, int]]:
        """All pairs (i < j) this method calls duplicates."""
        raise NotImplementedError

    def same(self, a: object, b: object) -> bool:
        return bool(self.flagged([a, b]))


def _pairs_within(values: list[int | None], distance: int) -> set[tuple[int, int]]:
    """Index pairs of 64-bit values within *distance* bits (None never matches)."""
    ids = [i for i, v in enumerate(values) if v is not None]
    array = np.array([values[i] for i in ids], dtype=np.uint64)
    found = set()
    for k in range(len(ids) - 1):
        near = np.nonzero(np.bitwise_count(array[k + 1 :] ^ array[k]) <= distance)[0]
        found.update((ids[k], ids[k + 1 + j]) for j in near)
    return found


def _pairs_equal(values: list[object | None]) -> set[tuple[int, int]]:
    groups: dict[object, list[int]] = defaultdict(list)
    for i, v in enumerate(values):
        if v is not None:
            groups[v].append(i)
    return {(a, b) for g in groups.values() for x, a in enumerate(g) for b in g[x + 1 :]}


class Ours(Method):
    def __init__(self, extractor: str = "builtin", **params) -> None:
        self.extract = get_extractor(extractor)
        min_terms = params.pop("min_terms", 20)
        self.dedup = Analyser(
            Fingerprinter(segmenter="auto", **params), min_terms=min_terms, anchors=0
        )
        label = ", ".join(f"{k}={v}" for k, v in params.items())
        self.name = f"ours ({extractor}{', ' + label if label else ''})"
        self.extractor_name = extractor

    def text(self, doc: Doc) -> str:
        """The text analysed: the built-in extractor's is the document's own text."""
        if doc.html is None or self.extractor_name == "builtin":
            return doc.text
        return self.extract(doc.html)

    def sign(self, doc: Doc) -> object:
        analysis = self.dedup.analyse(self.text(doc))
        return (analysis.kind, analysis.value)

    @staticmethod
    def flagged(signatures, distance: int = MAX_DISTANCE):
        near = _pairs_within([v if k == "simhash" else None for k, v in signatures], distance)
        exact = _pairs_equal([v if k == "short" else None for k, v in signatures])
        return near | exact

    @staticmethod
    def distance(a, b) -> int:
        """Bits between two signatures; short texts are 0 apart or never near (99)."""
        (kind_a, value_a), (kind_b, value_b) = a, b
        if kind_a != kind_b or kind_a == "empty":
            return 99
        if kind_a == "short":
            return 0 if value_a == value_b else 99
        return (value_a ^ value_b).bit_count()


class OursAnchors(Ours):
    """Ours at its defaults: by distance, or by containment (paragraph anchors)."""

    def __init__(self, extractor: str = "builtin") -> None:
        super().__init__(extractor)
        self.dedup.anchors = DEFAULT_ANCHORS
        self.name = f"ours ({extractor}, anchors)"

    def sign(self, doc: Doc) -> object:
        analysis = self.dedup.analyse(self.text(doc))
        return (analysis.kind, analysis.value, analysis.anchors)

    @staticmethod
    def flagged(signatures, distance: int = MAX_DISTANCE):
        found = Ours.flagged([(k, v) for k, v, _ in signatures], distance)
        holders: dict[int, list[int]] = defaultdict(list)
        for i, (_, _, anchors) in enumerate(signatures):
            for h in anchors.hashes if anchors else ():
                holders[h].append(i)
        shared: Counter[tuple[int, int]] = Counter()
        for docs in holders.values():
            if len(docs) <= MAX_ANCHOR_PAGES + 1:
                shared.update((a, b) for x, a in enumerate(docs) for b in docs[x + 1 :])
        for (a, b), count in shared.items():
            if count >= 2 and (a, b) not in found:
                mine, theirs = signatures[a][2], signatures[b][2]
                hashes, chars = mine.shared_with(theirs.hashes)
                if contained(len(hashes), chars, mine.summary, theirs.summary):
                    found.add((a, b))
        return found


class OursShared(OursAnchors):
    """Ours at its defaults: a pair found by distance or by paragraph anchors, confirmed
    by the share check (``SIMHASH_MIN_SHARE``) of the later page held by the earlier, as
    the crawl's one rule (``scrapy_simhash.index.rule.decide``) says."""

    def __init__(self, extractor: str = "builtin") -> None:
        super().__init__(extractor)
        self.name = f"ours ({extractor}, anchors and share check)"

    def sign(self, doc: Doc) -> object:
        analysis = self.dedup.analyse(self.text(doc))
        return (analysis.kind, analysis.value, analysis.anchors, analysis.sketch)

    @staticmethod
    def flagged(signatures, distance: int = MAX_DISTANCE):
        bare = [(kind, value, anchors) for kind, value, anchors, _ in signatures]
        candidates = Ours.flagged([(k, v) for k, v, _ in bare], distance)
        holders: dict[int, list[int]] = defaultdict(list)
        for i, (_, _, anchors) in enumerate(bare):
            for h in anchors.hashes if anchors else ():
                holders[h].append(i)
        for docs in holders.values():
            if len(docs) <= MAX_ANCHOR_PAGES + 1:
                candidates.update((a, b) for x, a in enumerate(docs) for b in docs[x + 1 :])
        return {pair for pair in candidates if _confirmed(signatures, *pair, distance)}


def _confirmed(signatures, a: int, b: int, distance: int) -> bool:
    """Whether the crawl's rule drops page *b* checked with page *a* stored."""
    kind_a, value_a, anchors_a, sketch_a = signatures[a]
    kind_b, value_b, anchors_b, sketch_b = signatures[b]
    if kind_a != kind_b or kind_a == "empty":
        return False
    if kind_a == "short":
        return value_a == value_b
    apart = (value_a ^ value_b).bit_count()
    stored = sketch_a.stored() if sketch_a else None
    near = Candidate(a, "a", value_a, 0.0, a, apart, sketch=stored)
    found = [near]
    if anchors_a and anchors_b:
        shared, _ = anchors_b.shared_with(anchors_a.hashes)
        found.append(
            replace(near, found="contained", shared=tuple(shared), summary=anchors_a.summary)
        )
    probe = Probe("b", value_b, anchors_b, sketch_b)
    return (
        decide(probe, found, max_distance=distance, min_share=DEFAULT_MIN_SHARE).candidate
        is not None
    )


class SimhashPackage(Method):
    name = "simhash package (defaults)"

    def __init__(self) -> None:
        from simhash import Simhash

        class Patched(Simhash):
            # Under numpy 2 the package overflows uint8 for a feature seen over 255 times
            # (OverflowError); this computes what it computes under numpy 1.
            @staticmethod
            def _bitarray_from_bytes(b):
                return np.unpackbits(np.frombuffer(b, dtype=">B")).astype(np.int64)

        self.simhash = Patched

    def sign(self, doc):
        return self.simhash(doc.text).value if doc.text.strip() else None

    def flagged(self, signatures):
        return _pairs_within(signatures, MAX_DISTANCE)


class TrafilaturaSimhash(Method):
    name = "trafilatura Simhash"

    def __init__(self) -> None:
        from trafilatura.deduplication import Simhash

        self.simhash = Simhash

    def sign(self, doc):
        return self.simhash(doc.text).hash if doc.text.strip() else None

    def flagged(self, signatures):
        return _pairs_within(signatures, MAX_DISTANCE)


class MinHashLSH(Method):
    name = f"MinHash LSH (datasketch, threshold {JACCARD}, 128 perm)"

    def __init__(self) -> None:
        from datasketch import MinHash, MinHashLSH

        self.minhash, self.lsh = MinHash, MinHashLSH

    def sign(self, doc):
        if not doc.truth:
            return None
        m = self.minhash(num_perm=128, seed=1)
        m.update_batch([s.to_bytes(8, "little", signed=True) for s in doc.truth])
        return m

    def flagged(self, signatures):
        lsh = self.lsh(threshold=JACCARD, num_perm=128)
        found = set()
        for i, m in enumerate(signatures):
            if m is None:
                continue
            found.update((j, i) for j in lsh.query(m))
            lsh.insert(i, m)
        return found


def methods(extractors: bool, peers: bool = True) -> list[Method]:
    chosen: list[Method] = [Ours("builtin"), OursAnchors("builtin")]
    if extractors:
        chosen += [Ours("trafilatura"), Ours("none")]
    if not peers:  # the peers are not even built: their packages need not be installed
        return chosen
    return [*chosen, SimhashPackage(), TrafilaturaSimhash(), MinHashLSH()]
