"""Evasion and forgery: what an attacker can do with the public feature hash, and what a
secret seed and text normalisation stop.

With ``SIMHASH_SEED = 0`` the term hash is public: anyone can compute, for any word, which
fingerprint bits it pushes up or down. A greedy attacker then appends a few dozen chosen
words to an unrelated page until its fingerprint lands within distance 3 of a target page,
so that the target (crawled later) is dropped as a "duplicate" of the attacker's page. With
a secret seed the same attack, computed against the public hash, lands nowhere near.
"""

from __future__ import annotations

import itertools
import string

import numpy as np
import pytest
from pipelines import ARTICLE

from scrapy_simhash.dedup import Deduplicator
from scrapy_simhash.fingerprint import Fingerprinter, hamming_distance, hash_term
from scrapy_simhash.index.memory import MemoryIndex
from scrapy_simhash.terms import jieba_idf

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


def signs(term: str, seed: int) -> np.ndarray:
    """+1 / -1 for each of the 64 bits of the term's hash, least significant first."""
    h = hash_term(term, seed)
    return np.array([1.0 if h >> bit & 1 else -1.0 for bit in range(64)])


def bit_signs(fingerprint: int) -> np.ndarray:
    return np.array([1.0 if fingerprint >> bit & 1 else -1.0 for bit in range(64)])


def greedy_forgery(target_text: str, page: str, seed: int) -> tuple[str, int]:
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


def analyse(text: str, seed: int):
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
    # In a crawl: the attacker's page is seen first, and the real page is then dropped.
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(seed=0, segmenter="rjieba"))
    assert dedup.check_text(page, "https://attacker.example/").match is None
    verdict = dedup.check_text(TARGET, "https://news.example/tram")
    assert verdict.match is not None
    assert verdict.match.key == "https://attacker.example/"


@pytest.mark.parametrize("secret", [1, 20_240_601, 2**32 - 1, 987_654_321])
def test_forgery_fails_with_a_secret_seed(forged, secret):
    page, _ = forged
    distance = hamming_distance(analyse(page, secret).value, analyse(TARGET, secret).value)
    assert distance > 10, f"seed {secret}: forged page within {distance} bits"
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(seed=secret, segmenter="rjieba"))
    assert dedup.check_text(page, "https://attacker.example/").match is None
    assert dedup.check_text(TARGET, "https://news.example/tram").match is None


def test_secret_seed_is_part_of_the_signature_but_not_written_out():
    public, secret = Fingerprinter(seed=0), Fingerprinter(seed=20_240_601)
    assert public.signature != secret.signature
    assert "20240601" not in secret.signature
    assert "20_240_601" not in secret.signature


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
