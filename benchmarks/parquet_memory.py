"""Peak memory of ``dedup`` over a Parquet file with one huge text cell (#43): a cell of
114 MB among 39 rows of 3 KB, written with pyarrow's defaults (snappy, dictionary: the
huge cell lands in the dictionary page), and the same rows with a small row repeated
at the end (one row dropped: the kept rows are written again, not copied). The peak is
``/usr/bin/time -v``'s maximum resident set size of the whole command, next to that of
the 39 small rows alone (what the interpreter and its imports take).

    python benchmarks/parquet_memory.py                       # this checkout
    python benchmarks/parquet_memory.py --against ../main     # and another, same run
    python benchmarks/parquet_memory.py --cell-mb 50 --runs 5
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The command line, run with the package of the checkout measured.
CLI = "from scrapy_simhash.cli import main; main()"


def text(rng: random.Random, words: list[str], chars: int) -> str:
    lines, size = [], 0
    while size < chars:
        line = " ".join(rng.choices(words, k=rng.randint(5, 40))) + ".\n"
        lines.append(line)
        size += len(line)
    return "".join(lines)


def build(folder: Path, cell_mb: int) -> dict[str, Path]:
    """The three inputs: ``small`` (39 rows), ``huge`` (the huge cell first), ``dropped``
    (``huge`` and a copy of its second row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = random.Random(1)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(5000)]
    # Paragraphs a megabyte apart repeat, farther than snappy looks: it hardly compresses.
    block = text(rng, words, 1 << 20)
    huge = (block * (cell_mb + 1))[: cell_mb * 1_000_000]
    small = [{"url": f"https://p.example/{n}", "text": text(rng, words, 3000)} for n in range(39)]
    rows = [{"url": "https://big.example/0", "text": huge}, *small]
    paths = {name: folder / f"{name}.parquet" for name in ("small", "huge", "dropped")}
    pq.write_table(pa.Table.from_pylist(small), paths["small"])
    pq.write_table(pa.Table.from_pylist(rows), paths["huge"])
    pq.write_table(pa.Table.from_pylist([*rows, small[0]]), paths["dropped"])
    return paths


def peak_mb(checkout: Path, path: Path) -> float:
    """The peak RSS of ``scrapy-simhash dedup`` of *path* with the package of *checkout*."""
    for stale in (path.with_suffix(".kept.parquet"), Path(f"{path}.decisions.csv")):
        stale.unlink(missing_ok=True)
    command = [
        "/usr/bin/time", "-v", sys.executable, "-c", CLI, "dedup", str(path),
        "--engine", "local", "--fields", "text", "--key", "url",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=path.parent)
    if done.returncode:
        raise SystemExit(f"dedup of {path.name} failed:\n{done.stderr[-2000:]}")
    found = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return int(found.group(1)) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout, measured in turn")
    parser.add_argument("--cell-mb", type=int, default=114)
    parser.add_argument("--runs", type=int, default=3, help="runs of each; the median shown")
    args = parser.parse_args()
    checkouts = [("this", ROOT)] + ([("against", args.against.resolve())] if args.against else [])
    with tempfile.TemporaryDirectory() as folder:
        paths = build(Path(folder), args.cell_mb)
        print(f"one cell of {args.cell_mb} MB; median of {args.runs} runs, peak RSS in MB")
        for label, checkout in checkouts:
            peaks = {}
            for name, path in paths.items():
                runs = [peak_mb(checkout, path) for _ in range(args.runs)]
                peaks[name] = statistics.median(runs)
            above = {n: peaks[n] - peaks["small"] for n in ("huge", "dropped")}
            print(
                f"  {label:8} ({checkout}): small {peaks['small']:.0f}; "
                + "; ".join(
                    f"{n} {peaks[n]:.0f} (+{above[n]:.0f}, {above[n] / args.cell_mb:.1f}x the cell)"
                    for n in above
                )
            )


if __name__ == "__main__":
    main()
