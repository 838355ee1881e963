"""No two modules of benchmarks/ import each other, directly or through others, lazy imports
(inside functions) included: a module both need holds what they share."""

from __future__ import annotations

import ast
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def imports(folder: Path) -> dict[str, set[str]]:
    """Module -> the modules of *folder* it imports anywhere in its source. A flat module
    is named as a script imports it (``quality``), a folder's as ``lossless.run``."""
    modules = {}
    for path in folder.rglob("*.py"):
        name = ".".join(path.relative_to(folder).with_suffix("").parts)
        modules[name.removesuffix(".__init__")] = path
    found: dict[str, set[str]] = {}
    for name, path in modules.items():
        names = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.removeprefix("benchmarks.") for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = (node.module or "").removeprefix("benchmarks.")
                if node.level:
                    package = name.rsplit(".", node.level)[0] if "." in name else ""
                    base = ".".join(filter(None, [package, node.module]))
                names |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
        found[name] = {other for other in names if other in modules and other != name}
    return found


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each circle of *graph* once, as the path from its first module back to it."""
    found, done = [], set()

    def walk(module: str, path: list[str]) -> None:
        for other in sorted(graph[module]):
            if other in path:
                circle = path[path.index(other) :]
                if frozenset(circle) not in done:
                    done.add(frozenset(circle))
                    found.append([*circle, other])
            elif other not in seen:
                seen.add(other)
                walk(other, [*path, other])

    for start in sorted(graph):
        seen = {start}
        walk(start, [start])
    return found


def test_no_benchmark_modules_import_each_other():
    found = circles(imports(BENCHMARKS))
    assert not found, "import circles: " + "; ".join(" -> ".join(c) for c in found)


def test_a_lazy_import_back_is_a_circle(tmp_path):
    (tmp_path / "quality.py").write_text("def run():\n    import thresholds\n")
    (tmp_path / "thresholds.py").write_text("import quality as Q\n")
    (tmp_path / "speed.py").write_text("import quality\n")
    assert circles(imports(tmp_path)) == [["quality", "thresholds", "quality"]]
