"""Where an index keeps its URL rules (see :mod:`scrapy_simhash.url_rules`) and the requests
they skipped: beside the pages, so that every process of a crawl and every later crawl
shares them.

Outside the index's versioned layout, as the crawl journal is: the SQLite tables and the
Redis keys are made by the first write, an index without them simply has no rules, and a
store of an index opened read-only never writes. The store counts evidence; whether a rule
is confirmed is :func:`scrapy_simhash.url_rules.confirmed`'s to say.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from ..url_rules import (
    MAX_RULES_PER_SITE,
    Evidence,
    SkippedRequest,
    apply,
    candidates,
    learned,
    site,
)


class SkipRuleStore(Protocol):
    def add(
        self, site: str, rules: Iterable[str], *, observations: int = 0, distinct: int = 0
    ) -> None:
        """Add evidence for each of *rules* on *site*; a new rule beyond
        :data:`~scrapy_simhash.url_rules.MAX_RULES_PER_SITE` of its site is ignored."""

    def rules(self, site: str | None = None) -> dict[tuple[str, str], Evidence]:
        """(site, rule) -> evidence, of one site or all."""

    def remove(self, rule: str, site: str | None = None) -> int:
        """Forget *rule* (on *site*, or on every site); return how many were removed."""

    def record_skip(self, skipped: SkippedRequest) -> None:
        """Keep *skipped* (the latest skip of a URL), and count it for its rules."""

    def skipped(self) -> list[SkippedRequest]:
        """The requests skipped, oldest first."""

    def record_copy(self, url: str, kept: str, rule: str = "") -> None:
        """Keep that the page of *url* is a copy of the page stored under *kept*: dropped
        as one (*rule* empty), or predicted by *rule* from *kept*'s URL."""

    def predict_copies(self, kept: str, targets: dict[str, str]) -> None:
        """Keep, for each rule -> URL of *targets*, that the rule (once confirmed) predicts
        the page of that URL to be a copy of the page stored under *kept*; a URL known
        already keeps what is known of it."""

    def copy_of(self, url: str) -> tuple[str, str] | None:
        """(kept URL, rule) of the page *url* is a copy of (see :meth:`record_copy`)."""

    def forget_url(self, url: str | None = None) -> int:
        """Forget the skip and the copy of *url* (of every URL with ``None``); return how
        many skips were forgotten."""


class MemorySkipRules:
    """The store of a :class:`~scrapy_simhash.index.memory.MemoryIndex` (one process)."""

    def __init__(self) -> None:
        self._rules: dict[tuple[str, str], Evidence] = {}
        self._per_site: dict[str, int] = {}
        self._skipped: dict[str, SkippedRequest] = {}
        self._copies: dict[str, tuple[str, str]] = {}

    def add(
        self, site: str, rules: Iterable[str], *, observations: int = 0, distinct: int = 0
    ) -> None:
        for rule in rules:
            old = self._rules.get((site, rule))
            if old is None:
                if self._per_site.get(site, 0) >= MAX_RULES_PER_SITE:
                    continue
                self._per_site[site] = self._per_site.get(site, 0) + 1
                old = Evidence()
            self._rules[site, rule] = Evidence(
                old.observations + observations, old.distinct + distinct, old.skipped
            )

    def rules(self, site: str | None = None) -> dict[tuple[str, str], Evidence]:
        return {k: v for k, v in self._rules.items() if site is None or k[0] == site}

    def remove(self, rule: str, site: str | None = None) -> int:
        gone = [k for k in self._rules if k[1] == rule and (site is None or k[0] == site)]
        for key in gone:
            del self._rules[key]
            self._per_site[key[0]] -= 1
        return len(gone)

    def record_skip(self, skipped: SkippedRequest) -> None:
        self._skipped.pop(skipped.url, None)
        self._skipped[skipped.url] = skipped
        for rule in skipped.rule.split("+"):
            old = self._rules.get((skipped.site, rule))
            if old is not None:
                self._rules[skipped.site, rule] = Evidence(
                    old.observations, old.distinct, old.skipped + 1
                )

    def skipped(self) -> list[SkippedRequest]:
        return list(self._skipped.values())

    def record_copy(self, url: str, kept: str, rule: str = "") -> None:
        self._copies[url] = (kept, rule)

    def predict_copies(self, kept: str, targets: dict[str, str]) -> None:
        for rule, url in targets.items():
            self._copies.setdefault(url, (kept, rule))

    def copy_of(self, url: str) -> tuple[str, str] | None:
        return self._copies.get(url)

    def forget_url(self, url: str | None = None) -> int:
        if url is None:
            count = len(self._skipped)
            self._skipped.clear()
            self._copies.clear()
            return count
        self._copies.pop(url, None)
        return 1 if self._skipped.pop(url, None) is not None else 0


def skip_rules_for(index: Any) -> SkipRuleStore:
    """The store of *index*'s backend: beside its pages (one per index object)."""
    store = getattr(index, "_skip_rules", None)
    if store is not None:
        return store
    module = type(index).__module__
    if module.startswith("scrapy_simhash.index.sqlite"):
        from .sqlite.skip_rules import SqliteSkipRules

        store = SqliteSkipRules(getattr(index, "store", index))
    elif module.startswith("scrapy_simhash.index.redis"):
        from .redis.skip_rules import RedisSkipRules

        store = RedisSkipRules(getattr(index, "store", index))
    elif module.startswith("scrapy_simhash.index.memory"):
        store = MemorySkipRules()
    else:
        raise TypeError(f"No URL rules for {type(index).__name__}")
    index._skip_rules = store
    return store


_NONE = Evidence()


def learn(index: Any, url: str, copy_of: str | None) -> None:
    """Record what the page of *url* teaches *index*'s URL rules. In the index's thread,
    after the check.

    Dropped as a copy of the page stored under *copy_of*: one observation of each rule
    that maps either URL to the other (a copy's URL and its original's name the same
    page, whichever came first). Kept as distinct (*copy_of* ``None``): a distinct page
    against each rule that maps *url* to a stored page, or that predicted *url* to be a
    copy; and each other rule of the site that maps *url* to a URL predicts that URL to be
    a copy of this page (the middleware uses the prediction only while the rule is
    confirmed)."""
    store = skip_rules_for(index)
    where = site(url)
    if copy_of is not None:
        rules = list(dict.fromkeys(learned(url, copy_of) + learned(copy_of, url)))
        if rules:
            store.add(where, rules, observations=1)
        store.record_copy(url, copy_of)  # a variant of *url* is then a copy too
        return
    known = store.rules(where)
    targets = dict(candidates(url))
    for _, rule in known:
        if rule not in targets:
            target = apply(rule, url)
            if target is not None:
                targets[rule] = target
    stored: dict[str, bool] = {}
    wrong = []
    for rule, target in targets.items():
        if target != url:
            if target not in stored:
                stored[target] = bool(index.find(target))
            if stored[target]:
                wrong.append(rule)
    predicted = store.copy_of(url)
    if predicted is not None and predicted[1]:
        wrong.append(predicted[1])  # it predicted a copy, and this page is distinct
    if wrong:
        store.add(where, list(dict.fromkeys(wrong)), distinct=1)
    # Each rule the site has shown that maps *url* to a URL not stored predicts that URL to
    # be a copy of this page: used once the rule is confirmed (then or later), retired by a
    # distinct page. (Only rules shown: a site without variants stores no predictions.)
    store.predict_copies(
        url,
        {
            rule: target
            for rule, target in targets.items()
            if target != url
            and not stored[target]
            and rule not in wrong
            and known.get((where, rule), _NONE).observations
        },
    )
