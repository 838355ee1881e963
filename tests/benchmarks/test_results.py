"""benchmarks/results.py: a run's figures written as JSON, stamped with the commit they were
measured on (asked of git itself), whether the code had changes not committed, the command
and the machine (loaded from its file: ``benchmarks`` is no installed package)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results.py"


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"results_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def git(where: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(where), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture
def checkout() -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    try:
        git(ROOT, "rev-parse", "HEAD")
    except subprocess.CalledProcessError:
        pytest.skip(f"{ROOT} is no git checkout")
    return ROOT


def test_written_results_carry_the_commit_of_the_checkout(checkout, tmp_path, monkeypatch):
    results = load(RESULTS)
    monkeypatch.setattr(sys, "argv", [str(checkout / "benchmarks" / "quality.py")])
    path = results.write_results("quality", {"recall": 0.9}, argv=["--quick"], folder=tmp_path)
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["commit"] == git(checkout, "rev-parse", "HEAD")
    assert isinstance(written["dirty"], bool)
    assert path.name == f"quality-{written['date'][:10]}.json"
    assert written["command"] == "python benchmarks/quality.py --quick"
    assert written["machine"]["cpus"] == os.cpu_count()
    assert written["recall"] == 0.9
    monkeypatch.setattr(sys, "argv", [str(checkout / "benchmarks" / "lossless" / "__main__.py")])
    assert results.stamp(["--limit", "5"])["command"] == "python -m benchmarks.lossless --limit 5"


def test_the_tables_of_a_results_file_print_as_markdown(tmp_path, capsys):
    results = load(RESULTS)
    tables = results.Tables()
    assert tables.table("(a) recall", ["edit", "ours"], [["cut", "90.0%"]]) == (
        "| edit | ours |\n|---|---:|\n| cut | 90.0% |"
    )
    path = results.write_results("quality", {"tables": tables.kept}, argv=[], folder=tmp_path)
    capsys.readouterr()
    assert results.main([str(path)]) == 0
    printed = capsys.readouterr().out
    assert printed.endswith("(a) recall:\n\n| edit | ours |\n|---|---:|\n| cut | 90.0% |\n")


def test_changed_code_marks_the_results_and_results_do_not(checkout, tmp_path, monkeypatch):
    # A project of its own, so that its tree can be changed: the package, and results.py.
    project = tmp_path / "project"
    (project / "scrapy_simhash").mkdir(parents=True)
    (project / "benchmarks").mkdir()
    shutil.copy(RESULTS, project / "benchmarks" / "results.py")
    (project / "scrapy_simhash" / "rule.py").write_text("DISTANCE = 3\n", encoding="utf-8")
    git(project, "init", "-q")
    git(project, "add", ".")
    identity = ["-c", "user.name=Bench", "-c", "user.email=bench@example.org"]
    git(project, *identity, "commit", "-qm", "first")
    results = load(project / "benchmarks" / "results.py")
    monkeypatch.setattr(sys, "argv", [str(project / "benchmarks" / "speed.py")])

    first = results.write_results("speed", {}, argv=[])
    assert first.parent == project / "benchmarks" / "results"
    assert json.loads(first.read_text(encoding="utf-8"))["commit"] == git(
        project, "rev-parse", "HEAD"
    )
    assert results.stamp([])["dirty"] is False  # its own results file is no change
    (project / "scrapy_simhash" / "rule.py").write_text("DISTANCE = 4\n", encoding="utf-8")
    assert results.stamp([])["dirty"] is True


def test_a_figure_with_the_name_of_a_stamp_field_is_refused(tmp_path):
    results = load(RESULTS)
    with pytest.raises(ValueError, match="commit"):
        results.write_results("quality", {"commit": "mine"}, argv=[], folder=tmp_path)
    assert not list(tmp_path.iterdir())
