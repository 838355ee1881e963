"""No module over 400 lines and no function over 60 (#42): past that, a module holds more
than one concept and a function more than one step. The ones still over are listed by
name, so that a new one is a decision, not an accident."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_simhash"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

#: Modules still over the limit (relative to the package): none since #42's splits.
LONG_MODULES: set[str] = set()
#: Functions still over the limit, as ``module:Class.function``.
LONG_FUNCTIONS: set[str] = set()


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def long_modules(paths: list[Path], root: Path = PACKAGE) -> dict[str, int]:
    """The modules of *paths* over the limit (named from *root*) -> their lines."""
    found = {}
    for path in paths:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_MODULE_LINES:
            found[path.relative_to(root).as_posix()] = lines
    return found


def long_functions(paths: list[Path], root: Path = PACKAGE) -> dict[str, int]:
    """The functions and methods of *paths* over the limit (named from *root*) -> their
    lines (decorators not counted)."""
    found = {}

    def visit(node: ast.AST, module: str, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = (*scope, child.name)
                if not isinstance(child, ast.ClassDef):
                    lines = child.end_lineno - child.lineno + 1
                    if lines > MAX_FUNCTION_LINES:
                        found[f"{module}:{'.'.join(inner)}"] = lines
                visit(child, module, inner)
            else:
                visit(child, module, scope)

    for path in paths:
        visit(ast.parse(path.read_text(encoding="utf-8")), path.relative_to(root).as_posix(), ())
    return found


def test_no_module_over_the_limit():
    new = {name: n for name, n in long_modules(_modules()).items() if name not in LONG_MODULES}
    assert not new, f"over {MAX_MODULE_LINES} lines; split by concept: {new}"


def test_no_function_over_the_limit():
    new = {name: n for name, n in long_functions(_modules()).items() if name not in LONG_FUNCTIONS}
    assert not new, f"over {MAX_FUNCTION_LINES} lines; split into steps: {new}"


def test_the_functions_listed_are_still_over_the_limit():
    """A function brought under the limit leaves the list, so that it cannot grow back
    unnoticed."""
    stale = LONG_FUNCTIONS - set(long_functions(_modules()))
    assert not stale, (
        f"no longer over {MAX_FUNCTION_LINES} lines; remove from LONG_FUNCTIONS: {stale}"
    )


@pytest.mark.parametrize("lines, over", [(400, False), (401, True)])
def test_a_module_is_over_past_400_lines(tmp_path, lines, over):
    path = tmp_path / "m.py"
    path.write_text("x = 1\n" * lines, encoding="utf-8")
    assert bool(long_modules([path], tmp_path)) is over


def test_a_method_is_named_with_its_class(tmp_path):
    body = "\n".join(f"        x = {i}" for i in range(MAX_FUNCTION_LINES))
    path = tmp_path / "m.py"
    path.write_text(f"class A:\n    def f(self):\n{body}\n", encoding="utf-8")
    assert long_functions([path], tmp_path) == {"m.py:A.f": MAX_FUNCTION_LINES + 1}
