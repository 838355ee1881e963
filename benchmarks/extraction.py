"""How well does each main-content extractor keep the article and drop the rest?

    python benchmarks/extraction.py                    # every extractor installed
    python benchmarks/extraction.py builtin trafilatura
    python benchmarks/extraction.py --limit 200        # the first 200 pages only
    python benchmarks/extraction.py --lost             # and the pages each one lost

Data: ``../shared/corpora/web-extraction`` (923 real pages of many sites; 884 have
labels). Each page has snippets of its main text (``with``) and of its boilerplate
(``without``). A kept ``with`` snippet is a hit, a dropped one a miss; a kept ``without``
snippet is a false positive. "Lost" counts pages where not one ``with`` snippet survived:
a page the filter would fingerprint by its chrome. Snippets and texts are compared with
whitespace collapsed.

Every extractor sees the same decoded HTML; time is the CPU time of the extractor call
(one core), in ms per page, measured in the same run as its peers (compare ratios; the
absolute figures depend on the machine and on what else it runs).

Peers that are not installed are skipped with a note: ``pip install trafilatura
resiliparse readability-lxml justext``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpora" / "web-extraction"
_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([\w-]+)""", re.IGNORECASE)


def decode(raw: bytes) -> str:
    """The page as text: UTF-8 if it decodes, else the charset its <meta> declares, else
    cp1252 (as a browser would guess; a few pages of the set declare the wrong charset)."""
    match = _CHARSET.search(raw[:4096])
    for encoding in ["utf-8"] + ([match.group(1).decode("ascii")] if match else []):
        try:
            return raw.decode(encoding)
        except (LookupError, UnicodeDecodeError):
            pass
    return raw.decode("cp1252", errors="replace")


def load_pages(corpus: Path = CORPUS) -> list[tuple[str, dict]]:
    """(html, labels) for each labelled page whose file is in the archive."""
    expected = json.loads((corpus / "expected.json").read_text(encoding="utf-8"))
    by_file = {entry["file"]: entry for entry in expected.values() if entry.get("file")}
    pages = []
    with tarfile.open(corpus / "pages.tar.xz") as archive:
        for member in archive:
            name = member.name.rsplit("/", 1)[-1]
            if member.isfile() and name in by_file:
                raw = archive.extractfile(member).read()
                pages.append((decode(raw), by_file[name]))
    pages.sort(key=lambda page: page[1]["file"])
    return pages


def _squash(text: str) -> str:
    return " ".join(text.split())


def peers() -> dict[str, Callable[[], Callable[[str], str]]]:
    """Name -> a factory of an extractor; a factory raises ImportError when missing."""
    from scrapy_simhash.extract.extractors import get_extractor

    def resiliparse():
        from resiliparse.extract.html2text import extract_plain_text

        return lambda html: extract_plain_text(html, main_content=True)

    def readability():
        from lxml.html import fromstring
        from readability import Document

        def extract(html: str) -> str:
            summary = Document(html).summary(html_partial=True)
            return fromstring(summary).text_content() if summary.strip() else ""

        return extract

    def justext_():
        import justext

        stoplists = {}

        def extract(html: str) -> str:
            # jusText needs the page's language; the set is mostly German and English.
            best = ""
            for language in ("German", "English"):
                if language not in stoplists:
                    stoplists[language] = justext.get_stoplist(language)
                paragraphs = justext.justext(html.encode("utf-8"), stoplists[language])
                text = "\n".join(p.text for p in paragraphs if not p.is_boilerplate)
                best = max(best, text, key=len)
            return best

        return extract

    return {
        "builtin": lambda: get_extractor("builtin", body=False),
        "none": lambda: get_extractor("none"),
        "trafilatura": lambda: get_extractor("trafilatura"),
        "resiliparse": resiliparse,
        "readability-lxml": readability,
        "justext": justext_,
    }


def evaluate(extract: Callable[[str], str], pages: list[tuple[str, dict]]) -> dict:
    hits = misses = false_positives = 0
    lost: list[str] = []
    seconds = 0.0
    for html, labels in pages:
        start = time.process_time()
        text = extract(html) or ""
        seconds += time.process_time() - start
        text = _squash(text)
        kept = [_squash(snippet) in text for snippet in labels.get("with", [])]
        hits += sum(kept)
        misses += len(kept) - sum(kept)
        false_positives += sum(_squash(s) in text for s in labels.get("without", []))
        if kept and not any(kept):
            lost.append(labels["file"])
    precision = hits / max(1, hits + false_positives)
    recall = hits / max(1, hits + misses)
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / max(1e-9, precision + recall),
        "lost": lost,
        "ms": 1000 * seconds / max(1, len(pages)),
    }


def main(argv: list[str] | None = None) -> int:
    known = peers()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extractors", nargs="*", help=f"of {', '.join(known)} (default: all)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N pages")
    parser.add_argument(
        "--lost", action="store_true", help="then list the pages each extractor lost"
    )
    args = parser.parse_args(argv)
    if not (CORPUS / "expected.json").exists():
        print(f"{CORPUS} is missing: this benchmark needs shared/corpora/web-extraction")
        return 1
    pages = load_pages()
    if args.limit:
        pages = pages[: args.limit]
    print(f"{len(pages)} labelled pages of {CORPUS}\n")
    print("| extractor | precision | recall | F1 | pages lost | ms/page |")
    print("|---|---:|---:|---:|---:|---:|")
    lost: dict[str, list[str]] = {}
    for name in args.extractors or known:
        try:
            extract = known[name]()
        except (ImportError, Exception) as e:  # a missing peer is a note, not a failure
            print(f"| {name} | not available: {e} | | | | |")
            continue
        r = evaluate(extract, pages)
        print(
            f"| {name} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} "
            f"| {len(r['lost'])} | {r['ms']:.1f} |",
            flush=True,
        )
        lost[name] = r["lost"]
    if args.lost and lost:
        every = set.intersection(*map(set, lost.values()))
        print("\nPages lost (* by every extractor above):")
        for name, files in lost.items():
            print(f"- {name}: " + ", ".join(f + " *" * (f in every) for f in files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
