"""Evasion and forgery: what an attacker can do with the public feature hash, and what a
secret and text normalisation stop.

Without ``SIMHASH_SECRET`` the term hash is public: anyone can compute, for any word, which
fingerprint bits it pushes up or down. A greedy attacker then appends a few dozen chosen
words to an unrelated page until its fingerprint lands within distance 3 of a target page,
so that the target (crawled later) is dropped as a "duplicate" of the attacker's page. With
a secret the same attack, computed against the public hash, lands nowhere near; and the
secret (128 bits, or a passphrase stretched with scrypt) cannot be searched for.
"""

from __future__ import annotations

import hashlib
import itertools
import pickle
import string

import numpy as np
import pytest
from pipelines import ARTICLE
from scrapy.settings import Settings

from scrapy_simhash.analysis.fingerprint import (
    Fingerprinter,
    hamming_distance,
    hash_term,
    seed_from_secret,
)
from scrapy_simhash.analysis.terms import jieba_idf
from scrapy_simhash.dedup import AnalysisParams, Deduplicator, analyse_fields
from scrapy_simhash.index.memory import MemoryIndex
from scrapy_simhash.settings import SimhashSettings

TARGET = ARTICLE
UNRELATED = (
    "A severe drought has left farmers in the southern provinces with half of their usual "
    "wheat harvest. Reservoirs stand at their lowest level in thirty years, and irrigation "
    "has been rationed since June. Agricultural economists expect bread prices to rise by "
    "autumn, and several cooperatives have asked the government for emergency loans, seed "
    "subsidies and a plan to modernise the ageing canals that lose much of the water."
)
#: Words the attacker may add: made-up, so that each weighs the median IDF.
CANDIDATES = ["zx" + "".join(p) for p in itertools.product(string.ascii_lowercase, repeat=2)]
REPEAT = 3  # each chosen word is appended this many times
MAX_WORDS = 60


def signs(term: str, seed) -> np.ndarray:
    """+1 / -1 for each of the 64 bits of the term's hash, least significant first."""
    h = hash_term(term, seed)
    return np.array([1.0 if h >> bit & 1 else -1.0 for bit in range(64)])


def bit_signs(fingerprint: int) -> np.ndarray:
    return np.array([1.0 if fingerprint >> bit & 1 else -1.0 for bit in range(64)])


def greedy_forgery(target_text: str, page: str, seed) -> tuple[str, int]:
    """Append chosen words to *page* until, under the hash with *seed*, its fingerprint is
    within distance 3 of *target_text*'s. Returns the forged page and the words added.

    Uses only what is public with that seed: the term extractor and the term hash.
    """
    fingerprinter = Fingerprinter(seed=seed, segmenter="rjieba")
    target = bit_signs(fingerprinter.fingerprint(target_text))
    weight = REPEAT * jieba_idf()[1]
    pool = {word: signs(word, seed) for word in CANDIDATES}
    forged, added = page, 0
    while added < MAX_WORDS:
        terms = fingerprinter.terms(forged)
        if (
            hamming_distance(fingerprinter.simhash(terms), fingerprinter.fingerprint(target_text))
            <= 3
        ):
            break
        totals = sum(w * signs(t, seed) for t, w in terms)
        best, best_score = None, None
        for word, word_signs in pool.items():
            after = totals + weight * word_signs
            wrong = np.sign(after) != target
            # Fewest wrong bits first; then the smallest total margin by which they are wrong.
            score = (int(wrong.sum()), float(np.abs(after[wrong]).sum()))
            if best_score is None or score < best_score:
                best, best_score = word, score
        assert best is not None
        del pool[best]
        forged += (" " + best) * REPEAT
        added += 1
    return forged, added


def analyse(text: str, seed):
    return Deduplicator(MemoryIndex(), Fingerprinter(seed=seed, segmenter="rjieba")).analyse(text)


@pytest.fixture(scope="module")
def forged() -> tuple[str, int]:
    return greedy_forgery(TARGET, UNRELATED, seed=0)


def test_pages_are_unrelated():
    distance = hamming_distance(analyse(TARGET, 0).value, analyse(UNRELATED, 0).value)
    assert distance > 10


def test_forgery_succeeds_against_the_public_hash(forged):
    page, added = forged
    assert added <= 50, f"the attack needed {added} words"
    fake, target = analyse(page, 0), analyse(TARGET, 0)
    assert fake.kind == target.kind == "simhash"
    assert hamming_distance(fake.value, target.value) <= 3
    # In a crawl without the share check: the attacker's page is seen first, and the
    # real page is then dropped.
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(seed=0, segmenter="rjieba"), sketch=False)
    assert dedup.check_text(page, "https://attacker.example/").match is None
    verdict = dedup.check_text(TARGET, "https://news.example/tram")
    assert verdict.match is not None
    assert verdict.match.key == "https://attacker.example/"


def test_the_share_check_keeps_the_page_a_forgery_reaches_the_distance_of(forged):
    # The forged page's words are not the real page's text: a drop needs the kept page to
    # hold most of it, and the attacker's holds none. The fingerprint is still forged
    # (so a secret is still worth having: without the share check, it decides).
    page, _ = forged
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(seed=0, segmenter="rjieba"))
    assert dedup.check_text(page, "https://attacker.example/").match is None
    verdict = dedup.check_text(TARGET, "https://news.example/tram")
    assert verdict.match is None and verdict.status == "new"
    assert verdict.refused.key == "https://attacker.example/"
    assert verdict.refused.distance <= 3 and verdict.refused.share < 0.2


