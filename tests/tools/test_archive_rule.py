"""The archive job decides as the crawl does with the default settings, containment by
paragraphs and the share check included: the crawl filter (a Deduplicator on ``memory:``),
the one-feed ``dedup``, ``dedup --engine local`` and the Dask engine keep the same items
of a generated feed (no shared corpora): reposts with a footer, copies cut by 10-25%, a
page contained in a longer one, pages sharing one long note, near-duplicates with a few
words changed, distinct pages."""

from __future__ import annotations

import json
import random

import pytest
from archive_feeds import job_of, pipeline_verdicts
from click.testing import CliRunner

from scrapy_simhash.cli import main
from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.archive import run_local
from scrapy_simhash.tools.feeds import read_feed, write_feed

WORDS = [
    "the",
    "city",
    "council",
    "said",
    "on",
    "monday",
    "that",
    "its",
    "plans",
    "for",
    "the",
    "new",
    "harbour",
    "bridge",
    "would",
    "cost",
    "more",
    "than",
    "expected",
    "after",
    "engineers",
    "found",
    "the",
    "old",
    "piers",
    "were",
    "weaker",
    "than",
    "the",
    "survey",
    "had",
    "shown",
    "residents",
    "near",
    "the",
    "river",
    "have",
    "asked",
    "for",
    "a",
    "public",
    "meeting",
    "before",
    "any",
    "work",
    "begins",
    "while",
    "local",
    "businesses",
    "fear",
    "months",
    "of",
    "closed",
    "roads",
    "and",
    "lost",
    "trade",
    "the",
    "mayor",
    "told",
    "reporters",
    "that",
    "funding",
    "from",
    "the",
    "regional",
    "government",
    "was",
    "still",
    "being",
    "negotiated",
    "and",
    "that",
    "a",
    "decision",
    "could",
    "come",
    "before",
    "the",
    "summer",
    "holidays",
    "opposition",
    "members",
    "called",
    "the",
    "project",
    "rushed",
    "and",
    "said",
    "the",
    "costs",
    "had",
    "never",
    "been",
    "explained",
    "clearly",
    "to",
    "taxpayers",
    "who",
    "will",
    "carry",
    "most",
    "of",
    "the",
    "burden",
    "over",
    "the",
    "coming",
    "decade",
    "farmers",
    "markets",
    "schools",
    "hospitals",
    "weather",
    "forecasts",
    "football",
    "results",
    "trains",
    "buses",
    "museum",
    "library",
    "garden",
    "festival",
    "concert",
    "election",
    "budget",
    "inflation",
    "wages",
    "housing",
]
NOTE = (
    "Editor's note: this article was updated to correct the name of the engineering firm "
    "that carried out the original survey of the harbour bridge piers in the spring."
)


def paragraph(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(45, 80))]
    return " ".join(words).capitalize() + "."


def page(rng: random.Random, paragraphs: int) -> list[str]:
    return [paragraph(rng) for _ in range(paragraphs)]


def edited(text: str, rng: random.Random, edits: int) -> str:
    words = text.split(" ")
    for _ in range(edits):
        words[rng.randrange(len(words))] = rng.choice(WORDS)
    return " ".join(words)


def generated_items(seed: int = 7) -> list[dict]:
    rng = random.Random(seed)
    items: list[dict] = []

    def add(kind: str, paragraphs: list[str]) -> None:
        items.append(
            {"url": f"https://{kind}.example/{len(items)}", "content": "\n\n".join(paragraphs)}
        )

    originals = [page(rng, rng.randint(4, 9)) for _ in range(24)]
    for n, paragraphs in enumerate(originals):
        add("original", paragraphs)
        if n % 4 == 0:  # a repost with a footer
            add("repost", [*paragraphs, "Read more stories like this one on our site every day."])
        if n % 4 == 1:  # a copy cut by 10-25%
            words = "\n\n".join(paragraphs).split(" ")
            add("cut", [" ".join(words[: int(len(words) * rng.uniform(0.75, 0.9))])])
        if n % 4 == 2:  # a few words changed
            add("edited", [edited(p, rng, 1) if i % 2 else p for i, p in enumerate(paragraphs)])
        if n % 4 == 3:  # contained in a longer page
            add("longer", [*page(rng, 2), *paragraphs, *page(rng, 3)])
    for _ in range(9):  # distinct pages sharing one long note
        add("note", [*page(rng, 3), NOTE])
    for _ in range(8):  # distinct pages
        add("distinct", page(rng, rng.randint(3, 7)))
    rng.shuffle(items)
    return items


@pytest.fixture(scope="module")
def config() -> SimhashSettings:
    return SimhashSettings.from_settings({})


@pytest.fixture(scope="module")
def feed(tmp_path_factory):
    path = tmp_path_factory.mktemp("rule") / "items.jl"
    write_feed(path, generated_items())
    return path


