"""What decides a fingerprint, as plain values: its width and the feature signature.

Every index stores the signature of the fingerprinter that filled it and refuses others
(see :class:`~scrapy_simhash.index.base.IndexParameters`). The block plan and the index
backends need the width and the default signature, not the fingerprinter: this module
gives them both without importing the hashing, numpy or a word segmenter.
"""

from __future__ import annotations

from .terms import DEFAULT_TOP_N, TERMS_VERSION

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
