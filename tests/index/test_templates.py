"""Sites' templates: the pure rule (scrapy_simhash.template), one contract for the stores
of every backend, and the check that reads a page on its own text."""

from __future__ import annotations

import test_index_contract
from template_pages import article, reposted, sidebar, text

from scrapy_simhash import Fingerprinter
from scrapy_simhash.dedup import Deduplicator
from scrapy_simhash.index.templates import read_template, templates_for
from scrapy_simhash.template import LEARN_PAGES, Template, site_of, template_blocks

# Every backend's index, as the contract suite opens them.
backend = test_index_contract.backend
index = test_index_contract.index


# The rule, as plain values.


def test_a_template_is_stored_and_read_back_whole():
    template = Template()
    assert template.learned({1: 10, -2: 20}, page=7)
    assert template.learned({1: 10, 3: 5}, page=8)
    again = Template.unpack(template.pack())
    assert again == template == Template(2, {1: (7, 2), -2: (7, 1), 3: (8, 1)})
    assert Template.unpack(None) == Template()
    # Data it did not make is no template: learned again, never an error in a check.
    assert Template.unpack(template.pack()[:-3]) == Template()
    assert Template.unpack(b"\xff" * 11) == Template()


def test_learning_stops_after_the_first_pages_of_a_site():
    template = Template()
    for page in range(LEARN_PAGES):
        assert template.learned({page: 10}, page=page)
    assert not template.learned({999: 10}, page=999)
    assert 999 not in template.blocks and template.pages == LEARN_PAGES


def test_blocks_another_page_held_are_template_and_a_page_own_are_not():
    template = Template()
    template.learned({1: 100, 2: 100}, page=7)
    # Page 8 holds block 1 of page 7 and one of its own: block 1 is template.
    assert template_blocks(template, {1: 100, 3: 300}, page=8) == {1}
    # Page 7 checked again (a re-crawl): its blocks are its own.
    assert template_blocks(template, {1: 100, 2: 100}, page=7) == frozenset()


def test_a_page_that_holds_most_of_a_page_of_its_site_is_a_copy_not_a_template():
    template = Template()
    template.learned({1: 400, 2: 400}, page=7)
    # 800 of 900 characters seen on the site: two URLs of one article.
    assert template_blocks(template, {1: 400, 2: 400, 3: 100}, page=8) == frozenset()
    assert template_blocks(template, {1: 400, 3: 500}, page=8) == {1}


def test_the_site_of_a_key():
    assert site_of("https://Example.org:8080/a/b?x=1") == "example.org:8080"
    assert site_of("file:///srv/mirror/example.org/post.html") == "file:///srv/mirror/example.org/"
    assert site_of("item-17") is None
    assert site_of("file://post.html") is None


# The stores of every backend.


def test_a_store_keeps_each_site_apart_and_forgets(index):
    store = templates_for(index)
    assert store.read("a.test") is None and store.forget() == 0
    store.write("a.test", b"\x00\x01\xff")
    store.write("b.test", b"two")
    store.write("a.test", b"\x00\x02\xff")
    assert store.read("a.test") == b"\x00\x02\xff" and store.read("b.test") == b"two"
    assert store.forget("a.test") == 1
    assert store.read("a.test") is None
    assert store.forget() == 1 and store.read("b.test") is None


# The check.


def check_all(index, templates: bool, pages: list[tuple[str, str]]) -> list[str]:
    dedup = Deduplicator(index, Fingerprinter(), templates=templates)
    return [dedup.check(dedup.analyse(body), key).status for key, body in pages]


def test_an_article_reposted_into_another_sites_template_is_dropped(index):
    # Its own text (the article) is all in the original; with the host's sidebar, under
    # 0.8 of all its text is.
    assert check_all(index, True, reposted(2)) == ["new", "new", "duplicate"]
    template = read_template(templates_for(index), "two.test")
    assert template.pages == 2


def test_without_templates_the_repost_is_kept(index):
    assert check_all(index, False, reposted(2)) == ["new", "new", "new"]
    assert templates_for(index).read("two.test") is None


def test_pages_sharing_only_their_sites_template_are_kept(index):
    pages = [(f"https://two.test/{n}", text(article(n), sidebar(2))) for n in range(4)]
    assert check_all(index, True, pages) == ["new"] * 4


def test_two_urls_of_one_article_on_one_site_stay_copies(index):
    body = text(article(5), sidebar(2))
    pages = [("https://two.test/a", body), ("https://two.test/a?ref=feed", body)]
    assert check_all(index, True, pages) == ["new", "duplicate"]


def test_a_page_that_adds_its_own_text_to_a_repost_is_kept(index):
    pages = [
        *reposted(2)[:2],
        ("https://two.test/answer", text(article(1), article(7), sidebar(2))),
    ]
    assert check_all(index, True, pages) == ["new", "new", "new"]
