"""The arrows point down: each layer imports only the layers below it, directly or through
other modules, lazy imports (inside functions) included, and no modules import each other
in a circle. The map of the layers is the one in docs/internals.md."""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from scrapy_simhash import open_index

PACKAGE = Path(__file__).resolve().parent.parent / "scrapy_simhash"

#: Layer -> the layers right below it. Every module of the package belongs to one layer: its
#: folder, or its own name for a module in the root. A layer may import the layers below it
#: and theirs, down to the bottom (see :data:`MAY_IMPORT`), and its own modules.
BELOW: dict[str, set[str]] = {
    "exceptions": set(),
    "features": set(),  # the fingerprint's width and feature signature, as plain values
    "durations": {"exceptions"},  # its errors are ConfigurationErrors
    "_speedups": set(),  # the compiled accelerator
    "anchors": set(),  # paragraph anchors and the containment rule, as plain values
    "sketch": set(),  # text sketches and the share of one text another holds
    "url_rules": set(),  # the URL transformations that lead from a copy to its original
    "template": set(),  # a site's template: the blocks its pages repeat, as plain values
    "analysis": {"exceptions", "features", "_speedups", "anchors", "sketch", "template"},
    "index": {"exceptions", "features", "durations", "anchors", "sketch", "url_rules", "template"},
    "extract": {"analysis"},
    "dedup": {"extract", "index"},
    "setting_values": {"exceptions"},  # one setting's value read as its type
    "settings": {"dedup", "setting_values"},
    "tools": {"dedup"},
    "crawl": {"settings"},
    "cli": {"settings", "tools"},
    # The package's face: what users import, and `python -m scrapy_simhash`.
    "__init__": {"crawl", "tools"},
    "__main__": {"cli"},
}


def _closure(name: str) -> set[str]:
    found = set(BELOW[name])
    for below in BELOW[name]:
        found |= _closure(below)
    return found


MAY_IMPORT = {name: _closure(name) for name in BELOW}
#: Third-party packages -> the only layers that may reach them, even through other modules:
#: the core runs without Scrapy or click (scripts, the CLI, worker processes).
FORBIDDEN = {
    "scrapy": {"crawl", "cli", "__init__", "__main__"},  # the CLI reads a project's settings.py
    "twisted": {"crawl", "__init__", "__main__"},
    "click": {"cli", "__main__"},
}
#: Heavy imports that nothing below the fingerprint needs.
BELOW_FINGERPRINT = ("features", "index")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(["scrapy_simhash", *parts])


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
MODULES["scrapy_simhash._speedups"] = PACKAGE / "_speedups.pyi"  # compiled; no imports


def layer(module: str) -> str:
    return module.split(".")[1]


def _resolve(name: str) -> str | None:
    """The package module *name* is, or is in (``a.b.C`` -> ``a.b``); None if outside."""
    while name.startswith("scrapy_simhash"):
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


