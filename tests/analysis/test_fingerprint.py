"""The fingerprint is pinned: a change of any value here is a decision, made together with
a bump of TERMS_VERSION (stored in every index), never an accident."""

from __future__ import annotations

import base64
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pipelines import run_pure_python

from scrapy_simhash import Fingerprinter, fingerprint, hamming_distance
from scrapy_simhash.analysis.fingerprint import (
    format_fingerprint,
    hash_term,
    parse_fingerprint,
    simhash,
)

ENGLISH = (
    "The city council approved a new tram line on Tuesday. The line will connect the harbour "
    "district with the university campus, and the first trams are expected to run in the "
    "spring of next year, according to the transport department."
)
CHINESE = (
    "北京大学的研究人员周二发布了一项关于城市交通的新研究。研究显示，地铁线路的扩建显著减少了"
    "市中心的交通拥堵，同时提高了公共交通的使用率。"
)
MIXED = (
    "苹果公司发布了新款 iPhone 和 MacBook Pro，搭载 M4 芯片，性能提升明显。"
    "Apple Intelligence 功能将在中国市场推出。"
)

SPANISH = (
    "El ayuntamiento de la ciudad aprobó el martes una nueva línea de tranvía que unirá el "
    "puerto con el campus de la universidad y la estación central, y los primeros tranvías "
    "circularán en la primavera del próximo año."
)
NUMBERS = (
    "Quarterly report: revenue rose 12 percent to 4350 million in 2024, with 3 new plants "
    "and 17 stores opened across 5 regions."
)

PINNED = {
    ENGLISH: "4904692f0856be64",
    CHINESE: "c1415133b739ed9f",
    MIXED: "63d72a61f2e82b46",
    # terms-v3: the stop words of the text's language.
    SPANISH: "c23921140aa16d02",
    NUMBERS: "8452344b15691c3a",
}
# terms-v4: attribution lines are not features, so a copy that adds them keeps the value.
REPOST = (
    "By Jane Doe, with wire reports\n"
    + ENGLISH
    + "\nSource: Example Wire Service. Copyright 2024 Example Media. All rights reserved."
    + "\n2024-03-15 10:23"
)


def test_pinned_repost_lines_do_not_count():
    assert format_fingerprint(fingerprint(REPOST)) == PINNED[ENGLISH]


@pytest.mark.parametrize(
    "text", list(PINNED), ids=["english", "chinese", "mixed", "spanish", "numbers"]
)
def test_pinned_values(text):
    assert format_fingerprint(fingerprint(text)) == PINNED[text]


def test_pinned_signature():
    # Stored in every index: bump TERMS_VERSION (and re-pin) when features change.
    assert Fingerprinter().signature == "simhash64/terms-v13/top128/seed-0"


