"""Documentation sites: does the filter drop distinct pages of one site? Measured through a
real Scrapy crawl with the pipeline at its default settings.

    python benchmarks/doc_sites.py                    # both sites, both item shapes
    python benchmarks/doc_sites.py --site python-3.11 --shape html
    python benchmarks/doc_sites.py --offline          # no crawl: to iterate quickly

Data: ``../shared/corpora/doc-sites`` (Python 3.11's and PostgreSQL 15's HTML
documentation, 530 and 1,169 pages). Nearly every page is a distinct page sharing its
site's template, notes, code samples and licence footer with its siblings: the trap of a
filter that fingerprints a fragment a page shares with its siblings instead of the page's
own content.

Each site is crawled twice, each time into a new SQLite index, with ``scrapy runspider``
over ``file://`` pages in a child process, pages requested in the order of their paths:

* ``html``: items ``{"url", "html"}`` (the page's HTML), ``SIMHASH_TEXT_FIELDS="html"``;
* ``fields``: items ``{"url", "title", "content"}`` (the page's headline: its ``h1``, else
  its ``<title>``; and the page's HTML), ``SIMHASH_TEXT_FIELDS`` at its default
  (``["title", "content"]``), as a spider written for the site would yield them.

Ground truth, from the text itself: a drop is true when the two pages' visible texts
outside the site's header, sidebar and footer (Python: the ``role="main"`` element;
PostgreSQL: the page without ``.navheader`` and ``.navfooter``) are near-copies: the
Jaccard similarity of their sets of 5-word shingles (lower-cased words) is >= 0.8.
Anything else is a *false drop*. For every drop the two texts the pipeline fingerprinted
are printed (as :func:`scrapy_simhash.tools.fingerprinted.fingerprinted_text` gives them, which
``scrapy-simhash text`` prints), cut to ``--chars`` characters.

``--offline`` extracts and fingerprints the pages in this process (the pipeline's
analysis, an in-memory index, no crawl).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import lxml.html
from results import write_results  # benchmarks/results.py, beside this script

from scrapy_simhash.dedup import Deduplicator, analyse_text
from scrapy_simhash.index import open_index
from scrapy_simhash.settings import SimhashSettings
from scrapy_simhash.tools.fingerprinted import fingerprinted_text, page_title

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "doc-sites"
SITES = ("python-3.11", "postgresql-15")
SHAPES = ("html", "fields")
#: Two pages are near-copies when their shingle sets' Jaccard similarity is this high.
JACCARD = 0.8
SHINGLE = 5
SPIDER = """
import json, os
import scrapy

class Pages(scrapy.Spider):
    name = "pages"
    custom_settings = {"TELNETCONSOLE_ENABLED": False, "LOG_LEVEL": "WARNING"}

    async def start(self):
        for path in json.load(open(os.environ["DOC_PAGES"])):
            yield scrapy.Request("file://" + path, callback=self.parse_page)

    def parse_page(self, response):
        if os.environ["DOC_SHAPE"] == "html":
            yield {"url": response.url, "html": response.text}
        else:
            # The headline, as careful spiders take it: <title> carries a site suffix.
            title = next(filter(None, (" ".join("".join(response.css(q).getall()).split())
                                       for q in ("article h1 ::text", "h1 ::text",
                                                 "title::text"))), "")
            yield {"url": response.url, "title": title, "content": response.text}
"""
_WORDS = re.compile(r"\w+")


def unpack(folder: Path) -> dict[str, list[str]]:
    """Unpack both archives into *folder*; site -> its pages' paths, sorted."""
    sites = {}
    for site in SITES:
        with tarfile.open(CORPUS / f"{site}.tar.xz") as archive:
            archive.extractall(folder, filter="data")
        sites[site] = sorted(str(p) for p in (folder / site).rglob("*.html"))
    return sites


def item_of(path: str, shape: str) -> dict:
    """The item the benchmark's spider yields for the page at *path*."""
    html = Path(path).read_bytes().decode("utf-8", errors="replace")
    url = "file://" + path
    if shape == "html":
        return {"url": url, "html": html}
    return {"url": url, "title": page_title(html), "content": html}


def settings_for(shape: str, index_uri: str) -> dict[str, str]:
    settings = {
        "ITEM_PIPELINES": json.dumps({"scrapy_simhash.SimhashDedupPipeline": 300}),
        "SIMHASH_INDEX_URI": index_uri,
    }
    if shape == "html":
        settings["SIMHASH_TEXT_FIELDS"] = "html"
    return settings


def truth_text(path: str, site: str) -> str:
    """The page's visible text outside its site's header, sidebar and footer."""
    root = lxml.html.document_fromstring(Path(path).read_bytes())
    for junk in root.xpath("//script|//style"):
        junk.drop_tree()
    if site.startswith("python"):
        main = root.xpath("//*[@role='main']")
        return main[0].text_content() if main else root.text_content()
    for chrome in root.xpath("//*[contains(@class,'navheader') or contains(@class,'navfooter')]"):
        chrome.drop_tree()
    body = root.find("body")
    return (body if body is not None else root).text_content()


