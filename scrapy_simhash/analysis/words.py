"""The first split of a text into words: Han runs (for the segmenter) and the other words.

:func:`count_words` has two forms that give the same result for any text: regular
expressions (:func:`_count_words_python`), and a compiled one (``scrapy_simhash._speedups``,
built on installation where a C compiler is present) that is several times faster on
pages of many short words, where the regex engine's overhead per match costs more than
segmenting the text. Set ``SCRAPY_SIMHASH_PURE_PYTHON=1`` to use the regular expressions
even where the compiled form is installed.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

from .speedups import compiled

#: Han ideographs that jieba's dictionary covers; other scripts are split by WORD.
HAN_RUN = re.compile(r"[\u4e00-\u9fd5]+")
#: A run of word characters outside those Han runs ("3.11" gives the numbers 3 and 11).
WORD = re.compile(r"[^\W\u4e00-\u9fd5]+")


def _count_words_python(text: str, counts: Counter[str]) -> str:
    """Add how often each word of *text* (outside its Han runs) occurs to *counts*, in
    the order of their first occurrence, but for the words that never carry content: a
    single character other than a decimal digit, underscores alone. Return the Han runs,
    joined by line breaks."""
    counts.update(WORD.findall(text))
    # Whether a word is kept depends on the word alone: tested once per distinct word.
    for word in [w for w in counts if len(w) == 1 or w[0] == "_"]:
        if not is_content_word(word):
            counts.pop(word)  # dict.pop, in C (Counter.__delitem__ is Python)
    return "\n".join(HAN_RUN.findall(text))


def is_content_word(word: str) -> bool:
    """A number, or a word of two or more characters, underscores aside."""
    core = word.replace("_", "")
    return bool(core) and (len(word) > 1 or core.isdecimal())


def _count_long_words_python(words: list[str], counts: Counter[str]) -> None:
    """Add how often each of *words* but single characters occurs to *counts* (the Han
    words: a single character is a particle or a fragment, no term)."""
    found = Counter(words)
    for word in [w for w in found if len(w) == 1]:
        found.pop(word)
    # Han words and the other words share no character: a plain dict update (in C) adds
    # them without summing counts.
    dict.update(counts, found)


#: ``str.lower``, compiled: on text of mixed scripts (a Chinese page with English words)
#: ``str.lower`` looks up the full case mapping of every character; the compiled form skips
#: ASCII and Han characters, and leaves texts holding "İ" or "Σ" (whose lower case is not
#: their simple mapping) to ``str.lower``. A third of its time on the handbook's pages.
lower: Callable[[str], str] = compiled("lower") or str.lower
count_words_compiled = compiled("count_words")
count_long_words_compiled = compiled("count_long_words")
count_words: Callable[[str, Counter[str]], str] = count_words_compiled or _count_words_python
count_long_words: Callable[[list[str], Counter[str]], None] = (
    count_long_words_compiled or _count_long_words_python
)
