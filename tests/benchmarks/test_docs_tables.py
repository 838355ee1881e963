"""The tables of figures in docs/ say what the committed results say: a figure changed by
a new run is changed in the doc, or this fails."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path, name: str):
    # benchmarks/ is not a package a user's install brings: loaded from its file.
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


rows = _module(ROOT / "benchmarks" / "lossless" / "table.py", "lossless_table").rows
#: How docs/quality.md names each corpus of the lossless benchmark.
LABELS = {
    "doc-sites": "doc-sites",
    "Debian handbook": "debian-handbook",
    "web-extraction": "web-extraction",
    "generated sites": "synthetic",
}


def lossless_table(doc: str) -> dict[str, tuple[int, int, int]]:
    """``corpus -> (pages, drops, below 0.8)`` as the lossless table of *doc* gives them."""
    start = doc.index("| corpus (`python -m benchmarks.lossless`)")
    found = {}
    for line in doc[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        label, drops, below = (cell.strip() for cell in line.strip("|").split("|")[:3])
        corpus = next(c for prefix, c in LABELS.items() if label.startswith(prefix))
        pages = int(
            re.search(r"\(([^)]*?)([\d,]+)( pages[^)]*)?\)", label).group(2).replace(",", "")
        )
        found[corpus] = (pages, int(drops), int(below))
    return found


def test_the_lossless_table_of_the_docs_is_that_of_the_results():
    doc = (ROOT / "docs" / "quality.md").read_text(encoding="utf-8")
    assert lossless_table(doc) == rows()


def test_a_changed_figure_is_seen():
    doc = (ROOT / "docs" / "quality.md").read_text(encoding="utf-8")
    _, drops, below = rows()["debian-handbook"]
    changed = doc.replace(f"| {drops} | {below} |", f"| {drops + 1} | {below} |", 1)
    assert lossless_table(changed) != rows()


def test_the_site_templates_table_of_the_docs_is_that_of_the_results(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))  # reposts.py imports its siblings
    reposts = _module(ROOT / "benchmarks" / "reposts.py", "reposts_benchmark")
    doc = (ROOT / "docs" / "quality.md").read_text(encoding="utf-8")
    start = doc.index("| `python benchmarks/reposts.py builtin --anchors on [--templates]`")
    table = doc[start:].split("\n\n")[0].splitlines()[2:]
    assert table == reposts.table_rows()
    assert len(table) == 2
