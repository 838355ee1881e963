"""Where the built-in extractor's time goes, step by step, over the labelled pages.

    python benchmarks/extraction_steps.py            # main_text(html), as benchmarks/extraction.py
    python benchmarks/extraction_steps.py --body     # main_text(html, body=True), as a crawl
    PYTHONPATH=../other-checkout python benchmarks/extraction_steps.py   # another version

(``PYTHONPATH`` chooses the version only where scrapy-simhash is not installed in editable
mode, ``pip install -e``: an editable install's import hook comes first.)

Data: ``../shared/corpora/web-extraction`` (see benchmarks/extraction.py). Each step is a
function :func:`scrapy_simhash.extract.main_text.main_text` calls, timed by a wrapper (CPU time of
the process, one core); "rest" is what the steps leave of the total: removing chrome,
marking links, the fallbacks' checks. The pages are run once to warm caches, then the best
of ``--rounds`` rounds is printed. Compare steps of two versions measured one after the
other; the wrappers' own cost is in the figures.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time

from extraction import CORPUS, load_pages  # the script's directory is on the path

# Step names as main_text's module knows them.
STEPS = (
    "visible_tree",
    "text_length",
    "drop_teasers",
    "chrome_elements",
    "find_region",
    "block_text",
    "_good_lines",
    "body_of",
    "visible_text",
)


def _timed(function, label: str, spent: dict, within: list):
    """*function*, its CPU time added to ``spent[label]`` and taken out of the step that
    called it (parse_html runs inside visible_tree, and inside the page fallback's
    visible_text)."""

    @functools.wraps(function)
    def timed(*args, **kwargs):
        within.append(label)
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            seconds = time.process_time() - start
            within.pop()
            spent[label] = spent.get(label, 0.0) + seconds
            if within:
                spent[within[-1]] = spent.get(within[-1], 0.0) - seconds

    return timed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--body", action="store_true", help="main_text(html, body=True)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if not (CORPUS / "expected.json").exists():
        print(f"{CORPUS} is missing: this benchmark needs shared/corpora/web-extraction")
        return 1
    import scrapy_simhash.extract.main_text as module
    import scrapy_simhash.extract.text as text

    spent: dict = {}
    within: list = []
    text.parse_html = _timed(text.parse_html, "parse_html", spent, within)
    for name in STEPS:
        if hasattr(module, name):  # an older version may lack a step
            setattr(module, name, _timed(getattr(module, name), name, spent, within))
    pages = [html for html, _ in load_pages()]
    for html in pages:
        module.main_text(html, body=args.body)
    best = None
    for _ in range(args.rounds):
        spent.clear()
        start = time.process_time()
        for html in pages:
            module.main_text(html, body=args.body)
        total = time.process_time() - start
        if best is None or total < best[0]:
            best = (total, dict(spent))
    total, spent = best
    spent["rest"] = total - sum(spent.values())
    print(f"{module.__file__}: {len(pages)} pages, {1000 * total / len(pages):.2f} ms/page")
    print("| step | ms/page | share |")
    print("|---|---:|---:|")
    for name, seconds in spent.items():
        print(f"| {name} | {1000 * seconds / len(pages):.2f} | {seconds / total:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