SECRETS = [
    "3f1c9a0e7b2d4c6f8a1e0b9d7c5a3e21",
    "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
    "correct horse battery staple",
    "ein längeres Passwort für den Crawler",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_forgery_fails_with_a_secret(forged, secret):
    page, _ = forged
    seed = seed_from_secret(secret)
    distance = hamming_distance(analyse(page, seed).value, analyse(TARGET, seed).value)
    assert distance > 10, f"secret {secret!r}: forged page within {distance} bits"
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(seed=seed, segmenter="rjieba"))
    assert dedup.check_text(page, "https://attacker.example/").match is None
    assert dedup.check_text(TARGET, "https://news.example/tram").match is None


def test_a_secret_is_128_bits_hex_or_a_passphrase_stretched_with_scrypt():
    assert seed_from_secret(SECRETS[0]) == bytes.fromhex(SECRETS[0])
    assert seed_from_secret(" " + SECRETS[1] + "\n") == b"\xff" * 16
    stretched = seed_from_secret(SECRETS[2])
    assert len(stretched) == 16
    assert stretched == hashlib.scrypt(
        SECRETS[2].encode(), salt=b"scrapy-simhash/secret/v1", n=2**14, r=8, p=1, dklen=16
    )
    for weak in ("", "hunter2", "12345678901", "0123456789abcdef"):
        with pytest.raises(ValueError, match=r"32 hex digits .* at least 12 characters"):
            seed_from_secret(weak)


def test_the_signature_shows_only_a_key_id_never_the_secret_or_a_fast_hash_of_it():
    for secret in SECRETS:
        seed = seed_from_secret(secret)
        signature = Fingerprinter(seed=seed).signature
        assert signature.startswith("simhash64/") and "/key-" in signature
        assert "seed-" not in signature
        key_id = signature.rpartition("/key-")[2]
        assert len(key_id) == 16
        text = secret.encode()
        fast = [
            hashlib.blake2b(text, digest_size=8).hexdigest(),
            hashlib.sha256(text).hexdigest()[:16],
            f"{hash_term(secret, 0):016x}",
            f"{hash_term(secret.lower(), 0):016x}",
        ]
        assert key_id not in fast
        assert secret.lower() not in signature.lower() and seed.hex() not in signature
    assert (
        Fingerprinter(seed=seed_from_secret(SECRETS[0])).signature
        != Fingerprinter(seed=seed_from_secret(SECRETS[1])).signature
    )


def test_integer_seeds_are_refused_with_what_to_do():
    with pytest.raises(ValueError, match="integer seeds are no longer accepted"):
        Fingerprinter(seed=20_240_601)
    assert Fingerprinter(seed=0).signature == Fingerprinter().signature


def test_the_secret_reaches_worker_analysis_and_never_shows():
    secret = SECRETS[3]
    config = SimhashSettings.from_settings(Settings({"SIMHASH_SECRET": secret}))
    assert config.seed == seed_from_secret(secret)
    assert config.fingerprinter.signature == Fingerprinter(seed=config.seed).signature
    params = AnalysisParams(
        top_n=128, seed=config.seed, segmenter="auto", min_terms=20, max_length=10**6,
        extractor="none",
    )  # fmt: skip
    shipped = pickle.loads(pickle.dumps(params))  # as a worker process receives it
    assert analyse_fields(shipped, [TARGET]).value == config.fingerprinter.fingerprint(TARGET)
    assert analyse_fields(shipped, [TARGET]).value != analyse(TARGET, 0).value
    for shown in (repr(config), repr(params), str(config)):
        assert secret not in shown and config.seed.hex() not in shown and "längeres" not in shown


# -- normalisation: visually identical variants are duplicates -------------------------

FULL_WIDTH = str.maketrans({chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)} | {" ": "\u3000"})


def invisible(text: str) -> str:
    """Zero-width space after every character, a soft hyphen and a BOM here and there."""
    marks = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
    return "".join(ch + marks[i % len(marks)] for i, ch in enumerate(text))


@pytest.mark.parametrize(
    "variant",
    [
        pytest.param(lambda t: t.translate(FULL_WIDTH), id="full-width"),
        pytest.param(invisible, id="zero-width"),
        pytest.param(lambda t: invisible(t.translate(FULL_WIDTH)), id="both"),
    ],
)
def test_full_width_and_invisible_variants_are_duplicates(variant):
    text = variant(TARGET)
    assert text != TARGET
    assert analyse(text, 0) == analyse(TARGET, 0)
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(segmenter="rjieba"))
    assert dedup.check_text(TARGET, "original").match is None
    verdict = dedup.check_text(text, "variant")
    assert verdict.match is not None
    assert verdict.match.key == "original"
    assert verdict.match.distance == 0


def test_chinese_variants_are_duplicates():
    text = (
        "北京大学的学生在图书馆里读书，准备下个月的考试。图书馆每天早上八点开门，晚上十点关门。" * 3
    )
    assert analyse(invisible(text), 0) == analyse(text, 0)
    full_width_punctuation = text.replace("，", ",").replace("。", ".")
    assert analyse(full_width_punctuation.translate(FULL_WIDTH), 0) == analyse(
        full_width_punctuation, 0
    )
