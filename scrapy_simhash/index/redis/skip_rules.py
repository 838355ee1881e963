"""The URL rules of a Redis index (see :mod:`scrapy_simhash.index.skip_rules`): hashes
under its hash tag, made by the first write."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ...url_rules import MAX_RULES_PER_SITE, Evidence, SkippedRequest

if TYPE_CHECKING:
    from .guards import RedisServer


class RedisSkipRules:
    """Two hashes under a Redis index's hash tag (one slot, also of a spread index):
    ``{prefix}:skip:rules`` (site and rule -> evidence) and ``{prefix}:skip:requests``."""

    _SEP = "\x1f"

    def __init__(self, store: Any) -> None:
        self.server: RedisServer = store.server
        tag = self.server.tag
        self._rules_key = f"{tag}:skip:rules"
        self._requests_key = f"{tag}:skip:requests"
        self._copies_key = f"{tag}:skip:copies"

    @property
    def _client(self) -> Any:
        return self.server.client

    def add(
        self, site: str, rules: Iterable[str], *, observations: int = 0, distinct: int = 0
    ) -> None:
        rules = list(rules)
        if not rules:
            return
        with self.server.errors("record URL rule evidence"):
            known = self.rules(site)
            room = MAX_RULES_PER_SITE - len(known)
            pipe = self._client.pipeline(transaction=False)
            for rule in rules:
                if (site, rule) not in known:
                    if room <= 0:
                        continue
                    room -= 1
                field = f"{site}{self._SEP}{rule}{self._SEP}"
                if observations:
                    pipe.hincrby(self._rules_key, field + "o", observations)
                if distinct:
                    pipe.hincrby(self._rules_key, field + "d", distinct)
            pipe.execute()

    def rules(self, site: str | None = None) -> dict[tuple[str, str], Evidence]:
        with self.server.errors("read the URL rules"):
            stored = self._client.hgetall(self._rules_key)
        counts: dict[tuple[str, str], dict[str, int]] = {}
        for field, value in stored.items():
            field = field.decode() if isinstance(field, bytes) else field
            rule_site, rule, what = field.split(self._SEP)
            if site is None or rule_site == site:
                counts.setdefault((rule_site, rule), {})[what] = int(value)
        return {k: Evidence(c.get("o", 0), c.get("d", 0), c.get("k", 0)) for k, c in counts.items()}

    def remove(self, rule: str, site: str | None = None) -> int:
        gone = [k for k in self.rules(site) if k[1] == rule]
        if gone:
            with self.server.errors("remove a URL rule"):
                self._client.hdel(
                    self._rules_key,
                    *(f"{s}{self._SEP}{r}{self._SEP}{w}" for s, r in gone for w in "odk"),
                )
        return len(gone)

    def record_skip(self, skipped: SkippedRequest) -> None:
        s = skipped
        with self.server.errors("record a skipped request"):
            pipe = self._client.pipeline(transaction=False)
            pipe.hset(
                self._requests_key,
                s.url,
                json.dumps({"site": s.site, "rule": s.rule, "target": s.target, "at": s.at}),
            )
            for rule in s.rule.split("+"):
                pipe.hincrby(self._rules_key, f"{s.site}{self._SEP}{rule}{self._SEP}k", 1)
            pipe.execute()

    def skipped(self) -> list[SkippedRequest]:
        with self.server.errors("read the skipped requests"):
            stored = self._client.hgetall(self._requests_key)
        found = []
        for url, value in stored.items():
            url = url.decode() if isinstance(url, bytes) else url
            record = json.loads(value)
            found.append(
                SkippedRequest(url, record["site"], record["rule"], record["target"], record["at"])
            )
        return sorted(found, key=lambda s: s.at)

    def record_copy(self, url: str, kept: str, rule: str = "") -> None:
        with self.server.errors("record a copy"):
            self._client.hset(self._copies_key, url, f"{kept}{self._SEP}{rule}")

    def predict_copies(self, kept: str, targets: dict[str, str]) -> None:
        if targets:
            with self.server.errors("record predicted copies"):
                pipe = self._client.pipeline(transaction=False)
                for rule, url in targets.items():
                    pipe.hsetnx(self._copies_key, url, f"{kept}{self._SEP}{rule}")
                pipe.execute()

    def copy_of(self, url: str) -> tuple[str, str] | None:
        with self.server.errors("read the copies"):
            value = self._client.hget(self._copies_key, url)
        if value is None:
            return None
        value = value.decode() if isinstance(value, bytes) else value
        kept, _, rule = value.partition(self._SEP)
        return kept, rule

    def forget_url(self, url: str | None = None) -> int:
        with self.server.errors("forget skipped requests"):
            if url is not None:
                self._client.hdel(self._copies_key, url)
                return int(self._client.hdel(self._requests_key, url))
            count = int(self._client.hlen(self._requests_key))
            self._client.delete(self._requests_key, self._copies_key)
            return count
