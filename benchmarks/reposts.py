"""Cross-site reposts: is one article found again in another site's template, and are
distinct pages left alone? Measured through a real Scrapy crawl with the pipeline.

    python benchmarks/reposts.py                      # builtin, trafilatura, none
    python benchmarks/reposts.py builtin --donors 100 # quicker

Data: ``../shared/corpora/web-extraction`` (884 labelled real pages of many sites). The
article of a page is the smallest element that holds all of its main-text snippets (the
labels, not any extractor, decide where it is). A *repost* of page A on site B is page B
with its article's content replaced by A's article: A's text in B's template, with B's
menus, sidebars, teasers and footer. Each of ``--donors`` pages (chosen at random with
``--seed``) is reposted into ``--hosts`` other pages.

Two crawls share one SQLite index, as a site's crawls would:

1. the 884 originals, items ``{"url", "html"}``: any page dropped here is a *false drop*
   (the set holds no two copies of one page);
2. the reposts: a repost dropped as a copy of its own original (or of an earlier repost of
   the same article) is *found*; one dropped as a copy of another page is a *wrong match*.

Each crawl runs ``scrapy runspider`` on ``file://`` pages in a child process, with
``SIMHASH_EXTRACTOR`` set to the extractor measured and every other setting at its default.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import lxml.html

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extraction import CORPUS, load_pages

from scrapy_simhash.index import open_index

ROOT = Path(__file__).resolve().parents[1]
_PARSER = lxml.html.HTMLParser(encoding="utf-8")
SPIDER = """
import json, os
import scrapy

class Pages(scrapy.Spider):
    name = "pages"
    custom_settings = {"TELNETCONSOLE_ENABLED": False, "LOG_LEVEL": "WARNING"}

    async def start(self):
        for path in json.load(open(os.environ["REPOST_PAGES"])):
            yield scrapy.Request("file://" + path, callback=self.parse_page)

    def parse_page(self, response):
        yield {"url": response.url, "html": response.text}
"""


def _squash(text: str) -> str:
    return " ".join(text.split())


def article_element(root, snippets: list[str]):
    """The smallest element whose text holds every snippet found in the page, or None."""
    holders = []
    for snippet in snippets:
        probe = _squash(snippet)[:30]
        for text in root.xpath("//body//text()"):
            if probe and probe in _squash(text):
                parent = text.getparent()
                holders.append(parent.getparent() if text.is_tail else parent)
                break
    if not holders:
        return None
    ancestors = [set([h, *h.iterancestors()]) for h in holders]
    common = set.intersection(*ancestors)
    # The deepest common ancestor: the one with the most ancestors of its own.
    element = max(common, key=lambda e: sum(1 for _ in e.iterancestors()))
    return None if element.tag in ("html", "body") else element


def build(pages, donors: int, hosts: int, seed: int, folder: Path):
    """Write the originals and the reposts to *folder*; return (originals, reposts) where
    reposts maps a repost's path to its original's path."""
    parsed = []
    for number, (html, labels) in enumerate(pages):
        root = lxml.html.document_fromstring(html.encode("utf-8"), parser=_PARSER)
        parsed.append((number, root, article_element(root, labels.get("with", []))))
    originals = []
    for number, root, _ in parsed:
        path = folder / f"original-{number}.html"
        path.write_text(_page(root), encoding="utf-8")
        originals.append(str(path))
    usable = [(n, root, article) for n, root, article in parsed if article is not None]
    rng = random.Random(seed)
    reposts = {}
    for n, _, article in rng.sample(usable, min(donors, len(usable))):
        for h, host_root, host_article in rng.sample([u for u in usable if u[0] != n], hosts):
            target = host_root.getroottree().getpath(host_article)
            copy_root = copy.deepcopy(host_root)
            place = copy_root.getroottree().xpath(target)[0]
            for child in list(place):
                place.remove(child)
            place.text = article.text
            for child in article:
                place.append(copy.deepcopy(child))
            path = folder / f"repost-{n}-on-{h}.html"
            path.write_text(_page(copy_root), encoding="utf-8")
            reposts[str(path)] = str(folder / f"original-{n}.html")
    return originals, reposts


def _page(root) -> str:
    # file:// responses are decoded as the page declares: every page says UTF-8.
    for meta in root.xpath("//meta[@charset or @http-equiv]"):
        meta.getparent().remove(meta)
    head = root.find("head")
    if head is None:
        head = lxml.html.Element("head")
        root.insert(0, head)
    head.insert(0, lxml.html.fromstring('<meta charset="utf-8">'))
    return lxml.html.tostring(root, encoding="unicode", doctype="<!DOCTYPE html>")


def crawl(paths: list[str], index: Path, extractor: str, folder: Path) -> None:
    listing = folder / "pages.json"
    listing.write_text(json.dumps(paths), encoding="utf-8")
    spider = folder / "pages_spider.py"
    spider.write_text(SPIDER, encoding="utf-8")
    settings = {
        "ITEM_PIPELINES": json.dumps({"scrapy_simhash.SimhashDedupPipeline": 300}),
        "SIMHASH_INDEX_URI": f"sqlite:///{index}",
        "SIMHASH_TEXT_FIELDS": "html",
        "SIMHASH_EXTRACTOR": extractor,
    }
    command = [sys.executable, "-m", "scrapy", "runspider", str(spider)]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    environment = dict(os.environ, REPOST_PAGES=str(listing))
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    subprocess.run(command, check=True, env=environment, cwd=folder)


def measure(extractor: str, originals, reposts, folder: Path) -> dict:
    index = folder / f"{extractor}.db"
    crawl(originals, index, extractor, folder)
    with open_index(f"sqlite:///{index}", create=False) as opened:
        false_drops = sum(1 for _ in opened.drops())
    crawl(list(reposts), index, extractor, folder)
    outcome = Counter()
    article = {**{o: o for o in originals}, **reposts}  # page -> its article's original
    with open_index(f"sqlite:///{index}", create=False) as opened:
        for drop in opened.drops():
            path = drop.key.removeprefix("file://")
            if path in reposts:
                # Dropped against its original, or against an earlier repost of it.
                kept = article.get(drop.kept_key.removeprefix("file://"))
                outcome["found" if kept == reposts[path] else "wrong"] += 1
    return {"false_drops": false_drops, **outcome}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extractors", nargs="*", default=["builtin", "trafilatura", "none"])
    parser.add_argument("--donors", type=int, default=300, help="articles reposted")
    parser.add_argument("--hosts", type=int, default=3, help="sites each is reposted on")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if not (CORPUS / "expected.json").exists():
        print(f"{CORPUS} is missing: this benchmark needs shared/corpora/web-extraction")
        return 1
    pages = load_pages()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        originals, reposts = build(pages, args.donors, args.hosts, args.seed, folder)
        print(
            f"{len(originals)} original pages; {len(reposts)} reposts "
            f"({args.donors} articles x {args.hosts} other sites); distance <= 3\n"
        )
        print("| extractor | reposts found | wrong matches | false drops among originals |")
        print("|---|---:|---:|---:|")
        for extractor in args.extractors:
            r = measure(extractor, originals, reposts, folder)
            found = r.get("found", 0)
            print(
                f"| {extractor} | {found / len(reposts):.1%} ({found}/{len(reposts)}) "
                f"| {r.get('wrong', 0)} | {r['false_drops']} of {len(originals)} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
