"""One contract for the URL-rule stores of every backend (memory, SQLite, Redis, spread Redis)."""

from __future__ import annotations

import sqlite3

import pytest
from crawls import page_text
from test_index_contract import BACKENDS, MARKS

from scrapy_simhash import Fingerprinter, open_index
from scrapy_simhash.index.skip_rules import SkippedRequest, learn, skip_rules_for
from scrapy_simhash.url_rules import MAX_RULES_PER_SITE, Evidence


@pytest.fixture(params=[pytest.param(name, marks=MARKS.get(name, [])) for name in sorted(BACKENDS)])
def backend(request, tmp_path):
    return BACKENDS[request.param](tmp_path, request)


@pytest.fixture
def index(backend):
    with backend.open() as index:
        yield index


def test_evidence_adds_up_per_site_and_rule(index):
    store = skip_rules_for(index)
    assert store.rules() == {}
    store.add("a.test", ["query:-ref", "path:-amp"], observations=1)
    store.add("a.test", ["query:-ref"], observations=2)
    store.add("a.test", ["query:-ref"], distinct=1)
    store.add("b.test", ["query:-ref"], observations=1)
    assert store.rules("a.test") == {
        ("a.test", "query:-ref"): Evidence(3, 1, 0),
        ("a.test", "path:-amp"): Evidence(1, 0, 0),
    }
    assert set(store.rules()) == {
        ("a.test", "query:-ref"),
        ("a.test", "path:-amp"),
        ("b.test", "query:-ref"),
    }


def test_a_removed_rule_is_gone_from_one_site_or_all(index):
    store = skip_rules_for(index)
    store.add("a.test", ["path:-amp"], observations=1)
    store.add("b.test", ["path:-amp"], observations=1)
    assert store.remove("path:-amp", "a.test") == 1
    assert set(store.rules()) == {("b.test", "path:-amp")}
    assert store.remove("path:-amp") == 1
    assert store.remove("path:-amp") == 0
    assert store.rules() == {}


def test_skipped_requests_are_kept_counted_and_forgotten(index):
    store = skip_rules_for(index)
    store.add("a.test", ["query:-a", "query:-b"], observations=3)
    first = SkippedRequest(
        "http://a.test/x?a=1&b=2", "a.test", "query:-a+query:-b", "http://a.test/x", 1.0
    )
    second = SkippedRequest("http://a.test/y?a=1", "a.test", "query:-a", "http://a.test/y", 2.0)
    store.record_skip(first)
    store.record_skip(second)
    assert store.skipped() == [first, second]
    assert store.rules("a.test")[("a.test", "query:-a")] == Evidence(3, 0, 2)
    assert store.rules("a.test")[("a.test", "query:-b")] == Evidence(3, 0, 1)
    assert store.forget_url(first.url) == 1
    assert store.forget_url(first.url) == 0
    assert store.forget_url() == 1
    assert store.skipped() == []


def test_a_site_keeps_a_bounded_number_of_rules(index):
    store = skip_rules_for(index)
    store.add("a.test", [f"query:-p{i}" for i in range(MAX_RULES_PER_SITE + 5)], observations=1)
    store.add("a.test", ["path:-late"], observations=1)
    assert len(store.rules("a.test")) == MAX_RULES_PER_SITE
    store.add("b.test", ["path:-late"], observations=1)
    assert ("b.test", "path:-late") in store.rules()


def test_rules_are_kept_between_opens(backend):
    if not backend.persistent:
        pytest.skip("a memory index is gone when closed")
    with backend.open() as index:
        skip_rules_for(index).add("a.test", ["path:-amp"], observations=2)
    with backend.open() as index:
        assert skip_rules_for(index).rules() == {("a.test", "path:-amp"): Evidence(2, 0, 0)}


def test_a_read_only_open_of_an_index_without_rules_writes_nothing(tmp_path):
    uri = f"sqlite:///{tmp_path / 'index.db'}"
    with open_index(uri):
        pass
    with open_index(uri, read_only=True) as index:
        store = skip_rules_for(index)
        assert store.rules() == {}
        assert store.skipped() == []
        assert store.forget_url() == 0
        assert store.remove("path:-amp") == 0
    tables = {
        row[0]
        for row in sqlite3.connect(tmp_path / "index.db").execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
        )
    }
    assert not {"skip_rules", "skip_requests"} & tables


def test_copies_are_kept_with_the_rule_that_predicted_them_and_forgotten(index):
    store = skip_rules_for(index)
    assert store.copy_of("http://a.test/x") is None
    store.record_copy("http://a.test/x", "http://a.test/x?ref=1")
    store.record_copy("http://a.test/y", "http://a.test/y?ref=1", "query:-ref")
    assert store.copy_of("http://a.test/x") == ("http://a.test/x?ref=1", "")
    assert store.copy_of("http://a.test/y") == ("http://a.test/y?ref=1", "query:-ref")
    store.forget_url("http://a.test/x")
    assert store.copy_of("http://a.test/x") is None
    store.forget_url()
    assert store.copy_of("http://a.test/y") is None


def stored(index, url: str, number: int) -> None:
    assert index.check_and_add(Fingerprinter().fingerprint(page_text(number)), url).status == "new"


def test_learning_from_copies_either_way_and_from_distinct_pages(index):
    store = skip_rules_for(index)
    # The original first, then its copy; a copy first, then the original: both teach.
    learn(index, "http://a.test/1?ref=x", "http://a.test/1")
    learn(index, "http://a.test/2", "http://a.test/2?ref=x")
    assert store.rules()[("a.test", "query:-ref")] == Evidence(2, 0, 0)
    learn(index, "http://a.test/3?ref=x", "http://a.test/3")
    # Confirmed: a page kept under a variant predicts its original's URL to be a copy.
    stored(index, "http://a.test/4?ref=y", 4)
    learn(index, "http://a.test/4?ref=y", None)
    assert store.copy_of("http://a.test/4") == ("http://a.test/4?ref=y", "query:-ref")
    # A distinct page the rule maps to a stored page retires it, as does a distinct page
    # it predicted to be a copy.
    stored(index, "http://a.test/4", 5)
    learn(index, "http://a.test/4", None)
    assert store.rules()[("a.test", "query:-ref")].distinct == 1
