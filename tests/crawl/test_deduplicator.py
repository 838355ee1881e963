"""What the pipeline and the middleware share: the audit log and flag-only mode, seen
through the pipeline (the middleware's side is in test_middleware.py)."""

from __future__ import annotations

import logging

import pytest
from pipelines import make_pipeline
from prose import prose
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash import NearDuplicate, open_index

ARTICLE = (
    "The city council approved a new tram line on Tuesday after a long debate about costs. "
    "The line will connect the harbour district with the university campus and the central "
    "station, and the first trams are expected to run in the spring of next year, according "
    "to the transport department. Residents of the eastern suburbs welcomed the decision, "
    "while shop owners along the planned route worried about two years of construction work."
)


def item(n: int, content: str = ARTICLE) -> dict:
    return {"url": f"https://a.example/{n}", "title": "Tram", "content": content}


@deferred_f_from_coro_f
async def test_every_drop_is_in_the_audit_log(tmp_path):
    pipeline = make_pipeline(tmp_path)
    await pipeline.process_item(item(1))
    with pytest.raises(NearDuplicate):
        await pipeline.process_item(item(2))
    await pipeline.process_item(item(3, "Short note"))
    with pytest.raises(NearDuplicate):
        await pipeline.process_item(item(4, "short   NOTE"))
    pipeline.close_spider()
    with open_index(f"sqlite:///{tmp_path / 'index.db'}") as index:
        drops = [(d.key, d.kept_key, d.distance, d.exact) for d in index.drops()]
    assert drops == [
        ("https://a.example/2", "https://a.example/1", 0, False),
        ("https://a.example/4", "https://a.example/3", 0, True),
    ]


@deferred_f_from_coro_f
async def test_flag_only_keeps_and_marks_items(tmp_path, caplog):
    pipeline = make_pipeline(tmp_path, SIMHASH_FLAG_ONLY=True, SIMHASH_FLAG_FIELD="dup_of")
    first = await pipeline.process_item(item(1))
    assert "dup_of" not in first
    with caplog.at_level(logging.INFO, logger="scrapy_simhash.crawl.pipeline"):
        second = await pipeline.process_item(item(2))
    assert second["dup_of"] == "https://a.example/1"
    assert (
        "Flagged (kept): https://a.example/2 is a near-duplicate of https://a.example/1 "
        "(distance 0; 100% of its text is in the kept page)" in caplog.messages
    )
    stats = pipeline.stats.get_stats()
    assert stats["simhash/flagged"] == stats["simhash/flagged/near"] == 1
    assert "simhash/dropped" not in stats
    assert list(pipeline.dedup.index.drops()) == [], "nothing was dropped"
    assert len(pipeline.dedup.index) == 1, "the duplicate is not stored"


@deferred_f_from_coro_f
async def test_a_longer_page_holding_a_kept_one_is_kept_and_said_to_contain_it(tmp_path):
    teaser = "\n".join(prose(400, 1))
    article = teaser + "\n" + "\n".join(prose(300, 2))
    pipeline = make_pipeline(tmp_path, SIMHASH_FLAG_ONLY=True)
    await pipeline.process_item({"url": "https://a.example/teaser", "content": teaser})
    full = await pipeline.process_item({"url": "https://a.example/full", "content": article})
    assert full["simhash_contains"] == "https://a.example/teaser"
    assert "simhash_duplicate_of" not in full
    stats = pipeline.stats.get_stats()
    assert stats["simhash/kept/own_text"] == stats["simhash/kept/contains"] == 1
    assert len(pipeline.dedup.index) == 2
    # Without flag-only the page is kept the same, and no field is set.
    (tmp_path / "plain").mkdir()
    pipeline = make_pipeline(tmp_path / "plain")
    await pipeline.process_item({"url": "https://a.example/teaser", "content": teaser})
    full = await pipeline.process_item({"url": "https://a.example/full", "content": article})
    assert "simhash_contains" not in full
    assert pipeline.stats.get_value("simhash/kept/contains") == 1


@deferred_f_from_coro_f
async def test_a_failing_audit_log_does_not_change_the_verdict(tmp_path, caplog):
    import sqlite3

    open_index(f"sqlite:///{tmp_path / 'index.db'}").close()
    pipeline = make_pipeline(tmp_path)
    # The audit log vanishes during the crawl (at open, a missing table is refused).
    with sqlite3.connect(tmp_path / "index.db") as conn:
        conn.execute("DROP TABLE drops")
    await pipeline.process_item(item(1))
    with caplog.at_level(logging.ERROR), pytest.raises(NearDuplicate):
        await pipeline.process_item(item(2))
    assert pipeline.stats.get_value("simhash/errors/audit_log") == 1
    assert pipeline.stats.get_value("simhash/dropped") == 1
    assert "Could not write the drop of https://a.example/2 to the audit log" in caplog.text


@pytest.mark.parametrize(
    ("status", "settings", "action"),
    [
        ("new", {}, "keep"),
        ("duplicate", {}, "drop"),
        ("duplicate", {"SIMHASH_FLAG_ONLY": True}, "flag"),
        ("unchanged", {}, "unchanged"),
        ("unchanged", {"SIMHASH_DROP_UNCHANGED": False}, "keep"),
        ("unchanged", {"SIMHASH_FLAG_ONLY": True}, "keep"),
    ],
)
def test_one_verdict_one_action_for_pipeline_and_middleware(tmp_path, status, settings, action):
    from scrapy_simhash.dedup import Analysis, Verdict
    from scrapy_simhash.index.base import Match

    runner = make_pipeline(tmp_path, **settings).runner
    match = None if status == "new" else Match("https://a.example/0", 1, 0, 0.0)
    verdict = Verdict(Analysis("simhash", 1, 30), match, status)
    assert runner.outcomes.action(verdict) == action
    assert runner.outcomes.action(None) == "keep"
