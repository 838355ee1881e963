"""URL rules: what a copy's URL and its original's teach, and what a rule predicts."""

from __future__ import annotations

import pytest

from scrapy_simhash.url_rules import (
    MAX_RUN,
    Evidence,
    apply,
    candidates,
    confirmed,
    learned,
    predictions,
    site,
)


@pytest.mark.parametrize(
    ("dropped", "kept", "rule"),
    [
        ("http://a.test/x/?utm_source=t", "http://a.test/x/", "query:-utm_source"),
        ("http://a.test/x?id=3&ref=tw", "http://a.test/x?id=3", "query:-ref=tw"),
        ("http://a.test/docs/amp/", "http://a.test/docs/", "path:-amp"),
        ("http://a.test/docs/index.html", "http://a.test/docs/", "path:-index.html"),
        ("http://a.test/list/page/1/", "http://a.test/list/", "path:-page/1"),
        ("http://a.test/tableful/x/y.html", "http://a.test/x/y.html", "prefix:/tableful/->/"),
        ("http://a.test/a/print/y", "http://a.test/a/view/y", "path:print->view"),
    ],
)
def test_a_copy_and_its_original_teach_the_rule_that_maps_one_to_the_other(dropped, kept, rule):
    rules = learned(dropped, kept)
    assert rule in rules
    for each in rules:
        assert apply(each, dropped) == kept or each.startswith("query:")


def test_several_tracking_parameters_teach_one_rule_each_and_are_removed_together():
    dropped = "http://a.test/x/?utm_source=t&utm_medium=m"
    rules = learned(dropped, "http://a.test/x/")
    assert {"query:-utm_source", "query:-utm_medium"} <= set(rules)
    found = predictions("http://a.test/y/?utm_medium=n&utm_source=u", rules[:1] + rules[2:3])
    assert (("query:-utm_source", "query:-utm_medium"), "http://a.test/y/") in found


@pytest.mark.parametrize(
    ("dropped", "kept"),
    [
        ("http://a.test/x/", "http://b.test/x/"),  # another site
        ("http://a.test/x/", "http://a.test/x/"),
        ("http://a.test/x/?a=1", "http://a.test/x/?a=2"),  # a value changed, not removed
        ("http://a.test/x/y/z/w", "http://a.test/q/"),
        ("https://a.test/x/", "http://a.test/x/"),
    ],
)
def test_urls_no_rule_explains_teach_nothing(dropped, kept):
    assert learned(dropped, kept) == []


def test_a_rule_keyed_by_value_does_not_remove_another_value():
    assert apply("query:-page=1", "http://a.test/l?page=2") is None
    assert apply("query:-page", "http://a.test/l?page=2") == "http://a.test/l"
    assert apply("path:-page/1", "http://a.test/l/page/2/") is None
    assert apply("path:-amp", "http://a.test/l/") is None


def test_candidates_remove_each_parameter_and_each_run_of_segments():
    found = dict(candidates("http://a.test/list/page/2/?sort=asc"))
    assert found["query:-sort"] == "http://a.test/list/page/2/"
    assert found["path:-page/2"] == "http://a.test/list/?sort=asc"
    assert all(len(rule.split("/")) <= MAX_RUN for rule in found if rule.startswith("path:"))


def test_a_rule_is_confirmed_by_enough_copies_and_retired_by_one_distinct_page():
    assert not confirmed(Evidence(observations=2), 3)
    assert confirmed(Evidence(observations=3), 3)
    assert not confirmed(Evidence(observations=300, distinct=1), 3)


def test_the_site_is_the_host_and_port():
    assert site("http://Docs.Test:8080/a?b=1") == "docs.test:8080"


def test_a_copy_with_two_variants_at_once_teaches_each():
    assert learned("http://a.test/print/p/1.html", "http://a.test/p/1.html?ref=x") == [
        "path:-print",
        "prefix:/print/->/",
    ]
    assert "query:-ref" in learned("http://a.test/p/1.html?ref=x", "http://a.test/print/p/1.html")
    assert "path:-amp" in learned(
        "http://a.test/amp/p/1.html?utm_source=x", "http://a.test/p/1.html"
    )
    # Queries that each have a parameter the other lacks: no path rule is taught.
    assert learned("http://a.test/print/p/1.html?a=1", "http://a.test/p/1.html?b=2") == []
