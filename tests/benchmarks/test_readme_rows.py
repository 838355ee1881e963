"""benchmarks/README.md lists every benchmark: each module and folder of benchmarks/ has its
row, and each row names a module or folder that is there."""

from __future__ import annotations

import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
#: A table row of the README: its first cell names a module (`name.py`) or a folder (`name/`).
_ROW = re.compile(r"^\| `([\w.]+\.py|\w+/)` \|", re.MULTILINE)


def listed() -> set[str]:
    return set(_ROW.findall((BENCHMARKS / "README.md").read_text(encoding="utf-8")))


def present() -> set[str]:
    modules = {path.name for path in BENCHMARKS.glob("*.py")}
    folders = {
        f"{path.name}/"
        for path in BENCHMARKS.iterdir()
        if path.is_dir() and (path / "__init__.py").exists()
    }
    return modules | folders


def test_every_benchmark_has_a_row_in_the_readme():
    missing = sorted(present() - listed())
    assert not missing, f"benchmarks/README.md has no row for {', '.join(missing)}"


def test_every_row_of_the_readme_names_a_benchmark_that_is_there():
    gone = sorted(listed() - present())
    assert not gone, f"benchmarks/README.md has rows for {', '.join(gone)}, not in benchmarks/"


def test_a_row_is_found_by_its_first_cell_only():
    text = "| `quality.py` | a question | `python benchmarks/speed.py` |\n| `thorough/` | q |\n"
    assert set(_ROW.findall(text)) == {"quality.py", "thorough/"}
