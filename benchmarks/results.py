"""A benchmark run's figures as JSON, stamped with what they were measured on.

    from results import write_results            # a flat module, run as a script
    from benchmarks.results import stamp         # a folder, run with python -m

    write_results("quality", figures, argv=argv)  # -> benchmarks/results/quality-DATE.json

The stamp says which code ran (the commit, and whether the package or the benchmarks had
changes not committed: figures of a changed tree are no commit's), when (UTC), how (the
command line) and where (CPU count, Python, platform): a figure in a doc can then be
traced to its run, and two runs compared only when their stamps allow it. The results
folders themselves are left out of the "changed" test, so that one run does not mark the
next one changed.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: Where a flat module's results go; a folder's go to its own ``results/``.
RESULTS = Path(__file__).resolve().parent / "results"
#: What a change in makes figures no commit's; results are figures, not code.
_CODE = ("scrapy_simhash", "csrc", "benchmarks")
_NOT_CODE = (":(exclude,glob)benchmarks/**/results/**", ":(exclude)benchmarks/results")


def git(*args: str) -> str | None:
    """The output of ``git *args`` in the project's root, or None where git cannot say
    (no git, or a copy of the project outside a checkout)."""
    try:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _shown(path: Path) -> str:
    """*path* from the project's root where it is inside it."""
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def stamp(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """What a run's figures were measured on. *argv* is the arguments the benchmark parsed
    (None: ``sys.argv[1:]``, as argparse takes it). ``commit`` and ``dirty`` are None
    outside a git checkout."""
    status = git("status", "--porcelain", "--", *_CODE, *_NOT_CODE)
    program = Path(sys.argv[0]).resolve()
    if program.name == "__main__.py" and program.is_relative_to(ROOT):  # python -m benchmarks.NAME
        shown = ["python", "-m", ".".join(program.parent.relative_to(ROOT).parts)]
    else:
        shown = ["python", _shown(program)]
    args = list(sys.argv[1:] if argv is None else argv)
    return {
        "commit": git("rev-parse", "HEAD"),
        "dirty": None if status is None else bool(status),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join([*shown, *args]),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
    }


def _plain(value: object) -> object:
    """JSON for the values figures hold that json does not write: sets (sorted), paths."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"a figure of type {type(value).__name__} has no JSON form: {value!r}")


def dump(data: object) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, default=_plain) + "\n"


def write_results(
    name: str,
    data: dict[str, Any],
    *,
    argv: Sequence[str] | None,
    folder: Path = RESULTS,
) -> Path:
    """Write *data* stamped (see :func:`stamp`) to ``folder/NAME-DATE.json`` (a second run
    the same day replaces the first, and says so), print where, and return the path."""
    stamped = stamp(argv)
    clash = sorted(stamped.keys() & data.keys())
    if clash:
        raise ValueError(f"figures named {', '.join(clash)} would hide the stamp's; rename them")
    path = folder / f"{name}-{stamped['date'][:10]}.json"
    folder.mkdir(parents=True, exist_ok=True)
    replaced = ""
    if path.exists():
        earlier = json.loads(path.read_text(encoding="utf-8")).get("command", "?")
        replaced = f"; it replaces the run of {earlier!r}"
    path.write_text(dump({**stamped, **data}), encoding="utf-8")
    changed = " (with changes not committed)" if stamped["dirty"] else ""
    commit = stamped["commit"][:12] if stamped["commit"] else "unknown (not a git checkout)"
    print(f"\nwritten to {_shown(path)}, commit {commit}{changed}{replaced}")
    return path


def table(header: list[str], rows: list[list[object]]) -> str:
    """*rows* under *header* as a Markdown table, the first column left-aligned."""
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


class Tables:
    """The tables a run prints, kept to be written with its results: the figures as the
    docs show them, each under the title of its section."""

    def __init__(self) -> None:
        self.kept: list[dict[str, Any]] = []

    def table(self, title: str, header: list[str], rows: list[list[object]]) -> str:
        """:func:`table` of *rows*, kept under *title*."""
        self.kept.append({"title": title, "header": list(header), "rows": [list(r) for r in rows]})
        return table(header, rows)


def main(argv: list[str] | None = None) -> int:
    """Print the tables a results file holds as Markdown, each under its title, after the
    line that says where they come from: what a doc's table is made from."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__.split(":")[0])
    parser.add_argument("path", type=Path, help="a results file (benchmarks/results/*.json)")
    args = parser.parse_args(argv)
    written = json.loads(args.path.read_text(encoding="utf-8"))
    tables = written.get("tables")
    if not tables:
        print(f"{args.path} holds no tables (its figures are under: {', '.join(written)})")
        return 1
    changed = ", with changes not committed" if written.get("dirty") else ""
    commit = (written.get("commit") or "unknown")[:12]
    print(f"`{written.get('command')}`, commit {commit}{changed}, {written.get('date')}")
    for kept in tables:
        print(f"\n{kept['title']}:\n\n{table(kept['header'], kept['rows'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