def shingles(text: str) -> set:
    words = _WORDS.findall(text.lower())
    if len(words) < SHINGLE:
        return {tuple(words)}
    return {tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def jaccard(a: str, b: str) -> float:
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def crawl(paths: list[str], shape: str, index_uri: str, folder: Path) -> None:
    listing = folder / "pages.json"
    listing.write_text(json.dumps(paths), encoding="utf-8")
    spider = folder / "doc_spider.py"
    spider.write_text(SPIDER, encoding="utf-8")
    command = [sys.executable, "-m", "scrapy", "runspider", "-L", "WARNING", str(spider)]
    for name, value in settings_for(shape, index_uri).items():
        command += ["-s", f"{name}={value}"]
    environment = dict(os.environ, DOC_PAGES=str(listing), DOC_SHAPE=shape)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    subprocess.run(command, check=True, env=environment, cwd=folder)


def drops_crawled(paths: list[str], shape: str, folder: Path) -> list[tuple[str, str, int]]:
    """(dropped path, kept path, distance) of a real crawl."""
    index = folder / f"{shape}-{abs(hash(paths[0]))}.db"
    crawl(paths, shape, f"sqlite:///{index}", folder)
    with open_index(f"sqlite:///{index}", create=False) as opened:
        return [
            (d.key.removeprefix("file://"), d.kept_key.removeprefix("file://"), d.distance)
            for d in opened.drops()
        ]


def drops_offline(paths: list[str], shape: str, config: SimhashSettings) -> list:
    """:func:`drops_crawled` in this process, an in-memory index."""
    found = []
    with open_index("memory:", max_distance=config.max_distance, blocks=config.blocks) as index:
        dedup = Deduplicator(
            index,
            config.fingerprinter,
            min_terms=config.min_terms,
            max_length=config.max_text_length,
        )
        for path in paths:
            text = fingerprinted_text(item_of(path, shape), config)
            verdict = dedup.check(analyse_text(dedup, text), path)
            if verdict.is_duplicate:
                found.append((path, verdict.match.key, verdict.match.distance))
    return found


def config_for(shape: str) -> SimhashSettings:
    from scrapy.settings import Settings

    settings = Settings()
    settings.setdict(settings_for(shape, "memory:"))
    return SimhashSettings.from_settings(settings)


def _cut(text: str, chars: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[:chars] + " ..."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", choices=SITES, action="append", help="default: both")
    parser.add_argument("--shape", choices=SHAPES, action="append", help="default: both")
    parser.add_argument("--offline", action="store_true", help="no crawl: in this process")
    parser.add_argument("--chars", type=int, default=300, help="characters of each text shown")
    parser.add_argument("--no-write", action="store_true", help="print only, write no results")
    args = parser.parse_args(argv)
    if not CORPUS.is_dir():
        print(f"{CORPUS} is missing: this benchmark needs shared/corpora/doc-sites")
        return 1
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sites = unpack(folder)
        for site in args.site or SITES:
            paths = sites[site]
            for shape in args.shape or SHAPES:
                config = config_for(shape)
                if args.offline:
                    drops = drops_offline(paths, shape, config)
                else:
                    drops = drops_crawled(paths, shape, folder)
                found = []
                print(f"\n## {site}, items {shape}: {len(paths)} pages, {len(drops)} drops")
                for dropped, kept, distance in drops:
                    similarity = jaccard(truth_text(dropped, site), truth_text(kept, site))
                    true = similarity >= JACCARD
                    pair = [str(Path(p).relative_to(folder)) for p in (dropped, kept)]
                    found.append(
                        {"dropped": pair[0], "kept": pair[1], "true": true, "distance": distance}
                        | {"jaccard": round(similarity, 3)}
                    )
                    print(
                        f"- {'true' if true else 'FALSE'} drop (Jaccard {similarity:.2f}, "
                        f"distance {distance}): {pair[0]} as a copy of {pair[1]}"
                    )
                    for name, path in (("dropped", dropped), ("kept", kept)):
                        text = fingerprinted_text(item_of(path, shape), config)
                        reason = f", {text.fallback}" if getattr(text, "fallback", None) else ""
                        print(f"    {name} ({len(text)} chars{reason}): {_cut(text, args.chars)}")
                false = sum(not drop["true"] for drop in found)
                counts = {"pages": len(paths), "drops": len(drops), "false_drops": false}
                rows.append({"site": site, "items": shape, **counts, "each": found})
    print("\n| site | items | pages | drops | false drops |")
    print("|---|---|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['site']} | {row['items']} | {row['pages']} | {row['drops']} "
            f"| {row['false_drops']} |"
        )
    if not args.no_write:
        mode = {"offline": args.offline, "truth": f"5-word shingle Jaccard >= {JACCARD}"}
        name = "doc_sites" + ("-offline" if args.offline else "")
        name += "-partial" if args.site or args.shape else ""
        write_results(name, {**mode, "rows": rows}, argv=argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
