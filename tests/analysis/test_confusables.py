"""Latin, Cyrillic and Greek look-alike letters inside words that mix scripts."""

from __future__ import annotations

import pytest
from pipelines import ARTICLE

from scrapy_simhash import Deduplicator, Fingerprinter, open_index
from scrapy_simhash.analysis.confusables import fold_confusables
from scrapy_simhash.extract.text import normalize_text

LATIN_TO_CYRILLIC = str.maketrans("aeopcxyAEOPCXH", "аеорсхуАЕОРСХН")
RUSSIAN = "Молоко и хлеб стоят на столе, а кот спит у окна. Сорок сорок сидели на ветке."
GREEK = "Ο κόσμος είναι μεγάλος και η θάλασσα είναι βαθιά."


def test_a_text_of_one_script_per_word_is_returned_as_it_is():
    for text in (ARTICLE, RUSSIAN, GREEK, f"{RUSSIAN} Microsoft Windows {GREEK}"):
        assert fold_confusables(text) == text


@pytest.mark.parametrize("swapped", ["aeo", "aeopcxyAEOPCXH"])
def test_latin_letters_swapped_for_cyrillic_look_alikes_read_as_latin(swapped):
    table = str.maketrans(swapped, swapped.translate(LATIN_TO_CYRILLIC))
    text = ARTICLE
    forged = text.translate(table)
    assert forged != text
    assert fold_confusables(forged) == text


def test_cyrillic_words_with_latin_look_alikes_read_as_cyrillic():
    forged = RUSSIAN.replace("о", "o").replace("а", "a")  # Latin o and a
    assert fold_confusables(forged) == RUSSIAN


def test_a_word_of_greek_and_latin_letters_is_left_as_written_unless_all_look_alike():
    assert fold_confusables("λόγος logos") == "λόγος logos"
    assert fold_confusables("ΗΟΤΕL") == "HOTEL"  # Greek Η, Ο, Τ, Ε with a Latin L


def test_a_copy_in_look_alike_letters_is_dropped_as_a_copy():
    original = ARTICLE
    forged = original.translate(str.maketrans("aeo", "аео"))
    assert normalize_text(forged) == normalize_text(original)
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter())
        assert dedup.check_text(original, "original").match is None
        copy = dedup.check_text(forged, "forged")
        assert copy.match is not None and copy.match.key == "original"
