"""Weighted terms -> 64-bit SimHash (Charikar 2002), and the distance between two of them.

Each term is hashed to 64 bits with MurmurHash3 (``mmh3.hash64``, deterministic across
processes and machines, unlike ``hash()``), or, with a secret seed, with BLAKE2b keyed by
it (see :func:`seed_from_secret`). For every bit position the weights of the terms
with that bit set are added and those without it subtracted; the fingerprint has a 1 where
the sum is positive. Similar texts share most heavy terms, so most sums keep their sign and
the fingerprints differ in few bits.

Weights are rounded to integers before summing so that the result does not depend on the
order in which a BLAS library adds floating-point numbers.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable

import mmh3

from ..features import DEFAULT_TOP_N, feature_signature
from .speedups import compiled
from .terms import TermExtractor

_WEIGHT_SCALE = 1000
_MASK64 = (1 << 64) - 1
# Scaled weights must fit an int64, as they had to when each was converted by round().
_MAX_SCALED = 2.0**63
_WEIGHT_RANGE = f"term weights must be finite and below {_MAX_SCALED / _WEIGHT_SCALE:g}"
#: Term hashes a Fingerprinter keeps before it starts its cache afresh (~100 bytes each).
_HASH_CACHE_SIZE = 500_000
#: The compiled combine (None: :func:`combine_numpy`, which gives the same).
combine_compiled = compiled("combine")
#: The compiled combine of (term, weight) pairs whose hashes are all cached (None where
#: it is not built): :func:`simhash` with a cache, without its lists and joins.
combine_cached = compiled("combine_cached")


#: Bytes of a secret seed: 128 bits, a key space no one can search.
SEED_BYTES = 16
#: Characters a passphrase needs at least (a random hex key is better still).
MIN_PASSPHRASE = 12
_HEX_KEY = re.compile(r"^[0-9a-fA-F]{32}$")
#: Digits only: a key of the wrong length (or a guessable number), not a passphrase.
_HEX = re.compile(r"^[0-9a-fA-F]+$")
# Passphrases are stretched with scrypt, so that each guess costs ~16 MB and tens of ms.
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "salt": b"scrapy-simhash/secret/v1"}


def seed_from_secret(secret: str) -> bytes:
    """The 16-byte seed for ``SIMHASH_SECRET``: 32 hex digits are the seed itself; other
    text is a passphrase (at least 12 characters, not only hex digits) stretched with
    scrypt."""
    if not isinstance(secret, str):
        raise ValueError("the secret must be a string: 32 hex digits or a passphrase")
    secret = secret.strip()
    if _HEX_KEY.match(secret):
        return bytes.fromhex(secret)
    if len(secret) < MIN_PASSPHRASE or _HEX.match(secret):
        raise ValueError(
            f"a secret must be 32 hex digits (python -c 'import secrets; "
            f"print(secrets.token_hex(16))') or a passphrase of at least {MIN_PASSPHRASE} "
            f"characters (not only hex digits), not {len(secret)} characters"
        )
    bits = passphrase_bits(secret)
    if bits < MIN_PASSPHRASE_BITS:
        raise ValueError(
            f"the passphrase is too easy to guess (about {bits:.0f} bits by a rough "
            f"estimate, {MIN_PASSPHRASE_BITS} needed: words and numbers count as much as a "
            "word list and a dictionary attack make them). Use a random key, from "
            "`scrapy-simhash secret`, or more unrelated words"
        )
    return hashlib.scrypt(secret.encode("utf-8"), dklen=SEED_BYTES, **_SCRYPT)


#: Least estimated strength of a passphrase, in bits. The key id in an index lets anyone
#: test guesses offline, at one scrypt each: tens of guesses per second per core
#: (benchmarks/secret_guesses.py), so 2**50 guesses take about a million core-years.
MIN_PASSPHRASE_BITS = 50
_TOKENS = re.compile(r"[^\W\d_]+|\d+|\s+|.", re.UNICODE)


def passphrase_bits(passphrase: str) -> float:
    """A rough, cautious estimate of the bits of guessing work in *passphrase*: a run of
    letters counts as a word from a list of 8,000 (13 bits) unless it is shorter, or
    longer than 12 letters (then 2 bits a letter, as glued English words); a run of
    non-Latin letters 6 bits a letter; digits 3.3 bits each; a space or separator 1 bit;
    any other character 6 bits. Never more than the bits of its characters drawn at
    random."""
    bits = 0.0
    for token in _TOKENS.findall(passphrase):
        if token.isalpha():
            if not token.isascii():
                bits += 6 * len(token)
            elif len(token) > 12:
                bits += 2 * len(token)
            else:
                bits += min(13.0, 4.7 * len(token))
        elif token.isdigit():
            bits += 3.32 * len(token)
        elif token.isspace() or token in "-_.,":
            bits += 1.0
        else:
            bits += 6.0
    return min(bits, 6.6 * len(passphrase))


def _check_seed(seed: bytes | int | None) -> bytes | None:
    """``None`` for the public hash (``0`` and ``None`` both mean it), else the 16 bytes."""
    if seed is None or (isinstance(seed, int) and seed == 0):
        return None
    if isinstance(seed, bytes) and len(seed) == SEED_BYTES:
        return seed
    raise ValueError(
        f"a seed is {SEED_BYTES} bytes from seed_from_secret() (SIMHASH_SECRET), or 0 for "
        "the public hash; integer seeds are no longer accepted, as one below 2**32 can be "
        "found from the fingerprints of a few known pages"
    )


def hash_term(term: str, seed: bytes | int | None = None) -> int:
    """Return the unsigned 64-bit hash of *term* (UTF-8): MurmurHash3 without a seed (or
    with ``0``), BLAKE2b keyed with a 16-byte *seed*."""
    # Encoded here: mmh3 5.x crashes the interpreter (segfault) on a str holding a lone
    # surrogate, as JSON-decoded fields can ("\ud800"); valid text hashes the same.
    data = term.encode("utf-8", "surrogatepass")
    key = _check_seed(seed)
    if key is None:
        return mmh3.hash64(data, 0, signed=False)[0]
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, key=key).digest(), "little")


def simhash(
    weighted_terms: Iterable[tuple[str, float]],
    seed: bytes | int | None = None,
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
    terms, weight_list = zip(*pairs, strict=True)
    if cache is None:
        rows = b"".join([_hash_bytes(term, seed) for term in terms])
    else:
        # Looked up in C; only the terms not seen before are hashed one by one.
        parts = list(map(cache.get, terms))
        if None in parts:
            for i, row in enumerate(parts):
                if row is None:
                    term = terms[i]
                    row = cache.get(term)  # the same term may be missing twice
                    if row is None:
                        row = cache[term] = _hash_bytes(term, seed)
                    parts[i] = row
        rows = b"".join(parts)
    if combine_compiled is not None:
        try:
            fingerprint = combine_compiled(rows, weight_list)
        except TypeError:  # weights that are not numbers to C: numpy converts what it can
            pass
        else:
            if fingerprint is None:
                raise ValueError(_WEIGHT_RANGE)
            return fingerprint
    return combine_numpy(rows, weight_list)


def combine_numpy(rows: bytes, weights: Iterable[float]) -> int:
    """The SimHash of the 64-bit term hashes *rows* (8 bytes each, little-endian) with
    their *weights*: the pure-Python form (numpy) of the compiled combine."""
    # Imported here: where the compiled form runs, a crawl's process never needs numpy, and
    # its thousands of module objects would only lengthen every full garbage collection.
    import numpy as np

    # np.rint rounds half to even, as round() does, on the same float64 products.
    scaled = np.rint(np.array(weights, dtype=np.float64) * _WEIGHT_SCALE)
    if not np.all(np.abs(scaled) < _MAX_SCALED):  # also False for NaN
        raise ValueError(_WEIGHT_RANGE)
    integers = scaled.astype(np.int64)
    # One row of 64 bits per term, least significant bit first.
    bits = np.unpackbits(
        np.frombuffer(rows, dtype=np.uint8).reshape(-1, 8), axis=1, bitorder="little"
    )
    # The sum of +weight where a bit is set and -weight where not is positive exactly when
    # the weights of the set bits are more than half of all the weight.
    set_weight = integers @ bits
    packed = np.packbits(2 * set_weight > integers.sum(), bitorder="little")
    return int.from_bytes(packed.tobytes(), "little")


def _hash_bytes(term: str, seed: bytes | int | None) -> bytes:
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

    *top_n* is how many of the heaviest TF-IDF terms count; *seed* (16 bytes from
    :func:`seed_from_secret`) keys the term hash: a secret seed stops anyone who knows the
    public hash from forging a collision;
    *segmenter* picks the Chinese word segmenter (``"auto"``, ``"jieba"``, ``"rjieba"``),
    which never changes a fingerprint.
    """

    def __init__(
        self,
        *,
        top_n: int = DEFAULT_TOP_N,
        seed: bytes | int | None = None,
        segmenter: str = "auto",
    ) -> None:
        self.seed = _check_seed(seed)
        #: Text -> weighted terms (not "extractor": that word names the HTML main-content
        #: extractor, SIMHASH_EXTRACTOR).
        self.term_extractor = TermExtractor(top_n=top_n, segmenter=segmenter)
        self.top_n = top_n
        # Term -> hash; a page's heavy terms recur on many pages of a site.
        self._hashes: dict[str, bytes] = {}

    @property
    def signature(self) -> str:
        """Everything that decides the fingerprint of a text, stored in every index.

        A secret seed is not written out, only an id of it (``key-`` and 16 hex digits):
        the seed has 128 bits, and one from a passphrase costs an scrypt per guess.
        """
        if self.seed is None:
            return feature_signature(top_n=self.top_n)
        key_id = hashlib.blake2b(self.seed, digest_size=8, person=b"simhash-key-id").hexdigest()
        return feature_signature(top_n=self.top_n, key_id=key_id)

    def terms(self, text: str) -> list[tuple[str, float]]:
        return self.term_extractor.terms(text)

    def simhash(self, weighted_terms: Iterable[tuple[str, float]]) -> int:
        """:func:`simhash` with this fingerprinter's seed and its cache of term hashes."""
        if len(self._hashes) > _HASH_CACHE_SIZE:
            self._hashes = {}
        if combine_cached is not None and type(weighted_terms) is list:
            # Where every term's hash is cached (the common case: a page's heavy terms
            # recur), one call; else (None) simhash() hashes the new terms.
            fingerprint = combine_cached(weighted_terms, self._hashes)
            if fingerprint is not None:
                return fingerprint
        return simhash(weighted_terms, self.seed, cache=self._hashes)

    def fingerprint(self, text: str) -> int:
        return self.simhash(self.term_extractor.terms(text))


@functools.cache
def default_fingerprinter() -> Fingerprinter:
    """The fingerprinter behind :func:`fingerprint`: default parameters, built once."""
    return Fingerprinter()


def fingerprint(text: str) -> int:
    """Return the 64-bit SimHash of *text* with the default parameters (0 <= fp < 2**64).

    Call :func:`scrapy_simhash.extract.text.normalize_text` first for text from the wild; the
    pipeline does.
    """
    return default_fingerprinter().fingerprint(text)
