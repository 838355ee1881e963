"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]
CORPORA = PROJECT_ROOT.parent / "shared" / "corpora"


@pytest.fixture(autouse=True, scope="session")
def _private_jieba_cache(tmp_path_factory):
    # Keep jieba's dictionary cache out of the user's home during tests.
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))


@pytest.fixture
def corpora() -> Path:
    """The shared real-text corpora; tests using it skip when it is absent."""
    if not CORPORA.is_dir():
        pytest.skip(f"needs the shared corpora at {CORPORA} (not part of a user's checkout)")
    return CORPORA
