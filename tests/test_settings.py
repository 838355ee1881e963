"""From settings to an open deduplicator: the one factory the crawl and the CLI share."""

from __future__ import annotations

import logging

import pytest

from scrapy_simhash import open_index
from scrapy_simhash.exceptions import IndexParameterMismatch
from scrapy_simhash.settings import SimhashSettings, index_uri


def test_the_configured_uri_wins_and_no_directory_is_made(tmp_path):
    def data_path(name):
        raise AssertionError("not asked for")

    assert index_uri("memory:", data_path, create=True) == "memory:"


@pytest.mark.parametrize("create", [True, False])
def test_the_default_is_simhash_db_in_the_data_directory(tmp_path, create):
    where = tmp_path / ".scrapy"
    uri = index_uri(None, lambda name: str(where / name), create=create)
    assert uri == f"sqlite:///{where / 'simhash.db'}"
    assert where.is_dir() is create
    assert not (where / "simhash.db").exists()


def test_open_deduplicator_creates_an_index_for_the_settings(tmp_path):
    config = SimhashSettings(max_distance=4, top_n=64)
    dedup = config.open_deduplicator(f"sqlite:///{tmp_path / 'a.db'}")
    with dedup.index as index:
        assert (index.max_distance, index.parameters.features) == (
            4,
            config.fingerprinter.signature,
        )
        assert dedup.fingerprinter is config.fingerprinter
        assert dedup.check_text("one two three " * 20, "a").match is None


def test_open_deduplicator_refuses_an_index_of_other_features(tmp_path):
    uri = f"sqlite:///{tmp_path / 'a.db'}"
    with open_index(uri):
        pass  # built for the default top_n, 128
    with pytest.raises(IndexParameterMismatch, match="top64"):
        SimhashSettings(top_n=64).open_deduplicator(uri, create=False)


def test_one_table_of_defaults():
    # SimhashSettings() takes its defaults from DEFAULTS, which from_settings reads too.
    assert SimhashSettings.from_settings({}) == SimhashSettings()
    assert SimhashSettings().drop_log_level == logging.INFO
    assert SimhashSettings().middleware_content_types == ("text/html", "application/xhtml+xml")
