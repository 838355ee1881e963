"""Why two texts are (or are not) near-duplicates: their distance, and the terms behind it.

A fingerprint is the weighted vote of a text's heaviest terms; two texts are close when
their heavy terms are mostly the same. :func:`explain` lists the shared heavy terms and
the heavy terms only one text has, each with its TF-IDF weight.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..analysis.anchors import anchor_lines
from ..analysis.fingerprint import format_fingerprint, hamming_distance
from ..anchors import contained as is_contained
from ..dedup import Analysis, Deduplicator, analyse_text
from ..extract.text import normalize_characters, normalize_text
from ..index.blocks import BlockPlan
from ..index.rule import Candidate, Probe, decide
from ..sketch import share

__all__ = ["Explanation", "explain"]


@dataclass(frozen=True)
class Explanation:
    a: Analysis
    b: Analysis
    distance: int | None  #: ``None`` unless both texts were fingerprinted
    max_distance: int
    differing_bits: tuple[int, ...]
    #: blocks (of the index's plan) in which the fingerprints differ
    differing_blocks: tuple[int, ...]
    shared: list[tuple[str, float, float]]  #: (term, weight in a, weight in b)
    only_a: list[tuple[str, float]]
    only_b: list[tuple[str, float]]
    #: The long paragraphs both texts have among their anchors (see
    #: :mod:`scrapy_simhash.anchors`), and whether they make one contained in the other.
    shared_paragraphs: tuple[str, ...] = ()
    contained: bool = False
    #: They share enough to make one contained in the other, but only lists: neither
    #: page's own paragraphs are in the other (see
    #: :meth:`~scrapy_simhash.anchors.Anchors.shares_a_paragraph`).
    lists_only: bool = False
    #: The share of B's text that A holds, and of A's that B holds (``None``: unknown).
    share: float | None = None
    share_back: float | None = None
    #: What :func:`~scrapy_simhash.index.rule.decide` says of B checked with A kept:
    #: ``near``, ``contained`` or ``None`` (B is kept).
    decided: str | None = None

    @property
    def near(self) -> bool:
        return self.distance is not None and self.distance <= self.max_distance

    @property
    def test(self) -> str | None:
        """The test that makes them duplicates, as a check applies them: ``exact``,
        ``near``, then ``contained``; ``None`` when none does."""
        if self.a.kind == "short" and self.b.kind == "short":
            return "exact" if self.a.value == self.b.value else None
        return self.decided

    @property
    def duplicate(self) -> bool:
        return self.test is not None

    def as_dict(self) -> dict:
        return {
            "distance": self.distance,
            "max_distance": self.max_distance,
            "duplicate": self.duplicate,
            "test": self.test,
            "share_of_b_in_a": self.share,
            "share_of_a_in_b": self.share_back,
            "shared_paragraphs": list(self.shared_paragraphs),
            "contained": self.contained,
            "lists_only": self.lists_only,
            "a": _analysis(self.a),
            "b": _analysis(self.b),
            "differing_bits": list(self.differing_bits),
            "differing_blocks": list(self.differing_blocks),
            "shared": [{"term": t, "weight_a": wa, "weight_b": wb} for t, wa, wb in self.shared],
            "only_a": [{"term": t, "weight": w} for t, w in self.only_a],
            "only_b": [{"term": t, "weight": w} for t, w in self.only_b],
        }


def _analysis(analysis: Analysis) -> dict:
    return {
        "kind": analysis.kind,
        "fingerprint": format_fingerprint(analysis.value),
        "terms": analysis.terms,
    }


def explain(dedup: Deduplicator, text_a: str, text_b: str, *, top: int = 15) -> Explanation:
    """Compare two texts as the index would (same fingerprinter and thresholds)."""
    a, b = analyse_text(dedup, text_a), analyse_text(dedup, text_b)
    distance = None
    bits: tuple[int, ...] = ()
    blocks: tuple[int, ...] = ()
    plan: BlockPlan = dedup.index.plan
    if a.kind == "simhash" and b.kind == "simhash":
        distance = hamming_distance(a.value, b.value)
        diff = a.value ^ b.value
        bits = tuple(i for i in range(64) if diff >> i & 1)
        blocks = tuple(
            n for n, (shift, width) in enumerate(plan.spans) if diff >> shift & ((1 << width) - 1)
        )
    term_extractor = dedup.fingerprinter.term_extractor
    terms_a = dict(term_extractor.terms(normalize_text(text_a[: dedup.max_length])))
    terms_b = dict(term_extractor.terms(normalize_text(text_b[: dedup.max_length])))
    shared = sorted(
        ((t, terms_a[t], terms_b[t]) for t in terms_a.keys() & terms_b.keys()),
        key=lambda x: (-(x[1] + x[2]), x[0]),
    )
    only_a = sorted(((t, w) for t, w in terms_a.items() if t not in terms_b), key=_heaviest)
    only_b = sorted(((t, w) for t, w in terms_b.items() if t not in terms_a), key=_heaviest)
    paragraphs: tuple[str, ...] = ()
    contained = lists_only = False
    hashes: tuple[int, ...] = ()
    if a.anchors and b.anchors:
        hashes, words = a.anchors.shared_with(b.anchors.hashes)
        enough = is_contained(len(hashes), words, a.anchors.summary, b.anchors.summary)
        # Either page may be the one contained, if one of its own paragraphs is shared.
        contained = enough and (
            a.anchors.shares_a_paragraph(hashes) or b.anchors.shares_a_paragraph(hashes)
        )
        lists_only = enough and not contained
        lines = anchor_lines(
            normalize_characters(text_a[: dedup.max_length]), dedup.fingerprinter.seed
        )
        paragraphs = tuple(lines[h] for h in hashes if h in lines)
    decision = _decision(a, b, hashes, distance, plan.max_distance, dedup.index.min_share)
    return Explanation(
        a,
        b,
        distance,
        plan.max_distance,
        bits,
        blocks,
        shared[:top],
        only_a[:top],
        only_b[:top],
        paragraphs,
        contained,
        lists_only,
        share(b.sketch, a.sketch),
        share(a.sketch, b.sketch),
        decision,
    )


def _decision(
    a: Analysis,
    b: Analysis,
    hashes: tuple[int, ...],
    distance: int | None,
    max_distance: int,
    min_share: float,
) -> str | None:
    """What a check of *b* would find with only *a* stored, asked of the rule itself."""
    if distance is None:
        return None
    stored = a.sketch.stored() if a.sketch else None
    summary = a.anchors.summary if a.anchors else None
    near = Candidate("A", "A", a.value, 0.0, 0, distance, sketch=stored)
    held = replace(near, found="contained", shared=tuple(sorted(hashes)), summary=summary)
    probe = Probe("B", b.value, b.anchors, b.sketch)
    found = decide(probe, [near, held], max_distance=max_distance, min_share=min_share)
    return None if found.candidate is None else found.candidate.found


def _heaviest(pair: tuple[str, float]) -> tuple[float, str]:
    return (-pair[1], pair[0])
