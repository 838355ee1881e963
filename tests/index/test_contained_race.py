"""Several processes checking contained copies at the same moments keep exactly one page
of each group, on the spread layout (a real Redis Cluster) and on SQLite; see
``tests/contained_race.py``."""

from __future__ import annotations

import uuid

import pytest
from contained_race import race


@pytest.fixture(
    params=[
        pytest.param("spread", marks=[pytest.mark.redis, pytest.mark.cluster]),
        "sqlite",
    ]
)  # fmt: skip
def uri(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'race.db'}"
    cluster = request.getfixturevalue("redis_cluster")
    return f"{cluster.url}&spread=true&prefix=race-{uuid.uuid4().hex[:8]}"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["contained", "near"])
def test_processes_checking_contained_copies_at_once_keep_exactly_one_per_group(uri, kind):
    # Before sightings, the spread layout kept two pages in most groups of contained
    # copies: the records of the attempts pending at once made the article's paragraphs
    # boilerplate, for good (and the later copies were kept too).
    result = race(uri, groups=12, workers=8, kind=kind)
    assert result.kept_twice == 0, result
    assert result.later_kept == 0, result
    assert result.statuses.get("new") == 12, result