@pytest.fixture(scope="module")
def crawl_kept(feed, config) -> list[str]:
    verdicts = pipeline_verdicts(config, read_feed(feed))
    return [
        item["url"] for item, v in zip(read_feed(feed), verdicts, strict=True) if v.match is None
    ]


def kept_urls(outcomes, feed) -> list[str]:
    items = read_feed(feed)
    return [item["url"] for item, kept in zip(items, outcomes.kept.tolist(), strict=True) if kept]


def dedup(*args: str):
    result = CliRunner().invoke(main, ["dedup", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_the_feed_exercises_containment_and_the_share_check(feed, config, crawl_kept):
    verdicts = pipeline_verdicts(config, read_feed(feed))
    tests = {v.test for v in verdicts}
    assert {"near", "contained"} <= tests
    assert any(v.refused is not None for v in verdicts if v.match is None)
    assert len(crawl_kept) < len(verdicts)
    notes = [u for u in crawl_kept if "note." in u]
    assert len(notes) == 9  # one shared note drops none of them


def test_the_local_engine_keeps_what_the_crawl_keeps(feed, config, crawl_kept):
    outcomes = run_local([str(feed)], job_of(config)).outcomes
    assert kept_urls(outcomes, feed) == crawl_kept
    verdicts = pipeline_verdicts(config, read_feed(feed))
    for row, verdict in enumerate(verdicts):
        if verdict.match is not None:
            assert outcomes.matched_key[row] == verdict.match.key, row


def test_the_cli_one_feed_and_local_engine_keep_what_the_crawl_keeps(feed, tmp_path, crawl_kept):
    dedup(str(feed), "-o", str(tmp_path / "one.jl"))
    dedup(str(feed), "--engine", "local", "-o", str(tmp_path / "local.jl"), "--json")
    assert [i["url"] for i in read_feed(tmp_path / "one.jl")] == crawl_kept
    assert [i["url"] for i in read_feed(tmp_path / "local.jl")] == crawl_kept


def test_many_holders_of_one_anchor_are_boilerplate_in_order(config, tmp_path):
    # Seven pages each contained in one of seven longer pages, all sharing two notes:
    # held by more than five kept pages, the notes stop counting, as in the crawl.
    rng = random.Random(3)
    notes = [paragraph(rng), paragraph(rng)]
    items = []
    for n in range(7):
        body = page(rng, 2)
        items.append({"url": f"https://long.example/{n}", "content": "\n\n".join([*body, *notes])})
    for n in range(7):
        items.append(
            {"url": f"https://other.example/{n}", "content": "\n\n".join([*page(rng, 1), *notes])}
        )
    path = tmp_path / "notes.jl"
    write_feed(path, items)
    kept = [
        i["url"]
        for i, v in zip(items, pipeline_verdicts(config, items), strict=True)
        if v.match is None
    ]
    assert kept_urls(run_local([str(path)], job_of(config)).outcomes, path) == kept


def test_a_note_on_dropped_pages_turns_boilerplate_as_in_the_crawl(config, tmp_path):
    # A page of a note alone, then ten pages carrying it and a line of their own (made-up
    # words, far from the note's fingerprint): each contains the note's page and is
    # dropped, until more than five pages were seen holding the note (two identical ones
    # among them, kept apart); then they are kept, by the crawl and by the job alike.
    rng = random.Random(5)
    notes = page(rng, 4)
    items = [{"url": "https://shop.example/delivery", "content": "\n\n".join(notes)}]
    for n in range(10):
        made_up = ["".join(rng.choices("bcdfghklmnprstvz", k=7)) for _ in range(4)]
        own = " ".join(rng.choices(made_up, k=24)) if n != 9 else items[-1]["content"]
        text = "\n\n".join([*notes, own]) if n != 9 else own
        items.append({"url": f"https://shop.example/{n}", "content": text})
    path = tmp_path / "notes.jl"
    write_feed(path, items)
    verdicts = pipeline_verdicts(config, items)
    kept = [i["url"] for i, v in zip(items, verdicts, strict=True) if v.match is None]
    assert kept[0] == "https://shop.example/delivery"
    assert kept[-3:] == [f"https://shop.example/{n}" for n in (6, 7, 8)]
    assert kept_urls(run_local([str(path)], job_of(config)).outcomes, path) == kept


distributed = pytest.importorskip("distributed", reason="needs the [dask] extra")


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.slow  # a Dask cluster; the fast lane has the local engine's
def test_the_dask_engine_keeps_what_the_crawl_keeps(client, feed, config, crawl_kept):
    from scrapy_simhash.tools.archive import run_dask

    result = run_dask([str(feed)], job_of(config), client, blocksize=20_000)
    assert len(result.parts) > 2
    assert kept_urls(result.outcomes, feed) == crawl_kept
    local = run_local([str(feed)], job_of(config)).outcomes
    assert result.outcomes.matched_key.tolist() == local.matched_key.tolist()
    assert json.dumps(result.summary()) == json.dumps(
        run_local([str(feed)], job_of(config)).summary()
    )