@cache
def direct_imports(module: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the package modules, the top-level third-party names) *module* imports anywhere in
    its source, inside functions and ``if TYPE_CHECKING:`` included."""
    path = MODULES[module]
    if path.suffix == ".pyi":
        return frozenset(), frozenset()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    ours, theirs = set(), set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                prefix = ".".join([*base, *([node.module] if node.module else [])])
            else:
                prefix = node.module or ""
            # `from . import words` imports a module; `from .text import parse` a name.
            names = [prefix] + [f"{prefix}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            if name.startswith("scrapy_simhash"):
                found = _resolve(name)
                if found is not None and found != module:
                    ours.add(found)
            else:
                theirs.add(name.split(".")[0])
    # `from .. import x` resolves to the package itself as well as to x: only the package's
    # face imports the face.
    if layer(module) not in ("__init__", "__main__") and "scrapy_simhash" in ours:
        own_names = {n for n in ours if n != "scrapy_simhash"}
        ours = own_names if own_names else ours
    return frozenset(ours), frozenset(theirs)


@cache
def reachable(module: str) -> dict[str, tuple[str, ...]]:
    """Every package module *module* reaches by imports -> the path of imports to it."""
    paths: dict[str, tuple[str, ...]] = {}
    todo = [(module, (module,))]
    while todo:
        current, path = todo.pop()
        for imported in sorted(direct_imports(current)[0]):
            if imported not in paths and imported != module:
                paths[imported] = (*path, imported)
                todo.append((imported, paths[imported]))
    return paths


def test_every_module_has_a_layer():
    assert {layer(m) for m in MODULES if m != "scrapy_simhash"} <= set(MAY_IMPORT)


def upward(module: str) -> list[str]:
    """The chains of imports by which *module* reaches a layer it may not import."""
    allowed = MAY_IMPORT[layer(module)] | {layer(module)}
    return [
        " -> ".join(path)
        for target, path in reachable(module).items()
        if target == "scrapy_simhash" or layer(target) not in allowed
    ]


def cycles() -> list[str]:
    """Each import of a module that leads back to it, as the circle it closes."""
    return sorted(
        " -> ".join((m, *reachable(d)[m]))
        for m in MODULES
        for d in direct_imports(m)[0]
        if d != "scrapy_simhash" and m in reachable(d)
    )


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "scrapy_simhash"))
def test_imports_point_down(module):
    wrong = upward(module)
    assert not wrong, f"{layer(module)} may import {sorted(MAY_IMPORT[layer(module)])}:\n" + (
        "\n".join(wrong)
    )


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m != "scrapy_simhash"))
def test_the_core_reaches_neither_scrapy_nor_click(module):
    own = layer(module)
    allowed = {name for name, layers in FORBIDDEN.items() if own in layers}
    for target in [module, *reachable(module)]:
        wrong = (direct_imports(target)[1] & set(FORBIDDEN)) - allowed
        via = " -> ".join(reachable(module).get(target, (module,)))
        assert not wrong, f"{module} reaches {sorted(wrong)} through {via}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer(m) in BELOW_FINGERPRINT))
def test_the_index_does_not_reach_the_fingerprint(module):
    for target in [module, *reachable(module)]:
        assert layer(target) not in ("analysis", "extract"), target
        heavy = direct_imports(target)[1] & {"numpy", "mmh3", "jieba", "lxml"}
        assert not heavy, f"{target} imports {sorted(heavy)}"


def test_no_import_cycles():
    # A module that reaches itself: Python imports half of it first, and the order of
    # imports decides which names exist.
    assert not cycles(), "\n".join(cycles())


@pytest.fixture
def fake_modules(tmp_path, monkeypatch):
    """Adds modules (name -> source) to the package as the checks see it."""

    def add(**sources: str) -> None:
        for name, source in sources.items():
            path = tmp_path / f"{name.replace('.', '_')}.py"
            path.write_text(source, encoding="utf-8")
            monkeypatch.setitem(MODULES, f"scrapy_simhash.{name}", path)
        direct_imports.cache_clear()
        reachable.cache_clear()

    yield add
    direct_imports.cache_clear()
    reachable.cache_clear()


def test_the_checks_see_a_lazy_import_that_reaches_up_through_another_module(fake_modules):
    fake_modules(
        **{
            "index.fake": "def f():\n    from ..analysis import middle\n",
            "analysis.middle": "from ..crawl.pipeline import SimhashDedupPipeline\n",
        }
    )
    wrong = upward("scrapy_simhash.index.fake")
    assert "scrapy_simhash.index.fake -> scrapy_simhash.analysis.middle" in wrong
    assert (
        "scrapy_simhash.index.fake -> scrapy_simhash.analysis.middle"
        " -> scrapy_simhash.crawl.pipeline"
    ) in wrong


def test_the_checks_see_a_cycle_closed_by_a_lazy_import(fake_modules):
    fake_modules(
        **{
            "extract.one": "from .two import x\n",
            "extract.two": "def x():\n    from . import one\n",
        }
    )
    assert (
        "scrapy_simhash.extract.one -> scrapy_simhash.extract.two -> scrapy_simhash.extract.one"
        in cycles()
    )


@pytest.mark.slow
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


def test_importing_the_index_layer_imports_no_other_layer():
    # The package imports its public names on first use: a script (or a worker process)
    # that needs one layer does not pay for the others.
    script = (
        "import sys, scrapy_simhash.index.blocks, scrapy_simhash.index.sqlite\n"
        "print(sorted(m.split('.')[1] for m in sys.modules\n"
        "      if m.startswith('scrapy_simhash.') and m.count('.') >= 1))\n"
        "print(sorted(m for m in ('lxml', 'mmh3', 'jieba', 'scrapy') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    layers, heavy = done.stdout.splitlines()
    assert set(ast.literal_eval(layers)) <= {
        "index",
        "exceptions",
        "features",
        "durations",
        "anchors",
        "sketch",
        "url_rules",
    }
    assert heavy == "[]"
