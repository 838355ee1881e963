"""Parsing index URIs: options in the query string, passwords kept out of messages."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from urllib.parse import parse_qsl, urlsplit

from ..exceptions import UnsupportedIndexURI

#: Schemes whose URIs name a file, not a server: an ``@`` there is part of a path.
_FILE_SCHEMES = ("sqlite", "file", "memory")
#: Query options that hold credentials, whatever the backend (redis-py reads some).
_SECRET_OPTION = re.compile(
    r"(?i)([?&;](?:password|passwd|pwd|pass|secret|token|auth|access_key|api_key)=)[^&;#]*"
)


def redact(uri: str) -> str:
    """*uri* with its credentials replaced by ``***``, for messages and logs: everything
    between ``://`` and the last ``@`` but the user name (a password may hold unescaped
    ``/``, ``?``, ``#`` or ``@``), and the values of options such as ``password=``. The one
    function for showing an index URI anywhere."""
    if not isinstance(uri, str):
        return repr(uri)
    # Options first: their values may hold an '@' too.
    uri = _SECRET_OPTION.sub(r"\1***", uri)
    scheme, found, rest = uri.partition("://")
    if found and scheme.lower() not in _FILE_SCHEMES and "@" in rest:
        userinfo, _, host = rest.rpartition("@")
        # Without a colon the userinfo may be a password alone: it goes too.
        user = userinfo.split(":", 1)[0] if ":" in userinfo else ""
        if "/" in user or "?" in user or "#" in user:
            user = ""  # a password's unescaped character came before its colon
        rest = f"{user}:***@{host}"
        uri = f"{scheme}://{rest}"
    return _SECRET_OPTION.sub(r"\1***", uri)


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
    return _parse_options(uri, split(uri).query, allowed)


def _parse_options(uri: str, query: str, allowed: dict[str, type]) -> dict[str, object]:
    options: dict[str, object] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name not in allowed:
            raise UnsupportedIndexURI(
                f"Unknown option {name!r} in index URI {redact(uri)}; "
                f"known options: {', '.join(sorted(allowed)) or 'none'}"
            )
        kind = allowed[name]
        try:
            options[name] = kind(value)
        except (ValueError, OverflowError) as e:
            # Our own option types say what they expect; int() and float() do not.
            why = f" ({e})" if kind not in (int, float, str) and str(e) else ""
            raise UnsupportedIndexURI(
                f"Option {name}={value!r} in index URI {redact(uri)} is not a valid "
                f"{kind.__name__}{why}"
            ) from None
    return options


#: Longest wait an index URI's ``timeout=`` may ask for, in seconds: a day.
MAX_TIMEOUT = 86_400.0


def timeout(value: str) -> float:
    """Seconds to wait, from an index URI's ``timeout=``: a number above 0 and at most
    :data:`MAX_TIMEOUT` (not ``nan`` or ``inf``, which would wait for ever, nor 0 or less,
    which could never succeed)."""
    seconds = float(value)
    if not 0 < seconds <= MAX_TIMEOUT:
        raise ValueError(f"a number of seconds above 0 and at most {MAX_TIMEOUT:g}")
    return seconds


def split(uri: str):
    """``urlsplit(uri)``, with a malformed URI (a raw ``[`` or ``]`` in a password) as
    :class:`~scrapy_simhash.exceptions.UnsupportedIndexURI` naming the URI without its
    credentials."""
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        # Not the ValueError's text: it can quote part of a password.
        raise UnsupportedIndexURI(
            f"The index URI {redact(uri)} is malformed (a port that is not a number, or a "
            "bracket outside an IPv6 address); write a '[', ']', '/', '?', '#' or '@' in a "
            "user or password as %5B, %5D, %2F, %3F, %23 or %40"
        ) from None
    return parts


#: The index's file, in the Scrapy project's data directory, when SIMHASH_INDEX_URI is unset.
DEFAULT_INDEX_FILE = "simhash.db"


def index_uri(configured: str | None, data_path: Callable[[str], str], *, create: bool) -> str:
    """The index's URI: *configured* (``SIMHASH_INDEX_URI``), else ``sqlite:///`` and
    ``simhash.db`` in the project's data directory (*data_path* is Scrapy's
    ``scrapy.utils.project.data_path``: ``.scrapy/`` of the project, or of the current
    directory outside one). With *create* (the index may be created there), the directory
    is made, as the crawl and the commands that create an index need it."""
    if configured:
        return configured
    path = data_path(DEFAULT_INDEX_FILE)
    if create:
        # data_path(createdir=True) would make "simhash.db" itself a directory.
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    return "sqlite:///" + path
