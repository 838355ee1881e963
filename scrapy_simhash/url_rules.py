"""URL rules: the transformations of a URL that, on one site, lead from a copy to its original.

A site repeats its URL variants: tracking parameters (``?utm_source=...``), ``/amp/`` and
``/print/`` pages, ``index.html`` beside ``/``, ``/page/1/`` beside the list it starts,
another rendering of the same pages under another prefix. When the index drops a page as a
copy of a kept page, :func:`learned` names every transformation that maps the copy's URL to
the kept page's URL; each is one *observation* of that rule on that site. A page kept as
distinct whose URL a rule maps to a stored page is *counter-evidence*: the rule is wrong
there. :func:`confirmed` decides from the evidence alone whether a rule may be used.

A rule is a short string, the one name shown to users and kept in the index:

================================  ===============================================
``query:-utm_source``             the parameter ``utm_source`` removed, any value
``query:-page=1``                 the parameter ``page`` removed where it is ``1``
``path:-amp``                     the path segment ``amp`` removed
``path:-page/1``                  the segments ``page/1`` removed
``path:print->view``              the segment ``print`` replaced by ``view``
``prefix:/tableful/->/``          the path's leading ``/tableful/`` replaced by ``/``
================================  ===============================================

Plain values only: no Scrapy, no index.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

#: Segments a path rule removes or swaps at most at once (``page/1``).
MAX_RUN = 2
#: Rules a site keeps at most (in memory and in the index): a site whose every URL looks
#: like a new variant cannot grow them without bound.
MAX_RULES_PER_SITE = 200


@dataclass(frozen=True)
class Evidence:
    """What a site showed of a rule: *observations* (copies whose URL it maps to the
    kept page's), *distinct* (pages kept as distinct whose URL it maps to a stored page),
    *skipped* (requests it skipped)."""

    observations: int = 0
    distinct: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class SkippedRequest:
    """A request not downloaded: *rule* (one or more, joined by ``+``) mapped *url* to
    *target*, a page kept in the index."""

    url: str
    site: str
    rule: str
    target: str
    at: float


def confirmed(evidence: Evidence, min_copies: int) -> bool:
    """Whether a rule with *evidence* may skip requests: *min_copies* observations and
    not one distinct page (one retires the rule for its site)."""
    return evidence.distinct == 0 and evidence.observations >= min_copies


def site(url: str) -> str:
    """The site a URL's rules are learned on and used for: its host (and port)."""
    return urlsplit(url).netloc.lower()


def _segments(path: str) -> list[str]:
    return path.split("/")[1:] if path.startswith("/") else path.split("/")


def _path(segments: list[str]) -> str:
    return "/" + "/".join(segments)


def _drop(segments: list[str], start: int, length: int) -> list[str]:
    """*segments* without ``[start:start+length]``; a run that ended the path leaves its
    trailing slash (``/a/index.html`` -> ``/a/``)."""
    rest = segments[:start] + segments[start + length :]
    return [*rest, ""] if start + length == len(segments) else rest


def _with(parts, path: str | None = None, query: str | None = None) -> str:
    return urlunsplit(
        (
            parts.scheme,
            parts.netloc,
            parts.path if path is None else path,
            parts.query if query is None else query,
            "",
        )
    )


def apply(rule: str, url: str) -> str | None:
    """The URL *rule* maps *url* to, or ``None`` where it does not apply."""
    kind, _, spec = rule.partition(":")
    parts = urlsplit(url)
    if kind == "query":
        name, has_value, value = spec[1:].partition("=")
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        kept = [(k, v) for k, v in pairs if not (k == name and (not has_value or v == value))]
        return None if len(kept) == len(pairs) else _with(parts, query=urlencode(kept))
    segments = _segments(parts.path)
    if kind == "path" and spec.startswith("-"):
        run = spec[1:].split("/")
        for start in range(len(segments) - len(run) + 1):
            if segments[start : start + len(run)] == run:
                return _with(parts, path=_path(_drop(segments, start, len(run))))
        return None
    if kind == "path":
        old, _, new = spec.partition("->")
        if old in segments and old:
            at = segments.index(old)
            return _with(parts, path=_path([*segments[:at], new, *segments[at + 1 :]]))
        return None
    if kind == "prefix":
        old, _, new = spec.partition("->")
        if parts.path.startswith(old) and old != new:
            return _with(parts, path=new + parts.path[len(old) :])
    return None


def _query_rules(dropped, kept) -> list[str]:
    """The query rules that explain *kept* as *dropped* without some parameters."""
    have = parse_qsl(dropped.query, keep_blank_values=True)
    want = parse_qsl(kept.query, keep_blank_values=True)
    removed, rest = [], list(want)
    for pair in have:
        if rest and rest[0] == pair:
            rest.pop(0)
        else:
            removed.append(pair)
    if rest or not removed:
        return []
    rules = []
    for name, value in removed:
        rules += [f"query:-{name}", f"query:-{name}={value}"]
    return list(dict.fromkeys(rules))


def _path_rules(old: list[str], new: list[str]) -> list[str]:
    """The path rules that map the segments *old* to *new*."""
    rules = []
    for length in range(1, MAX_RUN + 1):
        for start in range(len(old) - length + 1):
            run = old[start : start + length]
            if all(run) and _drop(old, start, length) == new:
                rules.append("path:-" + "/".join(run))
    if len(old) == len(new):
        changed = [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a != b]
        if len(changed) == 1 and old[changed[0]]:
            rules.append(f"path:{old[changed[0]]}->{new[changed[0]]}")
    # The longest common tail; what comes before it, on each side, is the prefix swapped.
    tail = 0
    while tail < min(len(old), len(new)) and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    head_old, head_new = old[: len(old) - tail], new[: len(new) - tail]
    if tail and head_old != head_new and max(len(head_old), len(head_new)) <= MAX_RUN:
        rules.append(f"prefix:{_path([*head_old, ''])}->{_path([*head_new, ''])}")
    return rules


def _within(a, b) -> bool:
    """Whether the parameters of the query *a* are all in *b* (in their order)."""
    rest = parse_qsl(b, keep_blank_values=True)
    for pair in parse_qsl(a, keep_blank_values=True):
        while rest and rest[0] != pair:
            rest.pop(0)
        if not rest:
            return False
        rest.pop(0)
    return True


def learned(dropped: str, kept: str) -> list[str]:
    """The rules that map the URL of a page dropped as a copy (*dropped*) to the URL of the
    page it copies (*kept*), on one site; none across sites. Where both the path and the
    query differ (``/print/a`` and ``/a?ref=x``), the path rules that map one path to the
    other, provided one query only adds parameters to the other: a copy's URL often has
    two variants at once."""
    a, b = urlsplit(dropped), urlsplit(kept)
    if a.netloc.lower() != b.netloc.lower() or a.scheme != b.scheme or dropped == kept:
        return []
    if a.path == b.path:
        return _query_rules(a, b)
    if not (_within(a.query, b.query) or _within(b.query, a.query)):
        return []
    rules = _path_rules(_segments(a.path), _segments(b.path))
    plain = _with(a, query="")
    rules = [rule for rule in rules if apply(rule, plain) == _with(b, query="")]
    if a.query != b.query:
        rules += _query_rules(a, b)
    return rules


def candidates(url: str) -> list[tuple[str, str]]:
    """(rule, target) for every removal a rule could make in *url*: each parameter, each
    run of path segments. A page kept as distinct whose target is stored is counter-evidence
    for the rule. (Replacements and prefix swaps are only known once learned: see
    :func:`predictions`.)"""
    parts = urlsplit(url)
    found = []
    for name, value in dict.fromkeys(parse_qsl(parts.query, keep_blank_values=True)):
        for rule in (f"query:-{name}", f"query:-{name}={value}"):
            target = apply(rule, url)
            if target is not None:
                found.append((rule, target))
    segments = _segments(parts.path)
    for length in range(1, MAX_RUN + 1):
        for start in range(len(segments) - length + 1):
            run = segments[start : start + length]
            if all(run):
                rule = "path:-" + "/".join(run)
                target = apply(rule, url)
                if target is not None:
                    found.append((rule, target))
    return found


def predictions(url: str, rules: Iterable[str]) -> list[tuple[tuple[str, ...], str]]:
    """(the rules used, target) for each URL that *rules* (a site's confirmed ones) map
    *url* to: each rule alone, then every query rule that applies at once (a URL with two
    tracking parameters)."""
    found: list[tuple[tuple[str, ...], str]] = []
    queries: list[str] = []
    for rule in rules:
        target = apply(rule, url)
        if target is not None and target != url:
            found.append(((rule,), target))
            if rule.startswith("query:"):
                queries.append(rule)
    if len(queries) > 1:
        target = url
        for rule in queries:
            target = apply(rule, target) or target
        found.append((tuple(queries), target))
    return found
