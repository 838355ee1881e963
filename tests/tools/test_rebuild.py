"""rebuild: a new index for another threshold, from the stored fingerprints alone."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from click.testing import CliRunner

from scrapy_simhash import open_index
from scrapy_simhash.cli import main
from scrapy_simhash.exceptions import ConfigurationError, IndexParameterMismatch
from scrapy_simhash.tools.rebuild import rebuild_index

FIVE_BITS = 0b11111  # a fingerprint this far from another is beyond k=3, within k=5


@pytest.fixture
def built(tmp_path):
    """An index built for k=3: 300 random pages, one exact text, and a page whose
    neighbour at distance 5 it cannot find."""
    uri = str(tmp_path / "k3.db")
    rng = random.Random(5)
    with open_index(uri) as index:
        for i in range(300):
            assert index.check_and_add(rng.getrandbits(64), f"page{i}").match is None
        index.check_and_add_exact(1234, "short")
        index.check_and_add(0xF0F0_F0F0_F0F0_F0F0, "original")
    return uri


def test_the_new_index_finds_what_the_old_could_not(built, tmp_path):
    target = str(tmp_path / "k5.db")
    seen = []
    result = rebuild_index(built, target, max_distance=5, progress=seen.append)
    assert (result.copied, result.pages) == (302, 302)
    assert seen == [302]  # every 1,000 pages, and once at the end
    assert (result.parameters.max_distance, result.parameters.blocks) == (5, 7)
    copy = 0xF0F0_F0F0_F0F0_F0F0 ^ FIVE_BITS
    with open_index(built) as old:
        assert old.query(copy) == []
        features = old.parameters.features
        before = sorted((p.key, p.fingerprint, p.added_at, p.exact) for p in old.pages())
    with open_index(target) as new:
        [match] = new.query(copy)
        assert (match.key, match.distance) == ("original", 5)
        assert new.parameters.features == features
        assert sorted((p.key, p.fingerprint, p.added_at, p.exact) for p in new.pages()) == before
        assert new.check_and_add_exact(1234, "again").match.key == "short"


def test_an_interrupted_rebuild_is_completed_by_running_it_again(built, tmp_path):
    target = str(tmp_path / "k5.db")
    with (
        open_index(built) as old,
        open_index(target, max_distance=5, features=old.parameters.features) as partial,
    ):
        partial.add_pages(itertools.islice(old.pages(), 100))
    result = rebuild_index(built, target, max_distance=5)
    assert (result.copied, result.pages) == (202, 302)


def test_refuses_to_overwrite(built, tmp_path):
    with pytest.raises(ConfigurationError, match="another URI"):
        rebuild_index(built, built, max_distance=5)
    other = str(tmp_path / "other.db")
    with open_index(other, max_distance=4):
        pass
    with pytest.raises(IndexParameterMismatch, match="index has 4, requested 5"):
        rebuild_index(built, other, max_distance=5)


def test_command(built, tmp_path):
    target = str(tmp_path / "k6.db")
    runner = CliRunner()
    result = runner.invoke(
        main, ["rebuild", "--index", built, "--max-distance", "6", "--into", target]
    )
    assert result.exit_code == 0, result.output
    assert f"SIMHASH_INDEX_URI = {target!r}" in result.output
    assert "SIMHASH_MAX_DISTANCE = 6" in result.output
    out = runner.invoke(main, ["stats", "--index", target, "--json"])
    assert out.exit_code == 0, out.output
    stats = json.loads(out.output)
    assert stats["pages"] == 302
    bad = runner.invoke(
        main, ["rebuild", "--index", built, "--max-distance", "40", "--into", target]
    )
    assert bad.exit_code == 2 and "40" in bad.output


def test_a_smaller_distance_is_answered_without_rebuild(built):
    near = 0xF0F0_F0F0_F0F0_F0F0 ^ 0b11  # two bits from "original"
    with open_index(built, max_distance=1) as index:
        assert (index.max_distance, index.parameters.max_distance) == (1, 3)
        assert index.check_and_add(near, "copy").status == "new"
        assert [m.key for m in index.query(near)] == ["copy"]  # "original" is 2 away
    with open_index(built) as index:
        assert index.max_distance == 3
        assert index.check_and_add(near ^ 0b100, "copy2").match.key == "copy"


def test_a_larger_distance_says_how_to_rebuild(built):
    with pytest.raises(
        IndexParameterMismatch, match=r"scrapy-simhash rebuild --index .* --max-distance 5"
    ):
        open_index(built, max_distance=5)
