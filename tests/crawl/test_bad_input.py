"""Odd and hostile items through the real pipeline, and the text path under fuzzing.

Every bad item must be handled without an exception escaping, in bounded time, and counted
in the crawl stats. The known traps of the libraries underneath (jieba's HMM, libxml2's
depth limit, jieba's shared cache file) each have a test that fails if the trap returns.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import scrapy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pipelines import ARTICLE, make_pipeline, simhash_stats, subprocess_env
from scrapy.utils.defer import deferred_f_from_coro_f

from scrapy_simhash import NearDuplicate
from scrapy_simhash.analysis.fingerprint import Fingerprinter, hash_term
from scrapy_simhash.analysis.terms import Segmenter
from scrapy_simhash.dedup import Deduplicator
from scrapy_simhash.extract.fields import MAX_FIELD_LENGTH, field_text
from scrapy_simhash.extract.text import normalize_text
from scrapy_simhash.index.memory import MemoryIndex


class Article(scrapy.Item):
    url = scrapy.Field()
    title = scrapy.Field()
    content = scrapy.Field()


BAD_ITEMS = {
    "no fields at all": {},
    "declared but unset fields": Article(),
    "None everywhere": {"url": None, "title": None, "content": None},
    "key not a string": {"url": 12345, "content": ARTICLE},
    "bytes": {"url": "b", "content": ARTICLE.encode("utf-8")},
    "non-UTF-8 bytes": {"url": "c", "content": "Café crème brûlée ".encode("latin-1") * 300},
    "invalid bytes only": {"url": "d", "content": bytes(range(128, 256)) * 100},
    "a number": {"url": "e", "title": 3.14, "content": 42},
    "a dict": {"url": "f", "content": {"text": ARTICLE}},
    "a list with None": {"url": "g", "content": [None, "first part", None, b"second"]},
    "only punctuation": {"url": "h", "content": "!?.,;:-—…«»【】、。" * 2000},
    "only emoji": {"url": "i", "content": "😀🎉🦆👍🏽🇫🇷" * 2000},
    "only zero-width characters": {"url": "j", "content": "\u200b\u200c\u200d\u2060\ufeff" * 5000},
    "only numbers": {"url": "k", "content": "2024 3.14 1,000,000 " * 1000},
    "NUL and control characters": {"url": "l", "content": "\x00\x01\x02 text \x7f\x1b[31m" * 500},
    "lone surrogates": {"url": "m", "content": "text \ud800 more \udfff " * 500},
    "control characters in HTML": {
        "url": "q",
        "content": f"<html><body><p>form\x0cfeed\x0b\x01 \ufffe</p><p>{ARTICLE}</p></body>",
    },
    "broken HTML": {"url": "n", "content": "<html><body><div><p>unclosed <b><i>" + ARTICLE},
    "markup only": {"url": "o", "content": "<html><body><div><br><hr></div></body></html>"},
    "script only": {"url": "p", "content": "<html><script>var x = 1;</script></html>" * 100},
    "a lone surrogate in the key": {"url": "https://example.com/\ud800", "content": ARTICLE},
    "a lone surrogate as the key, short text": {"url": "\udfff", "content": "Short notice"},
}


def _nested(depth: int, inner: object) -> list:
    for _ in range(depth):
        inner = [inner]
    return inner


def _holding_itself() -> list:
    items: list = [ARTICLE]
    items.append(items)
    return items


def _dict_nested(depth: int) -> dict:
    inner: dict = {"text": ARTICLE}
    for _ in range(depth):
        inner = {"a": inner}
    return inner


BAD_ITEMS.update(
    {
        "a list nested 50,000 deep": {"url": "r", "content": _nested(50_000, ARTICLE)},
        "text beside a list nested 50,000 deep": {
            "url": "s",
            "content": [ARTICLE, _nested(50_000, "x")],
        },
        "a list that holds itself": {"url": "t", "content": _holding_itself()},
        "a dict nested 50,000 deep": {"url": "u", "content": _dict_nested(50_000)},
    }
)


@pytest.mark.parametrize("name", sorted(BAD_ITEMS))
@deferred_f_from_coro_f
async def test_bad_item_is_handled_and_counted(tmp_path, name):
    pipeline = make_pipeline(tmp_path)
    item = BAD_ITEMS[name]
    try:
        result = await pipeline.process_item(item)
    except NearDuplicate:  # pragma: no cover - each item runs on a fresh index
        pytest.fail(f"{name}: dropped on an empty index")
    assert result is item
    counted = simhash_stats(pipeline)
    assert counted["checked"] == 1
    # Every item is analysed (not let through unchecked after an error) and counted under
    # exactly one outcome.
    kinds = {kind: counted.get(kind, 0) for kind in ("simhash", "short", "empty")}
    assert "errors/analysis" not in counted, counted
    assert sum(kinds.values()) == 1, counted
    pipeline.close_spider()


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_nested_and_self_holding_lists_reach_worker_processes(tmp_path):
    # Sent to a SIMHASH_WORKERS process, they must give the text they give in the crawl's
    # process, not an analysis error (pickling a list 50,000 deep fails).
    names = ["a list nested 50,000 deep", "a list that holds itself", "a dict nested 50,000 deep"]
    (tmp_path / "here").mkdir()
    (tmp_path / "workers").mkdir()
    here = make_pipeline(tmp_path / "here")
    workers = make_pipeline(tmp_path / "workers", SIMHASH_WORKERS=1)
    try:
        for name in names:
            for pipeline in (here, workers):
                assert await pipeline.process_item(BAD_ITEMS[name]) is BAD_ITEMS[name]
        assert workers.runner.workers is not None
        assert simhash_stats(workers) == simhash_stats(here)
        assert "errors/analysis" not in simhash_stats(workers)
    finally:
        here.close_spider()
        workers.close_spider()


@deferred_f_from_coro_f
async def test_same_bad_item_twice_is_a_duplicate_not_a_crash(tmp_path):
    pipeline = make_pipeline(tmp_path, SIMHASH_TEXT_FIELDS=["content"])
    item = {"url": "u1", "content": "Café crème ".encode("latin-1") * 300}
    await pipeline.process_item(item)
    with pytest.raises(NearDuplicate):
        await pipeline.process_item({**item, "url": "u2"})
    pipeline.close_spider()


@pytest.mark.slow
@deferred_f_from_coro_f
async def test_50_mb_page_is_cut_and_counted(tmp_path):
    # Unbounded, this page takes lxml and the tokenizer well over a minute: only its first
    # MAX_FIELD_LENGTH characters are read (no bound on time here, which a loaded machine
    # could break: the cut is what bounds the work, and it is counted).
    pipeline = make_pipeline(tmp_path)
    paragraph = "<p>" + ARTICLE + "</p>\n"
    page = "<html><body>" + paragraph * (50_000_000 // len(paragraph)) + "</body></html>"
    assert len(page) > 49_000_000
    await pipeline.process_item({"url": "big", "content": page})
    assert simhash_stats(pipeline)["truncated"] == 1
    # What was fingerprinted is the page cut at the limit: its copy cut there is a duplicate.
    with pytest.raises(NearDuplicate, match="cut is a near-duplicate of big"):
        await pipeline.process_item({"url": "cut", "content": page[:MAX_FIELD_LENGTH]})
    pipeline.close_spider()


@pytest.mark.slow
def test_hostile_50_mb_of_nested_tags_is_bounded():
    page = "<html><body>" + "<div>a " * 7_000_000
    text = field_text(page)
    # Only the first MAX_FIELD_LENGTH characters are parsed (no bound on time, which a
    # loaded machine could break: the cut bounds the work).
    assert text.startswith("a\na\na")
    assert len(text) < 3_000_000  # all of it would be 14 million characters


@deferred_f_from_coro_f
async def test_deeply_nested_page_keeps_its_text(tmp_path):
    # libxml2 silently drops text nested deeper than 255 levels; the nested page must still
    # be fingerprinted on its text, so its flat copy is a duplicate of it.
    pipeline = make_pipeline(tmp_path)
    nested = "<html><body>" + "<div>" * 5000 + f"<p>{ARTICLE}</p>" + "</div>" * 5000
    await pipeline.process_item({"url": "nested", "content": nested})
    assert simhash_stats(pipeline)["simhash"] == 1
    with pytest.raises(NearDuplicate, match="flat is a near-duplicate of nested"):
        await pipeline.process_item({"url": "flat", "content": f"<p>{ARTICLE}</p>"})
    pipeline.close_spider()


# -- known traps -----------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jieba", "rjieba"])
def test_the_hmm_that_is_quadratic_on_a_run_of_one_character_is_off(backend):
    # With the HMM on, jieba takes minutes on '的' * 100_000 (quadratic). It is off: it
    # would guess the unknown name 小明 as one word. (The time of such a run is printed by
    # benchmarks/han_run.py, not asserted: a loaded machine could break any bound.)
    pytest.importorskip(backend)
    words = Segmenter(backend).cut("小明硕士毕业于中国科学院计算所")
    assert words[:2] == ["小", "明"] and "中国科学院" in words


@pytest.mark.slow
def test_jieba_cache_is_private(tmp_path, monkeypatch):
    """A dictionary cache planted in the shared temp directory is never loaded."""
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    # A valid jieba cache whose dictionary makes "我爱" one word and knows no "北京".
    poisoned = {"我": 10, "爱": 10, "我爱": 10**9}
    (shared / "jieba.cache").write_bytes(marshal.dumps((poisoned, sum(poisoned.values()))))

    segmenter = Segmenter("jieba")
    assert segmenter.cut("我爱北京") == ["我", "爱", "北京"]
    private = Path(os.environ["XDG_CACHE_HOME"], "scrapy-simhash")
    assert (private / "jieba.cache").is_file()
    assert private.stat().st_mode & 0o077 == 0, "the cache directory is open to others"


# -- fuzzing the text path -------------------------------------------------------------

MARKUP = st.sampled_from(
    ["<div>", "</div>", "<p>", "<br>", "<html>", "<body>", "<script>", "</script>", "<nav>",
     "<!--", "-->", "&amp;", "&#0;", "&#x110000;", "<?xml version='1.0' encoding='utf-8'?>",
     "\u200b", "\ufeff", "的", "Ｆｕｌｌ", "\x00", "\r\n", "<title>", "<a href='x'>"]
)  # fmt: skip
#: Not valid Unicode text, but a str can hold them (json.loads('"\\ud800"') makes one).
LONE_SURROGATES = st.characters(categories=["Cs"])
FIELDS = st.one_of(
    st.text(),
    st.lists(st.one_of(st.text(max_size=30), MARKUP, LONE_SURROGATES), max_size=60).map("".join),
    st.binary(max_size=500),
)


def test_lone_surrogate_does_not_crash_the_hash():
    # mmh3 given such a str crashes the whole interpreter, taking the crawl with it.
    assert hash_term("a\ud800b") != hash_term("ab")
    assert hash_term("中") == 9531903562637207895  # as mmh3.hash64("中") gave before


def fingerprint_value(dedup: Deduplicator, value) -> tuple[str, int]:
    analysis = dedup.analyse(field_text(value))
    return analysis.kind, analysis.value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=FIELDS)
def test_text_path_never_raises_and_is_deterministic(value):
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(segmenter="rjieba"))
    first = fingerprint_value(dedup, value)
    assert first == fingerprint_value(dedup, value)
    assert 0 <= first[1] < 2**64
    normalized = normalize_text(field_text(value))
    assert normalize_text(normalized) == normalized, "normalising is not idempotent"


SAMPLES = [
    ARTICLE,
    "北京大学的学生在图书馆里读书，准备下个月的考试。" * 5,
    "Mixed 中文 and English text with numbers 2024 and émojis 😀" * 5,
    "<html><body><nav>menu</nav><p>" + ARTICLE + "</p></body></html>",
    "Ｆｕｌｌ\u200bｗｉｄｔｈ text " * 30,
]

FINGERPRINT_SCRIPT = """
import json, sys
from scrapy_simhash.dedup import Deduplicator
from scrapy_simhash.analysis.fingerprint import Fingerprinter, hash_term
from scrapy_simhash.index.memory import MemoryIndex
from scrapy_simhash.extract.fields import MAX_FIELD_LENGTH, field_text
samples = json.loads(sys.stdin.read())
dedup = Deduplicator(MemoryIndex(), Fingerprinter(segmenter=sys.argv[1]))
analyses = [dedup.analyse(field_text(s)) for s in samples]
print(json.dumps([[a.kind, a.value] for a in analyses]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["jieba", "rjieba"])
def test_fingerprints_are_the_same_in_another_process(backend):
    pytest.importorskip(backend)
    dedup = Deduplicator(MemoryIndex(), Fingerprinter(segmenter=backend))
    here = [list(fingerprint_value(dedup, s)) for s in SAMPLES]
    env = subprocess_env(PYTHONHASHSEED="12345")
    result = subprocess.run(
        [sys.executable, "-c", FINGERPRINT_SCRIPT, backend],
        input=json.dumps(SAMPLES),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == here
