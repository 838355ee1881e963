"""The arrows point down: the core imports no adapter, and the index and the block plan
know fingerprints only as 64-bit integers (the constants come from ``features``)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from scrapy_simhash import open_index

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_simhash"
CORE = ["extract", "analysis", "features.py", "index"]
#: Modules that know nothing of how a fingerprint is computed.
BELOW_FINGERPRINT = ["features.py", "index"]


def _modules(names: list[str]) -> list[Path]:
    found = []
    for name in names:
        path = PACKAGE / name
        found += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return found


def _imports(path: Path) -> set[str]:
    """The absolute names of the modules *path* imports (relative ones resolved)."""
    package = ["scrapy_simhash", *path.relative_to(PACKAGE).parent.parts]
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
    return names


@pytest.mark.parametrize("path", _modules(CORE), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_imports_no_adapter(path):
    imported = _imports(path)
    assert not {n for n in imported if n.split(".")[0] in ("scrapy", "click", "twisted")}


@pytest.mark.parametrize(
    "path", _modules(BELOW_FINGERPRINT), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_index_and_blocks_do_not_import_the_fingerprint(path):
    imported = _imports(path)
    assert not {n for n in imported if n.startswith("scrapy_simhash.analysis.fingerprint")}
    assert not {n for n in imported if n.split(".")[0] in ("numpy", "mmh3", "jieba")}


def test_a_crawl_on_an_existing_index_imports_neither_numpy_nor_sqlite_utils(tmp_path):
    # Every module a crawl's process imports stays alive, and every full garbage collection
    # of the crawl walks its objects: numpy and sqlite-utils (with click) are thousands.
    script = f"""
import sys
from scrapy_simhash import Fingerprinter, open_index
from scrapy_simhash.analysis.fingerprint import combine_compiled
from scrapy_simhash.crawl.pipeline import SimhashDedupPipeline
from scrapy_simhash.crawl.middleware import SimhashDedupMiddleware
uri = "sqlite:///{tmp_path / "index.db"}"
with open_index(uri, create=False) as index:
    index.check_and_add(Fingerprinter().fingerprint("some words of a page " * 10), "a")
print(sorted(m for m in ("numpy", "sqlite_utils", "click") if m in sys.modules))
print(combine_compiled is not None)
"""
    with open_index(f"sqlite:///{tmp_path / 'index.db'}"):
        pass  # created here: creating one needs sqlite-utils
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    imported, has_compiled = done.stdout.split("\n")[:2]
    expected = [] if has_compiled == "True" else ["numpy"]  # numpy: the pure-Python combine
    assert imported == str(expected)
