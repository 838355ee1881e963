"""Cross-site reposts: is one article found again in another site's template, and are
distinct pages left alone? Measured through a real Scrapy crawl with the pipeline.

    python benchmarks/reposts.py                      # builtin, trafilatura, none
    python benchmarks/reposts.py builtin --donors 100 # quicker
    python benchmarks/reposts.py builtin --offline    # no crawl: to iterate quickly
    python benchmarks/reposts.py builtin --anchors on # only with paragraph anchors
    python benchmarks/reposts.py builtin --templates  # learning each site's template
    python benchmarks/reposts.py --table              # docs/quality.md's rows, from results

Each extractor is measured with paragraph anchors (``SIMHASH_ANCHORS``, the default) and
without (distance only), unless ``--anchors`` says one.

Data: ``../shared/corpora/web-extraction`` (884 labelled real pages of many sites). The
article of a page is the smallest element that holds all of its main-text snippets (the
labels, not any extractor, decide where it is). A *repost* of page A on site B is page B
with its article's content replaced by A's article: A's text in B's template, with B's
menus, sidebars, teasers and footer. Each of ``--donors`` pages (chosen at random with
``--seed``) is reposted into ``--hosts`` other pages.

Each page is saved in its own site's folder (``site-<n>/``): the original as
``original.html``, each repost into it as ``repost-of-<m>.html``. A ``file://`` page's site is
its folder, so that with ``--templates`` (``SIMHASH_SITE_TEMPLATES``) a repost is read with
the template of the site it was reposted into, learned from that site's original.

Two crawls share one SQLite index, as a site's crawls would:

1. the 884 originals, items ``{"url", "html"}``: any page dropped here is a *false drop*
   (the set is meant to hold no two copies of one page; a page dropped here that is a real
   copy of the one it was dropped against is said so where the figures are reported);
2. the reposts: a repost dropped as a copy of its own original (or of an earlier repost of
   the same article, or of the original that its own original was dropped against) is
   *found*; one dropped as a copy of another page is a *wrong match*. Most wrong matches are
reposts into a host whose labelled article is a small part of its text: such a "repost" is
the host page with a paragraph or two replaced, and a copy of the host page in truth; the
wrong matches among reposts between whole articles are given apart.

The labels of many pages mark only the first paragraphs: the element that holds them is then
a part of the article, and a repost built from it moves a part into a page that keeps the
rest of its own article. The article of a page is *whole* when its element holds at least
half of the page's paragraph text (text nodes of 150 characters or more, outside links),
and *all of it* when it holds 90% or more: a repost between two such pages is what a real
repost is, the donor's article in the host's template, with none of the host's own
article left around it. Recall is given over all reposts, over those between two whole
articles and over those between two articles taken all, where it measures the extractor
rather than the labels.

Each crawl runs ``scrapy runspider`` on ``file://`` pages in a child process, with
``SIMHASH_EXTRACTOR`` set to the extractor measured and every other setting at its default.

``--offline`` extracts and checks the same pages in this process, against an in-memory
index (the pipeline's analysis and check-and-insert, no crawl). It takes a fraction of the
time, for trying a change; the crawl's figures are the ones to quote.
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
from pathlib import Path

import lxml.etree
import lxml.html

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extraction import CORPUS, load_pages
from results import RESULTS, write_results

from scrapy_simhash.analysis.fingerprint import Fingerprinter
from scrapy_simhash.anchors import DEFAULT_ANCHORS
from scrapy_simhash.dedup import Deduplicator, analyse_text
from scrapy_simhash.extract.extractors import get_extractor
from scrapy_simhash.index import open_index

ROOT = Path(__file__).resolve().parents[1]
#: An article is whole when its element holds this share of the page's paragraph text.
WHOLE_SHARE = 0.5
#: An article is taken all when its element holds this share: a repost between two such
#: pages leaves none of the host's own article around the donor's.
ALL_SHARE = 0.9
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


# Paragraph text: text nodes of 150 characters or more, outside links, scripts and styles.
_PARAGRAPH_TEXT = lxml.etree.XPath(
    ".//text()[string-length(normalize-space()) >= 150]"
    "[not(ancestor::a or ancestor::script or ancestor::style)]"
)


def _paragraph_chars(element) -> int:
    return sum(len(text.strip()) for text in _PARAGRAPH_TEXT(element))


def build(pages, donors: int, hosts: int, seed: int, folder: Path):
    """Write the originals and the reposts to *folder*; return (originals, reposts, shares)
    where reposts maps a repost's path to its original's path, and *shares* maps it to the
    smaller of its two pages' article shares (the article element's share of the page's
    paragraph text; see :data:`WHOLE_SHARE`)."""
    parsed = []
    share = {}
    for number, (html, labels) in enumerate(pages):
        root = lxml.html.document_fromstring(html.encode("utf-8"), parser=_PARSER)
        article = article_element(root, labels.get("with", []))
        parsed.append((number, root, article))
        total = _paragraph_chars(root)
        # A page without paragraph text has none outside its article either.
        if article is None:
            share[number] = 0.0
        else:
            share[number] = _paragraph_chars(article) / total if total else 1.0
    originals = []
    for number, root, _ in parsed:
        path = folder / f"site-{number}" / "original.html"
        path.parent.mkdir(exist_ok=True)
        path.write_text(_page(root), encoding="utf-8")
        originals.append(str(path))
    usable = [(n, root, article) for n, root, article in parsed if article is not None]
    rng = random.Random(seed)
    reposts = {}
    shares = {}
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
            path = folder / f"site-{h}" / f"repost-of-{n}.html"
            path.write_text(_page(copy_root), encoding="utf-8")
            reposts[str(path)] = str(folder / f"site-{n}" / "original.html")
            shares[str(path)] = min(share[n], share[h])
    return originals, reposts, shares


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


def crawl(
    paths: list[str], index: Path, extractor: str, folder: Path, anchors: bool, templates: bool
) -> None:
    listing = folder / "pages.json"
    listing.write_text(json.dumps(paths), encoding="utf-8")
    spider = folder / "pages_spider.py"
    spider.write_text(SPIDER, encoding="utf-8")
    settings = {
        "ITEM_PIPELINES": json.dumps({"scrapy_simhash.SimhashDedupPipeline": 300}),
        "SIMHASH_INDEX_URI": f"sqlite:///{index}",
        "SIMHASH_TEXT_FIELDS": "html",
        "SIMHASH_EXTRACTOR": extractor,
        "SIMHASH_ANCHORS": str(anchors),
        "SIMHASH_SITE_TEMPLATES": str(templates),
    }
    command = [sys.executable, "-m", "scrapy", "runspider", "-L", "WARNING", str(spider)]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    environment = dict(os.environ, REPOST_PAGES=str(listing))
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    subprocess.run(command, check=True, env=environment, cwd=folder)


def measure(
    extractor: str, originals, reposts, folder: Path, anchors: bool, templates: bool
) -> dict:
    index = folder / f"{extractor}-{anchors}-{templates}.db"
    crawl(originals, index, extractor, folder, anchors, templates)
    with open_index(f"sqlite:///{index}", create=False) as opened:
        # An original dropped is a copy of the original it was dropped against.
        copy_of = {
            drop.key.removeprefix("file://"): drop.kept_key.removeprefix("file://")
            for drop in opened.drops()
        }
    crawl(list(reposts), index, extractor, folder, anchors, templates)
    with open_index(f"sqlite:///{index}", create=False) as opened:
        return tally(opened.drops(), copy_of, originals, reposts)


def tally(drops, copy_of: dict, originals, reposts) -> dict:
    """Reposts found and wrong matches from the audit log, after *copy_of* (an original
    dropped -> the original it was dropped against) was read from the first crawl's."""
    found, wrong, contained = set(), set(), 0
    article = {**{o: o for o in originals}, **reposts}  # page -> its article's original
    for drop in drops:
        path = drop.key.removeprefix("file://")
        if path in reposts:
            # Dropped against its original (or the page it is a copy of), or against
            # an earlier repost of it.
            kept = article.get(drop.kept_key.removeprefix("file://"))
            if kept is not None and kept in (reposts[path], copy_of.get(reposts[path])):
                found.add(path)
                contained += bool(drop.shared)
            else:
                wrong.add(path)
    return {"false_drops": len(copy_of), "found": found, "wrong": wrong, "contained": contained}


