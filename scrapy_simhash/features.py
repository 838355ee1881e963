"""What decides a fingerprint, as plain values: its width and the feature signature.

Every index stores the signature of the fingerprinter that filled it and refuses others
(see :class:`~scrapy_simhash.index.base.IndexParameters`). The block plan and the index
backends need the width and the default signature, not the fingerprinter: this module
gives them both without importing the hashing, numpy or a word segmenter. It imports
nothing: the term extraction (:mod:`scrapy_simhash.analysis.terms`) reads its version here.
"""

from __future__ import annotations

#: Bumped whenever a change changes which terms or weights a page produces (here, or in the
#: text the built-in extractor gives an HTML field); it is part of the feature signature
#: stored in every index, so old and new fingerprints never mix. 3: the stop words of the
#: text's language (24 languages), and the main text of HTML found by its region
#: (scrapy_simhash.extract.main_text). 4: attribution lines are not features
#: (scrapy_simhash.analysis.attribution). 5: the built-in extractor drops teaser grids, and reads a
#: <noscript> that swallowed the page. 6: the built-in extractor weighs text outside what a
#: page declares its content down, and judges lines broken by <br> as their block. 7: the
#: built-in extractor gives the body of the main text, its paragraphs, where they are most of
#: it (headlines, datelines and captions are what copies of one article differ by). 8: where
#: the built-in extractor finds no main text, it leaves out what the page declares chrome
#: (menus, sidebars, its header and footer) before it falls back to all visible text; HTML
#: text is read composed (NFC), without ruby readings, and with a <noscript> that holds a
#: paragraph. 9: the paragraphs right beside the article's region are part of it (a lead
#: outside a paywall's container); the text is composed once, on the extractor's result
#: (the body is chosen on the text as read); the fallback's guard weighs paragraph text.
#: 10: HTML text is read with the page's source line breaks as spaces (except in <pre>);
#: the built-in extractor drops images' captions, forms the reader writes in and headings
#: with nothing under them, and keeps a p above the article, the headline block and list
#: items below it. 11: the built-in extractor drops elements named for the author (an
#: author's box: bio, photo, "more by"), as it drops other chrome. 12: a short main text
#: that holds little of the page's own blocks (a note, a licence footer, a sidebar's box
#: beside a list, an index or a menu page) gives way to those blocks, chrome left out, and
#: the text of a page without an article, of few terms, is matched exactly. 13: a word that
#: mixes Latin with Cyrillic or Greek look-alikes is read in one script
#: (scrapy_simhash.analysis.confusables).
TERMS_VERSION = 13
#: How many of the heaviest terms a fingerprint is built from.
DEFAULT_TOP_N = 128

#: Bits of a fingerprint.
FINGERPRINT_BITS = 64


def feature_signature(*, top_n: int = DEFAULT_TOP_N, key_id: str | None = None) -> str:
    """The signature stored in an index: the term extraction's version, *top_n*, and the
    id of the secret seed (*key_id*, 16 hex digits), or ``seed-0`` for the public hash."""
    seed = "seed-0" if key_id is None else f"key-{key_id}"
    return f"simhash64/terms-v{TERMS_VERSION}/top{top_n}/{seed}"


#: The signature of ``Fingerprinter()`` with its defaults: what a new index is built for
#: when no features are asked for.
DEFAULT_FEATURES = feature_signature()
