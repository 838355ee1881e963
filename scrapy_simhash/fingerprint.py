"""Weighted terms -> 64-bit SimHash (Charikar 2002), and the distance between two of them.

Each term is hashed to 64 bits with MurmurHash3 (``mmh3.hash64``, deterministic across
processes and machines, unlike ``hash()``). For every bit position the weights of the terms
with that bit set are added and those without it subtracted; the fingerprint has a 1 where
the sum is positive. Similar texts share most heavy terms, so most sums keep their sign and
the fingerprints differ in few bits.

Weights are rounded to integers before summing so that the result does not depend on the
order in which a BLAS library adds floating-point numbers.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import mmh3
import numpy as np

from .terms import DEFAULT_TOP_N, TERMS_VERSION, TermExtractor

FINGERPRINT_BITS = 64
_WEIGHT_SCALE = 1000
_MASK64 = (1 << 64) - 1
#: Term hashes a Fingerprinter keeps before it starts its cache afresh (~100 bytes each).
_HASH_CACHE_SIZE = 500_000


def hash_term(term: str, seed: int = 0) -> int:
    """Return the unsigned 64-bit MurmurHash3 of *term* (UTF-8) under *seed*."""
    # Encoded here: mmh3 5.x crashes the interpreter (segfault) on a str holding a lone
    # surrogate, as JSON-decoded fields can ("\ud800"); valid text hashes the same.
    return mmh3.hash64(term.encode("utf-8", "surrogatepass"), seed, signed=False)[0]


def simhash(
    weighted_terms: Iterable[tuple[str, float]],
    seed: int = 0,
    *,
    cache: dict[str, bytes] | None = None,
) -> int:
    """Return the 64-bit SimHash of ``(term, weight)`` pairs; 0 for no terms.

    *cache*, if given, maps terms to their hashes (8 bytes, little-endian) and is filled as
    terms are seen; it must only ever be used with one *seed*.
    """
    pairs = list(weighted_terms)
    if not pairs:
        return 0
    if cache is None:
        rows = b"".join(_hash_bytes(term, seed) for term, _ in pairs)
    else:
        parts = []
        for term, _ in pairs:
            row = cache.get(term)
            if row is None:
                row = cache[term] = _hash_bytes(term, seed)
            parts.append(row)
        rows = b"".join(parts)
    weights = np.array([round(weight * _WEIGHT_SCALE) for _, weight in pairs], dtype=np.int64)
    # One row of 64 bits per term, least significant bit first.
    bits = np.unpackbits(
        np.frombuffer(rows, dtype=np.uint8).reshape(-1, 8), axis=1, bitorder="little"
    )
    # The sum of +weight where a bit is set and -weight where not is positive exactly when
    # the weights of the set bits are more than half of all the weight.
    set_weight = weights @ bits
    packed = np.packbits(2 * set_weight > weights.sum(), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def _hash_bytes(term: str, seed: int) -> bytes:
    return hash_term(term, seed).to_bytes(8, "little")


def hamming_distance(a: int, b: int) -> int:
    """Return the number of bit positions in which the 64-bit fingerprints *a* and *b* differ."""
    return ((a ^ b) & _MASK64).bit_count()


def format_fingerprint(fingerprint: int) -> str:
    """The one text form of a fingerprint: 16 lower-case hex digits."""
    return f"{fingerprint:016x}"


def parse_fingerprint(text: str) -> int:
    """Inverse of :func:`format_fingerprint` (accepts an optional ``0x`` prefix)."""
    value = int(text.strip().removeprefix("0x"), 16)
    if not 0 <= value <= _MASK64:
        raise ValueError(f"{text!r} is not a 64-bit fingerprint")
    return value


class Fingerprinter:
    """Text -> 64-bit SimHash with fixed parameters.

    *top_n* is how many of the heaviest TF-IDF terms count; *seed* keys the term hash (a
    secret seed stops anyone who knows the public hash from forging a collision);
    *segmenter* picks the Chinese word segmenter (``"auto"``, ``"jieba"``, ``"rjieba"``),
    which never changes a fingerprint.
    """

    def __init__(
        self, *, top_n: int = DEFAULT_TOP_N, seed: int = 0, segmenter: str = "auto"
    ) -> None:
        if not 0 <= seed < 2**32:
            raise ValueError(f"seed={seed} must be between 0 and 2**32 - 1")
        self.extractor = TermExtractor(top_n=top_n, segmenter=segmenter)
        self.top_n = top_n
        self.seed = seed
        # Term -> hash; a page's heavy terms recur on many pages of a site.
        self._hashes: dict[str, bytes] = {}

    @property
    def signature(self) -> str:
        """Everything that decides the fingerprint of a text, stored in every index.

        The seed itself is not written out (it may be a secret); its hash is.
        """
        seed_tag = "0" if self.seed == 0 else format_fingerprint(hash_term(str(self.seed), 1))
        return f"simhash64/terms-v{TERMS_VERSION}/top{self.top_n}/seed-{seed_tag}"

    def terms(self, text: str) -> list[tuple[str, float]]:
        return self.extractor.terms(text)

    def simhash(self, weighted_terms: Iterable[tuple[str, float]]) -> int:
        """:func:`simhash` with this fingerprinter's seed and its cache of term hashes."""
        if len(self._hashes) > _HASH_CACHE_SIZE:
            self._hashes = {}
        return simhash(weighted_terms, self.seed, cache=self._hashes)

    def fingerprint(self, text: str) -> int:
        return self.simhash(self.extractor.terms(text))


@functools.cache
def default_fingerprinter() -> Fingerprinter:
    """The fingerprinter behind :func:`fingerprint`: default parameters, built once."""
    return Fingerprinter()


def fingerprint(text: str) -> int:
    """Return the 64-bit SimHash of *text* with the default parameters (0 <= fp < 2**64).

    Call :func:`scrapy_simhash.text.normalize_text` first for text from the wild; the
    pipeline does.
    """
    return default_fingerprinter().fingerprint(text)
