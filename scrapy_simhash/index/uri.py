"""Parsing index URIs: options in the query string, passwords kept out of messages."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

from ..exceptions import UnsupportedIndexURI


def redact(uri: str) -> str:
    """*uri* with any password replaced by ``***``, for messages and logs."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    netloc = parts.netloc.rpartition("@")[2]
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{netloc}").geturl()


#: A query string of options: ``name=value`` pairs joined by ``&``.
_OPTIONS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=[^&]*(?:&[A-Za-z_][A-Za-z0-9_]*=[^&]*)*")


def path_and_options(
    uri: str, allowed: dict[str, type] | None = None
) -> tuple[str, dict[str, object]]:
    """Split a file URI or plain path at the ``?`` that starts its options.

    A ``?`` belongs to the path unless all that follows it is options (``name=value``
    pairs joined by ``&``): ``data/what?.db`` is a file of that name, while
    ``crawl.db?timeout=60`` is ``crawl.db`` with an option (and ``x.db?mode=ro`` is
    ``x.db`` with an unknown option, refused).
    """
    path, sep, query = uri.rpartition("?")
    if not sep or not _OPTIONS.fullmatch(query):
        return uri, {}
    return path, _parse_options(uri, query, allowed or {}) if allowed is not None else {}


def uri_options(uri: str, allowed: dict[str, type]) -> dict[str, object]:
    """Parse the query string of *uri* into typed options, rejecting unknown names."""
    return _parse_options(uri, urlsplit(uri).query, allowed)


def _parse_options(uri: str, query: str, allowed: dict[str, type]) -> dict[str, object]:
    options: dict[str, object] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name not in allowed:
            raise UnsupportedIndexURI(
                f"Unknown option {name!r} in index URI {redact(uri)}; "
                f"known options: {', '.join(sorted(allowed)) or 'none'}"
            )
        try:
            options[name] = allowed[name](value)
        except ValueError:
            raise UnsupportedIndexURI(
                f"Option {name}={value!r} in index URI {redact(uri)} is not a valid "
                f"{allowed[name].__name__}"
            ) from None
    return options
