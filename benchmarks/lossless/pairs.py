"""Copies left: the pairs of pages of a crawl whose texts are nearly the same by the ground
truth (character 5-gram Jaccard of :mod:`.truth`'s text at least :data:`PAIR_JACCARD`), and
those of them whose two pages the crawl both kept. Goal (issue #41): at most 2% of the pairs.

The pairs are found by MinHash LSH (datasketch, at a threshold well below the pairs'),
each candidate then measured exactly: a pair the LSH misses is one whose signatures agree
on no band, about one in a million at 0.9.
"""

from __future__ import annotations

#: Pages this alike by the truth are copies, one of which should go.
PAIR_JACCARD = 0.9
#: The goal: the share of those pairs whose two pages are both kept, at most.
PAIR_GOAL = 0.02
_PERMUTATIONS = 128
_LSH_THRESHOLD = 0.7


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def close_pairs(grams: dict[str, frozenset[str]]) -> list[tuple[str, str, float]]:
    """``(key, key, Jaccard)`` of every pair of *grams* (``key -> its grams``) at least
    :data:`PAIR_JACCARD` alike, sorted."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=_LSH_THRESHOLD, num_perm=_PERMUTATIONS)
    signatures = {}
    for key, found in grams.items():
        if found:
            signature = MinHash(num_perm=_PERMUTATIONS)
            signature.update_batch([gram.encode("utf-8") for gram in found])
            signatures[key] = signature
            lsh.insert(key, signature)
    pairs = set()
    for key, signature in signatures.items():
        for other in lsh.query(signature):
            if other != key:
                pairs.add(tuple(sorted((key, other))))
    found = [(a, b, jaccard(grams[a], grams[b])) for a, b in pairs]
    return sorted((a, b, round(j, 4)) for a, b, j in found if j >= PAIR_JACCARD)


def both_kept(pairs: list[tuple[str, str, float]], dropped: set[str]) -> list[tuple]:
    """The *pairs* neither page of which the crawl dropped."""
    return [pair for pair in pairs if pair[0] not in dropped and pair[1] not in dropped]
