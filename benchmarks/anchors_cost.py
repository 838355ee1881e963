"""What the paragraph anchors and the sketch add to the analysis, in CPU time, on one core.

    python benchmarks/anchors_cost.py               # Chinese handbook pages (../shared/corpora)
    python benchmarks/anchors_cost.py --pages DIR   # your own .html/.txt files
    python benchmarks/anchors_cost.py --sketch      # with the sketch and without it




of the best and the median pass of each, and their ratio in documents per second. CPU
time of this process, not wall time: on a shared machine the other work's load moves the
wall clock, not this.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import speed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=Path, help="directory of .html/.txt files")
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--sketch", action="store_true", help="the sketch's cost instead")
    args = parser.parse_args(argv)
    texts = speed.load_texts(args.pages)
    segmenter = "rjieba" if speed.importlib.util.find_spec("rjieba") else "jieba"
    what = "sketch" if args.sketch else "anchors"
    methods = {
        f"with {what}": speed.ours(segmenter, True, True),
        "without": speed.ours(segmenter, args.sketch, not args.sketch),
    }
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(args.passes):
        for name, analyse in methods.items():
            start = time.process_time()
            for text in texts:
                analyse(text)
            times[name].append(time.process_time() - start)
    print(f"{len(texts)} documents, {segmenter}, {args.passes} passes each, CPU seconds a pass")
    for name, spent in times.items():
        print(f"  {name:<13} best {min(spent):.3f}  median {statistics.median(spent):.3f}")
    best = min(times["without"]) / min(times[f"with {what}"])
    median = statistics.median(times["without"]) / statistics.median(times[f"with {what}"])
    print(
        f"with {what}: {best:.2f}x the documents per second (best passes), {median:.2f}x (medians)"
    )


if __name__ == "__main__":
    main()
