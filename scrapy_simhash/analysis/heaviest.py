"""The heaviest terms of a text: TF x IDF weights and the ``top_n`` cut.

:func:`heaviest` has two forms that give the same pairs for any counts:
:func:`_heaviest_python`, and a compiled one (``scrapy_simhash._speedups``, built on
installation where a C compiler is present; ``SCRAPY_SIMHASH_PURE_PYTHON=1`` chooses the
Python one) that weighs and sorts a page's terms in a tenth of the time. The compiled form
answers ``None`` where Python's arithmetic or order is not a plain one of doubles (a NaN
weight, counts of other types); the Python form decides those.
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Callable, Mapping
from itertools import compress, repeat

from .speedups import compiled

#: The compiled form (None: the pure-Python path runs).
heaviest_compiled = compiled("heaviest")
# Counts the compiled form reads as Python does: a subclass may iterate otherwise.
_PLAIN = (dict, Counter)


def _heaviest_python(
    counts: Mapping[str, float],
    idf: dict[str, float],
    new_idf: Callable[[str], float],
    top_n: int,
) -> list[tuple[str, float]]:
    """The *top_n* heaviest ``(term, count x IDF)`` pairs of *counts*, heaviest first, ties
    broken by the term, so that the cut at *top_n* is deterministic. A term's IDF is
    ``idf[term]``, or ``new_idf(term)`` for one missing there (which keeps it in *idf*)."""
    terms = list(counts)
    values = list(map(idf.get, terms))  # in C; only new terms take the loop below
    if None in values:
        for i, value in enumerate(values):
            if value is None:
                values[i] = new_idf(terms[i])
    weights = list(map(operator.mul, counts.values(), values))
    pairs = zip(terms, weights, strict=True)
    if len(terms) > top_n:
        # Sorting plain floats is cheap; only the terms that can make the cut are
        # sorted with the tie-break key (selected in C, without a Python loop).
        cut = sorted(weights)[-top_n]
        weighted = list(compress(pairs, map(operator.ge, weights, repeat(cut))))
    else:
        weighted = list(pairs)
    # Two stable sorts on C-level keys, faster than one on tuples.
    weighted.sort(key=operator.itemgetter(0))
    weighted.sort(key=operator.itemgetter(1), reverse=True)
    del weighted[top_n:]
    return weighted


def heaviest(
    counts: Mapping[str, float],
    idf: dict[str, float],
    new_idf: Callable[[str], float],
    top_n: int,
    bound: float | None = None,
) -> list[tuple[str, float]]:
    """:func:`_heaviest_python`, compiled where the accelerator is built.

    *bound*, if given, is no less than any IDF that *idf* or *new_idf* can give. The
    compiled form then looks up a term counted once only if it can make the cut: on a page,
    most distinct terms occur once, and their weight is at most the bound. The pairs are
    the same with or without it.
    """
    if heaviest_compiled is not None and type(counts) in _PLAIN:
        # NaN, the compiled form's default: no bound.
        found = heaviest_compiled(counts, idf, new_idf, top_n, math.nan if bound is None else bound)
        if found is not None:
            return found
    return _heaviest_python(counts, idf, new_idf, top_n)


def capped(weighted: list[tuple[str, float]], share: float) -> list[tuple[str, float]]:
    """*weighted* with no weight above *share* of their total."""
    cap = share * sum(map(operator.itemgetter(1), weighted))
    if weighted and weighted[0][1] > cap:
        return [(term, min(weight, cap)) for term, weight in weighted]
    return weighted