def test_same_in_a_fresh_process():
    # No hash() anywhere: PYTHONHASHSEED differs between processes.
    code = (
        "import sys; from scrapy_simhash import fingerprint; "
        "print('%016x' % fingerprint(sys.stdin.read()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], input=MIXED, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == PINNED[MIXED]


def test_pinned_values_without_the_accelerator():
    # SCRAPY_SIMHASH_PURE_PYTHON=1: every step in Python, the same fingerprints.
    code = (
        "import json, sys\n"
        "from scrapy_simhash import fingerprint\n"
        "from scrapy_simhash.analysis import attribution, heaviest, nfkc, words\n"
        "assert None is heaviest.heaviest_compiled is words.count_words_compiled\n"
        "assert None is nfkc.normalize_runs is nfkc.marked_runs\n"
        "assert attribution.line_starts is attribution._line_starts_python\n"
        "texts = json.load(sys.stdin)\n"
        "print(json.dumps(['%016x' % fingerprint(t) for t in texts]))"
    )
    texts = [*PINNED, REPOST]
    assert run_pure_python(code, texts) == [*PINNED.values(), PINNED[ENGLISH]]


def test_hash_term_is_murmur3_x64_128_low_half():
    assert hash_term("") == 0
    assert hash_term("hello") == 0xCBD8A7B341BD9B02


def test_range_and_empty():
    assert fingerprint("") == 0
    assert fingerprint("!!! ... ， 。 \u200b 🙂") == 0, "punctuation and emoji are no features"
    assert 0 <= fingerprint(ENGLISH) < 2**64


#: A page-length article: what the index sees in a crawl (a one-word edit of a 40-word text
#: moves more bits, as it changes a larger share of the weight).
ARTICLE = " ".join(
    [
        ENGLISH,
        "Construction of the track will begin in March, once the last permits are signed.",
        "Residents of the harbour district welcomed the decision at a crowded public meeting,",
        "although several shop owners worried about months of roadworks outside their doors.",
        "The council promised compensation for businesses that lose customers during the works",
        "and a dedicated phone line for complaints about noise, dust and blocked driveways.",
        "Engineers estimate that the tram will carry twelve thousand passengers every weekday,",
        "replacing three bus routes that are often overcrowded during the morning rush hour.",
        "The new vehicles are built by a regional manufacturer and run on renewable electricity",
        "bought from a wind farm on the coast, which the council calls a milestone for its",
        "climate plan. Critics in the opposition argued that the budget of four hundred million",
        "could have paid for cheaper electric buses, and asked for an independent audit of the",
        "contracts. The mayor replied that trams last twice as long as buses, need fewer drivers",
        "and attract riders who never take a bus, citing studies from cities across Europe.",
        "A final vote on the timetable and the fares is planned for the autumn session.",
    ]
)


def test_small_edit_is_near_and_other_text_is_far():
    edited = ARTICLE.replace("Tuesday", "Wednesday")
    assert edited != ARTICLE
    # Near: within SIMHASH_MAX_DISTANCE's default (3), where the index finds it.
    assert hamming_distance(fingerprint(ARTICLE), fingerprint(edited)) <= 3
    assert hamming_distance(fingerprint(ARTICLE), fingerprint(CHINESE)) > 10


def test_weights_matter():
    alpha, beta = hash_term("alpha"), hash_term("beta")
    assert hamming_distance(alpha, beta) > 20, "two terms whose hashes differ enough to tell"
    # Of two terms, the heavier decides every bit where their hashes differ.
    assert simhash([("alpha", 10.0), ("beta", 1.0)]) == alpha
    assert simhash([("alpha", 1.0), ("beta", 10.0)]) == beta
    assert simhash([("alpha", 1.0)]) == alpha


def test_seed_changes_fingerprint_and_signature():
    seed = bytes(range(16))
    plain, seeded = Fingerprinter(), Fingerprinter(seed=seed)
    assert plain.fingerprint(ENGLISH) != seeded.fingerprint(ENGLISH)
    assert plain.signature != seeded.signature
    # A secret seed is not written out, in any form: the signature names the public parts
    # and a 16-digit id of the key, and no 8 digits of the seed appear anywhere in it.
    prefix = plain.signature.removesuffix("seed-0")
    assert re.fullmatch(re.escape(prefix) + "key-[0-9a-f]{16}", seeded.signature)
    for written in (seed.hex(), str(int.from_bytes(seed, "big")), base64.b64encode(seed).decode()):
        windows = {written[i : i + 8] for i in range(len(written) - 7)}
        assert not any(w in seeded.signature for w in windows), written
    # The id tells keys apart (an index refuses fingerprints of another key) and is stable.
    assert Fingerprinter(seed=seed).signature == seeded.signature
    assert Fingerprinter(seed=bytes(16)).signature != seeded.signature
    assert Fingerprinter(seed=0).fingerprint(ENGLISH) == plain.fingerprint(ENGLISH)
    for bad in (-1, 12345, b"short", "0" * 32):
        with pytest.raises(ValueError, match="seed"):
            Fingerprinter(seed=bad)


def test_top_n_is_part_of_the_signature():
    assert Fingerprinter(top_n=64).signature != Fingerprinter(top_n=128).signature


def test_format_round_trip():
    assert format_fingerprint(1) == "0000000000000001"
    assert parse_fingerprint("0xffffffffffffffff") == 2**64 - 1
    with pytest.raises(ValueError):
        parse_fingerprint("1" + "0" * 16)


u64 = st.integers(min_value=0, max_value=2**64 - 1)


@given(u64, u64)
def test_distance_is_symmetric_and_bounded(a, b):
    assert hamming_distance(a, b) == hamming_distance(b, a)
    assert 0 <= hamming_distance(a, b) <= 64
    assert (hamming_distance(a, b) == 0) == (a == b)


@given(u64, u64, u64)
def test_distance_triangle_inequality(a, b, c):
    assert hamming_distance(a, c) <= hamming_distance(a, b) + hamming_distance(b, c)
