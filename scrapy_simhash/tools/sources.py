"""A page to look at, as users name it on a command line: a file, a URL, text or stdin.

:func:`read_source` returns its text as the pipeline would fingerprint it (HTML reduced by
the extractor); ``scrapy-simhash check`` and ``explain`` use it, and scripts can too.
"""

from __future__ import annotations

import re
import sys
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ..exceptions import SourceError

__all__ = ["read_source"]

#: One word ending like a document's file name.
_DOCUMENT_NAME = re.compile(r"^\S+\.(?:html?|xhtml|xml|txt|md|jl|jsonl?)$", re.IGNORECASE)
_URL = re.compile(r"^(https?|file)://")


def read_source(source: str, text_of: Callable[[str | bytes], str]) -> tuple[str, str]:
    """``(label, text)`` of *source*: ``-`` (stdin), a file, an http(s)/file URL, or
    literal text; *text_of* turns what was read into the text to fingerprint. Raises
    :class:`~scrapy_simhash.exceptions.SourceError` for a file or URL that cannot be read,
    and for a name that looks like a missing file (a typo, far more likely than text)."""
    if source == "-":
        return "stdin", text_of(sys.stdin.read())
    if _URL.match(source):
        try:
            with urllib.request.urlopen(source, timeout=30) as response:
                charset = response.headers.get_content_charset() or "utf-8"
                body = response.read().decode(charset, errors="replace")
        except (OSError, ValueError) as e:
            raise SourceError(f"Cannot fetch {source}: {e}") from None
        return source, text_of(body)
    path = Path(source)
    if len(source) < 4096 and "\n" not in source and path.is_file():
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise SourceError(f"Cannot read {source}: {e.strerror}") from None
        return source, text_of(raw)
    if _DOCUMENT_NAME.match(source) or (len(source) < 4096 and "/" in source and " " not in source):
        raise SourceError(
            f"No such file: {source}. To use it as text, pass it on standard input: "
            f"echo '{source}' | scrapy-simhash check -"
        )
    label = source if len(source) <= 40 else source[:37] + "..."
    return repr(label), text_of(source)