def measure_offline(extractor: str, originals, reposts, anchors: bool, templates: bool) -> dict:
    """:func:`measure` without a crawl: the pipeline's extraction, analysis and
    check-and-insert in this process, on an in-memory index."""
    extract = get_extractor(extractor)
    with open_index("memory:") as index:
        dedup = Deduplicator(
            index,
            Fingerprinter(),
            anchors=DEFAULT_ANCHORS if anchors else 0,
            templates=templates,
        )

        def check(path: str) -> None:
            text = extract(Path(path).read_text(encoding="utf-8"))
            verdict = dedup.check(analyse_text(dedup, text), "file://" + path)
            if verdict.is_duplicate:
                index.record_drop("file://" + path, verdict.match)

        for path in originals:
            check(path)
        copy_of = {
            drop.key.removeprefix("file://"): drop.kept_key.removeprefix("file://")
            for drop in index.drops()
        }
        for path in reposts:
            check(path)
        return tally(index.drops(), copy_of, originals, reposts)


#: The rows of docs/quality.md's table of site templates: the newest crawl of each option.
TABLE = {"reposts": "without templates (the default)", "reposts-templates": "`--templates`"}


def table_rows(folder: Path = RESULTS) -> list[str]:
    """docs/quality.md's rows of the reposts found without and with ``--templates``, from
    the newest results of a crawl (not ``--offline``) of each, builtin with anchors."""
    lines = []
    for name, label in TABLE.items():
        data = json.loads(max(folder.glob(f"{name}-2*.json")).read_text(encoding="utf-8"))
        row = next(r for r in data["rows"] if r["extractor"] == "builtin" and r["anchors"])
        cells = [
            f"{row[found] / data[part]:.1%} ({row[found]}/{data[part]})"
            for found, part in (("found_all", "reposts"), ("found_whole", "whole"))
        ]
        lines.append(
            f"| {label} | {' | '.join(cells)} | {row['wrong']} ({row['wrong_whole']}) "
            f"| {row['false_drops']} of {row['originals']} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extractors", nargs="*", default=["builtin", "trafilatura", "none"])
    parser.add_argument("--donors", type=int, default=300, help="articles reposted")
    parser.add_argument("--hosts", type=int, default=3, help="sites each is reposted on")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--offline", action="store_true", help="extract and check in-process, no crawl"
    )
    parser.add_argument(
        "--anchors",
        choices=["on", "off", "both"],
        default="both",
        help="with paragraph anchors (SIMHASH_ANCHORS), without, or both (default)",
    )
    parser.add_argument(
        "--templates",
        action="store_true",
        help="learn each site's template (SIMHASH_SITE_TEMPLATES); off by default",
    )
    parser.add_argument("--no-write", action="store_true", help="print only, write no results")
    parser.add_argument("--table", action="store_true", help="print docs/quality.md's rows")
    args = parser.parse_args(argv)
    if args.table:
        print("\n".join(table_rows()))
        return 0
    if not (CORPUS / "expected.json").exists():
        print(f"{CORPUS} is missing: this benchmark needs shared/corpora/web-extraction")
        return 1
    pages = load_pages()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        originals, reposts, shares = build(pages, args.donors, args.hosts, args.seed, folder)
        whole = {path for path, share in shares.items() if share >= WHOLE_SHARE}
        taken_all = {path for path, share in shares.items() if share >= ALL_SHARE}
        print(
            f"{len(originals)} original pages; {len(reposts)} reposts "
            f"({args.donors} articles x {args.hosts} other sites), {len(whole)} of them "
            f"between whole articles, {len(taken_all)} between articles taken all; "
            f"distance <= 3\n"
        )
        print(
            "| extractor | anchors | reposts found | of whole articles | of articles taken all "
            "| found by containment | wrong matches (of whole articles) "
            "| false drops among originals |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        modes = {"on": [True], "off": [False], "both": [False, True]}[args.anchors]
        rows = []
        for extractor, anchors in [(e, a) for e in args.extractors for a in modes]:
            if args.offline:
                r = measure_offline(extractor, originals, reposts, anchors, args.templates)
            else:
                r = measure(extractor, originals, reposts, folder, anchors, args.templates)
            parts = {"all": set(reposts), "whole": whole, "taken_all": taken_all}
            rows.append(
                {"extractor": extractor, "anchors": anchors, "templates": args.templates}
                | {"contained": r["contained"]}
                | {f"found_{name}": len(r["found"] & part) for name, part in parts.items()}
                | {"wrong": len(r["wrong"]), "wrong_whole": len(r["wrong"] & whole)}
                | {"false_drops": r["false_drops"], "originals": len(originals)}
            )
            cells = [
                f"{len(r['found'] & part) / max(1, len(part)):.1%} "
                f"({len(r['found'] & part)}/{len(part)})"
                for part in (set(reposts), whole, taken_all)
            ]
            print(
                f"| {extractor} | {'on' if anchors else 'off'} | {' | '.join(cells)} "
                f"| {r['contained']} | {len(r['wrong'])} ({len(r['wrong'] & whole)}) "
                f"| {r['false_drops']} of {len(originals)} |",
                flush=True,
            )
    if not args.no_write:
        reposted = {"reposts": len(reposts), "whole": len(whole), "taken_all": len(taken_all)}
        name = (
            "reposts"
            + ("-templates" if args.templates else "")
            + ("-offline" if args.offline else "")
        )
        write_results(name, {"args": vars(args), **reposted, "rows": rows}, argv=argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
