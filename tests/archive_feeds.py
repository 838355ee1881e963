"""Feeds for the archive job's tests: real stories with planted copies and chains, and the
crawl-time filter's verdicts on them (the real Deduplicator over the same ordered items)."""

from __future__ import annotations

import html
import random
import re
from pathlib import Path

from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.archive import ArchiveJob
from scrapy_simhash.tools.feeds import dedup_items

#: What the tests compare between two runs' outcomes.
COMPARED = ("order", "kept", "status", "matched", "matched_key", "evidence", "distance")


def stories(corpora: Path, limit: int) -> list[str]:
    raw = (corpora / "reuters21578" / "reut2-000.sgm").read_text(encoding="latin-1")
    bodies = [html.unescape(m) for m in re.findall(r"<BODY>(.*?)</BODY>", raw, re.S)]
    return bodies[:limit]


def edited(text: str, rng: random.Random, edits: int) -> str:
    words = text.split()
    for _ in range(edits):
        words[rng.randrange(len(words))] = rng.choice(["update", "corrected", "Reuters"])
    return " ".join(words)


def feed_items(corpora: Path, seed: int = 11, limit: int = 260) -> list[dict]:
    """Real stories with planted near-copies (1-3 words changed), exact copies, chains of
    one-word edits (v0..v20, each edited from the one before), short texts and items
    without text, shuffled."""
    rng = random.Random(seed)
    items = []
    texts = stories(corpora, limit)
    for n, text in enumerate(texts):
        items.append({"url": f"https://a.example/{n}", "title": "", "content": text})
        if len(text.split()) > 40 and rng.random() < 0.3:
            copy = edited(text, rng, rng.randint(1, 3))
            items.append({"url": f"https://b.example/{n}", "title": "", "content": copy})
        if rng.random() < 0.05:
            items.append({"url": f"https://c.example/{n}", "title": "", "content": text})
    long = [t for t in texts if len(t.split()) > 150][:3]
    for c, text in enumerate(long):
        version = text
        for step in range(21):
            items.append({"url": f"https://chain{c}.example/{step}", "content": version})
            version = edited(version, rng, 1)
    items += [{"url": f"https://d.example/{i}", "title": "Short note"} for i in range(4)]
    items += [{"url": f"https://e.example/{i}", "content": ""} for i in range(3)]
    rng.shuffle(items)
    return items


def job_of(config: SimhashSettings) -> ArchiveJob:
    return ArchiveJob(
        config.analysis_params,
        tuple(config.text_fields),
        config.key_field,
        config.max_distance,
        min_share=config.min_share,
    )


def pipeline_verdicts(config: SimhashSettings, items: list[dict], index_uri="memory:"):
    """The crawl-time filter: the real Deduplicator over the items, in order."""
    dedup = config.open_deduplicator(index_uri)
    with dedup.index:
        return [
            found.verdict
            for found in dedup_items(
                items,
                dedup,
                text_fields=config.text_fields,
                key_field=config.key_field,
                extractor=config.html_extractor,
            )
        ]


def assert_same_as_pipeline(outcomes, verdicts) -> None:
    assert len(outcomes.order) == len(verdicts)
    for row, verdict in enumerate(verdicts):
        assert outcomes.kept[row] == (verdict.match is None), row
        assert outcomes.status[row] == ("new", "changed", "unchanged", "duplicate").index(
            verdict.status
        ), row
        if verdict.match is not None:
            assert outcomes.matched_key[row] == verdict.match.key, row
            assert outcomes.distance[row] == verdict.match.distance, row
