"""Which tokens count as terms, and how they are weighted and cut."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis.function_words import (
    _LANGUAGES_OF,
    _STOP_WORDS_FOR,
    ENGLISH_STOP_WORDS,
    stop_words_for,
)
from scrapy_simhash.analysis.terms import (
    _EMAIL,
    _URL,
    MAX_TERM_SHARE,
    TermExtractor,
    _strip_addresses,
    jieba_idf,
)
from scrapy_simhash.extract.extractors import visible_text
from scrapy_simhash.extract.text import normalize_text


@pytest.fixture(scope="module")
def extractor() -> TermExtractor:
    return TermExtractor(segmenter="jieba")


def test_content_words_and_numbers_only(extractor):
    text = (
        "The 2024 release (v3.11) of THE tool, see https://example.com/x?y=1 or www.example.org "
        "and mail admin@example.com: Déjà-vu _ __ 12_34 ٣٤ x 7 a2 xy"
    )
    assert extractor.tokens(text) == [
        "2024",
        "release",
        "v3",
        "11",
        "tool",
        "see",
        "mail",
        "déjà",
        "vu",  # a French function word, but this text is English
        "12_34",
        "٣٤",
        "7",
        "a2",
        "xy",
    ]


def test_function_words_of_other_languages_are_not_terms(extractor):
    # Unknown to jieba's IDF dictionary, they would all weigh the median IDF: the
    # heaviest terms of every Spanish or German page, shared by all of them.
    spanish = "El gobierno de la ciudad y los vecinos que viven en el barrio del puerto"
    german = "Die Regierung der Stadt und die Anwohner, die im Hafenviertel wohnen"
    assert extractor.tokens(spanish) == [
        "gobierno",
        "ciudad",
        "vecinos",
        "viven",
        "barrio",
        "puerto",
    ]
    assert extractor.tokens(german) == ["regierung", "stadt", "anwohner", "hafenviertel", "wohnen"]


def test_numbers_tell_templated_pages_apart(extractor):
    first = "Shr 12 cts vs 19 cts. Net 369,000 vs 358,000. Revs 7,076,000 vs 6,712,000."
    second = "Shr 31 cts vs 8 cts. Net 1,204,000 vs 290,000. Revs 9,880,000 vs 9,102,000."
    assert extractor.term_counts(first) != extractor.term_counts(second)


def test_chinese_words_of_one_character_are_not_terms(extractor):
    assert extractor.tokens("我的电脑，在北京。") == ["电脑", "北京"]


def test_url_glued_to_han_is_removed_with_its_tail(extractor):
    # A URL runs to the next whitespace, as in running text it usually does.
    assert extractor.tokens("详见https://例子.com/页面 说明文档") == ["详见", "说明", "文档"]


def test_email_only_on_its_own_line_is_touched(extractor):
    text = "contact: someone@example.org\nsomeone wrote this line"
    assert extractor.tokens(text) == ["contact", "someone", "wrote", "line"]


@pytest.mark.parametrize(
    "text",
    [
        "苹果公司发布了新款 iPhone 和 MacBook Pro，搭载 M4 芯片。Apple 在 2024 年 https://apple.com",
        "哈哈哈哈 abc@def.gh 哈哈 the THE The",
        "",
    ],
)
def test_term_counts_count_exactly_the_tokens(extractor, text):
    assert extractor.term_counts(text) == Counter(extractor.tokens(text))


@pytest.mark.corpus
def test_term_counts_count_exactly_the_tokens_on_real_pages(corpora, extractor):
    pages = sorted((corpora / "debian-handbook").glob("*/sect.apt-get.html"))
    assert len(pages) == 6
    for page in pages:
        text = normalize_text(visible_text(page.read_text(encoding="utf-8")))
        assert extractor.term_counts(text) == Counter(extractor.tokens(text)), page


def test_weights_are_tf_times_idf_with_the_median_for_unknown_words():
    idf, median = jieba_idf()
    extractor = TermExtractor(top_n=100, segmenter="jieba")
    # Enough other terms that neither of the two carries more than MAX_TERM_SHARE.
    counts = Counter({"北京": 3, "zzqxv": 2, **{f"filler{i}": 5 for i in range(30)}})
    terms = dict(extractor.top_terms(counts))
    assert terms["北京"] == 3 * idf["北京"]
    assert terms["zzqxv"] == 2 * median


def test_no_term_carries_more_than_its_share_of_the_weight():
    extractor = TermExtractor(top_n=100, segmenter="jieba")
    counts = Counter({"debian": 60, **{f"word{i}": 1 for i in range(20)}})
    terms = extractor.top_terms(counts)
    total = sum(weight for _, weight in extractor.top_terms(counts))
    _, median = jieba_idf()
    uncapped_total = (60 + 20) * median
    assert terms[0] == ("debian", pytest.approx(MAX_TERM_SHARE * uncapped_total))
    assert terms[0][1] < total / 2, "one word alone no longer decides every bit"
    assert all(weight == median for _, weight in terms[1:])


def test_top_n_cut_is_heaviest_first_with_ties_broken_by_the_term():
    extractor = TermExtractor(top_n=3, segmenter="jieba")
    counts = Counter({"zzb": 2, "zza": 2, "zzc": 2, "zzd": 1, "zze": 5})
    assert [term for term, _ in extractor.top_terms(counts)] == ["zze", "zza", "zzb"]
    # The same cut whatever the order the counts were built in.
    shuffled = Counter(dict(reversed(list(counts.items()))))
    assert extractor.top_terms(shuffled) == extractor.top_terms(counts)


def test_top_n_must_be_positive():
    with pytest.raises(ValueError, match="top_n=0 must be at least 1"):
        TermExtractor(top_n=0)


_PIECES = ["http", "https", "ftp", "://", "www.", "@", ".", "/", "-", "_", "+", "a", "b7", "中文"]


@given(st.lists(st.sampled_from([*_PIECES, " ", "\n", "\t", "\u3000"]), max_size=40))
def test_addresses_are_stripped_as_by_the_patterns_on_the_whole_text(pieces):
    # The line-by-line shortcut must blank exactly what the two patterns blank when run
    # over the whole text: neither can match across a line break.
    text = "".join(pieces)
    expected = _EMAIL.sub(" ", _URL.sub(" ", text))
    assert _strip_addresses(text) == expected


def _stop_words_in_text_order(counts):
    """stop_words_for as it was first written: the hits counted in the text's order, the
    first language of the most hits winning a tie (English before any other)."""
    hits: dict[str, int] = {}
    for word in counts:
        for language in _LANGUAGES_OF.get(word, ()):
            hits[language] = hits.get(language, 0) + counts[word]
    if not hits:
        return ENGLISH_STOP_WORDS
    language = max(hits, key=lambda name: (hits[name], name == "english"))
    return ENGLISH_STOP_WORDS if hits[language] < 3 else _STOP_WORDS_FOR[language]


# Function words of one language, of several (ties between languages), and of none.
_FUNCTION_WORDS = ["de", "la", "que", "el", "und", "het", "och", "der", "the", "and", "og", "en"]


@given(
    st.dictionaries(
        st.sampled_from([*_FUNCTION_WORDS, "pro", "tram", "mayor", "e", "a", "na", "se"]),
        st.integers(1, 5),
        max_size=12,
    )
)
def test_language_of_a_text_as_in_text_order(counts):
    # The hits are now counted in any order, and the text's order decides ties only.
    assert stop_words_for(Counter(counts)) == _stop_words_in_text_order(counts)


def test_language_ties_are_decided_by_the_text_order():
    for counts in ({"de": 3}, {"que": 2, "de": 1}, {"que": 3, "und": 1, "het": 2}):
        assert stop_words_for(counts) == _stop_words_in_text_order(counts)
    # Words of one language each: whichever comes first in the text decides.
    words = ["und", "het", "och", "jest", "hogy", "che", "sunt"]
    for first, second in itertools.permutations(words, 2):
        counts = {"padding": 1, first: 3, "filler": 2, second: 3}
        assert stop_words_for(counts) == _STOP_WORDS_FOR[_LANGUAGES_OF[first][0]]
