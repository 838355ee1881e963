"""Parsing index URIs: options in the query string, passwords kept out of messages."""

from __future__ import annotations

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


def uri_options(uri: str, allowed: dict[str, type]) -> dict[str, object]:
    """Parse the query string of *uri* into typed options, rejecting unknown names."""
    options: dict[str, object] = {}
    for name, value in parse_qsl(urlsplit(uri).query, keep_blank_values=True):
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
