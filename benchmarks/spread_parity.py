"""Parity: real crawls keep and drop the same pages with an index spread over a Redis
Cluster as with SQLite.

    python benchmarks/spread_parity.py                         # every corpus
    python benchmarks/spread_parity.py --corpus example --corpus debian-handbook
    python benchmarks/spread_parity.py --cluster-url 'redis://127.0.0.1:7000/0?cluster=true'
    python benchmarks/spread_parity.py --anchors on            # containment on, both indexes

Each corpus is crawled twice with ``scrapy`` in child processes, the two at once, every
setting at its default but the index: once into a new SQLite file, once into a new spread
index (``?cluster=true&spread=true``) on a six-node cluster the script starts on free local
ports (three masters, three replicas; ``redis-server`` and ``redis-cli`` on PATH), or on
``--cluster-url``. Requests go one at a time (``CONCURRENT_REQUESTS=1``), so that both
crawls meet the pages in nearly the same order: which copy of a near-duplicate group is
kept depends on the order. Nearly: the pipeline analyses pages in a pool of threads, so two
pages crawled one after the other may reach the index in either order; then the counts
agree and the copies kept may differ (each page kept on one index only is printed).

Corpora (``../shared/corpora``, see its README; a missing one is skipped, saying so):

* ``example``: the example project's spider (``scrapy crawl news`` in example_project/);
* ``debian-handbook``: the 762 pages of the handbook in six languages (untranslated
  chapters are near-copies of the English ones);
* ``doc-sites``: Python 3.11's and PostgreSQL 15's documentation (1,699 pages);
* ``web-extraction``: 923 pages of many sites;
* ``reuters``: the Reuters-21578 stories of ``reut2-000.sgm``, one page each (re-sent
  and corrected stories are exact and near copies).

Items are ``{"url", "html"}`` with ``SIMHASH_TEXT_FIELDS="html"`` (the example project's
own spider: its fields). ``--anchors on`` (or ``off``) sets ``SIMHASH_ANCHORS`` on both
crawls. Printed per corpus: pages kept and dropped (the pipeline's ``simhash/kept`` and
``simhash/dropped`` counts, and of the drops those by containment,
``simhash/dropped/contained``) on each index, index errors, and whether
the kept pages are the same pages; then each master's share of the commands the spread
crawls sent (``INFO stats``; the cluster serves nothing else). The exit status is 0 when
every corpus has the same counts on both indexes and no index error.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT.parent / "shared" / "corpora"
sys.path.insert(0, str(ROOT / "tests"))

# A spider over a list of files, and an extension that writes the crawl's simhash stats.
SPIDER = """
import json, os
import scrapy

class Pages(scrapy.Spider):
    name = "pages"

    async def start(self):
        for path in json.load(open(os.environ["PARITY_PAGES"])):
            yield scrapy.Request("file://" + path, callback=self.parse_page)

    def parse_page(self, response):
        yield {"url": response.url, "html": response.text}
"""
STATS = """
import json
from scrapy import signals

class DumpStats:
    def __init__(self, crawler):
        self.crawler = crawler
        crawler.signals.connect(self.closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler):
        return cls(crawler)

    def closed(self, spider, reason):
        stats = {k: v for k, v in self.crawler.stats.get_stats().items()
                 if k.startswith(("simhash/", "item_"))}
        with open(self.crawler.settings["PARITY_STATS"], "w") as out:
            json.dump(dict(stats, finish_reason=reason), out)
"""
COMMON = {
    "CONCURRENT_REQUESTS": "1",
    "TELNETCONSOLE_ENABLED": "False",
    "LOG_LEVEL": "WARNING",
    "EXTENSIONS": json.dumps({"parity_stats.DumpStats": 500}),
}


def primaries(url: str) -> list:
    """A client to each master of the cluster at *url*."""
    import redis

    cluster = redis.RedisCluster.from_url(url.split("?")[0])
    nodes = [redis.Redis(host=n.host, port=n.port) for n in cluster.get_primaries()]
    cluster.close()
    return sorted(nodes, key=lambda r: r.connection_pool.connection_kwargs["port"])


def reuters_pages(folder: Path) -> list[str]:
    """One page per story of reut2-000.sgm (its title and body), written in *folder*."""
    text = (CORPORA / "reuters21578" / "reut2-000.sgm").read_bytes().decode("latin-1")
    folder.mkdir()
    paths = []
    for story in re.findall(r"<REUTERS.*?</REUTERS>", text, re.S):
        number = re.search(r'NEWID="(\d+)"', story).group(1)
        title = re.search(r"<TITLE>(.*?)</TITLE>", story, re.S)
        body = re.search(r"<BODY>(.*?)</BODY>", story, re.S)
        title_text = html.unescape(title.group(1)) if title else ""
        paragraphs = html.unescape(body.group(1)).split("\n    ") if body else []
        path = folder / f"{int(number):05d}.html"
        path.write_text(
            f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title_text)}'
            f"</title></head><body><h1>{html.escape(title_text)}</h1>"
            + "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
            + "</body></html>",
            encoding="utf-8",
        )
        paths.append(str(path))
    return paths


def corpus_pages(name: str, folder: Path) -> list[str] | None:
    """The files of corpus *name* (unpacked into *folder*), in crawl order; None when
    the corpus is absent."""
    if name == "debian-handbook":
        source = CORPORA / name
        return sorted(str(p) for p in source.glob("*/*.html")) if source.is_dir() else None
    if name == "doc-sites":
        archives = [CORPORA / name / f"{site}.tar.xz" for site in ("python-3.11", "postgresql-15")]
        if not all(a.exists() for a in archives):
            return None
        for archive in archives:
            with tarfile.open(archive) as opened:
                opened.extractall(folder / name, filter="data")
        return sorted(str(p) for p in (folder / name).rglob("*.html"))
    if name == "web-extraction":
        archive = CORPORA / name / "pages.tar.xz"
        if not archive.exists():
            return None
        with tarfile.open(archive) as opened:
            opened.extractall(folder / name, filter="data")
        return sorted(str(p) for p in (folder / name).rglob("*") if p.is_file())
    if name == "reuters":
        exists = (CORPORA / "reuters21578" / "reut2-000.sgm").exists()
        return reuters_pages(folder / name) if exists else None
    raise ValueError(name)


def start_crawl(corpus: str, paths, index_uri: str, folder: Path, tools: Path) -> subprocess.Popen:
    """A crawl of *corpus* into *index_uri*; its feed and stats go to *folder*; the
    spider and the extension are in *tools*."""
    settings = dict(COMMON, SIMHASH_INDEX_URI=index_uri, PARITY_STATS=str(folder / "stats.json"))
    environment = dict(os.environ)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), str(tools), os.environ.get("PYTHONPATH")])
    )
    feed = ["-O", str(folder / "kept.jl")]
    if corpus == "example":
        command = [sys.executable, "-m", "scrapy", "crawl", "news", *feed]
        cwd = ROOT / "example_project"
    else:
        (folder / "pages.json").write_text(json.dumps(paths), encoding="utf-8")
        command = [sys.executable, "-m", "scrapy", "runspider", *feed]
        command.append(str(tools / "parity_spider.py"))
        settings["ITEM_PIPELINES"] = json.dumps({"scrapy_simhash.SimhashDedupPipeline": 300})
        settings["SIMHASH_TEXT_FIELDS"] = "html"
        environment["PARITY_PAGES"] = str(folder / "pages.json")
        cwd = folder
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    log = open(folder / "crawl.log", "w")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(command, cwd=cwd, env=environment, stdout=log, stderr=log)


def outcome(folder: Path) -> dict:
    stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    feed = folder / "kept.jl"
    lines = feed.read_text(encoding="utf-8").splitlines() if feed.exists() else []
    return {
        "kept": stats.get("simhash/kept", 0),
        "dropped": stats.get("simhash/dropped", 0),
        "contained": stats.get("simhash/dropped/contained", 0),
        "errors": stats.get("simhash/errors/index", 0),
        "urls": sorted(json.loads(line)["url"] for line in lines),
    }


def main(argv: list[str] | None = None) -> int:
    names = ("example", "debian-handbook", "doc-sites", "web-extraction", "reuters")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", choices=names, action="append", help="default: all")
    parser.add_argument("--cluster-url", help="redis://host:port/0?cluster=true of a cluster")
    parser.add_argument(
        "--anchors", choices=("on", "off"), help="SIMHASH_ANCHORS on both (default: its default)"
    )
    args = parser.parse_args(argv)
    if args.anchors:
        COMMON["SIMHASH_ANCHORS"] = str(args.anchors == "on")
    cluster = None
    url = args.cluster_url
    rows, same = [], True
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "parity_spider.py").write_text(SPIDER, encoding="utf-8")
        (folder / "parity_stats.py").write_text(STATS, encoding="utf-8")
        if url is None:
            from redis_cluster import RedisCluster

            cluster = RedisCluster(folder / "cluster", node_timeout_ms=15000).start()
            url = cluster.url
        masters = primaries(url)
        before = [m.info("stats")["total_commands_processed"] for m in masters]
        try:
            for corpus in args.corpus or names:
                paths = None if corpus == "example" else corpus_pages(corpus, folder)
                if corpus != "example" and paths is None:
                    print(f"{corpus}: skipped, not in {CORPORA}")
                    continue
                uris = {
                    "sqlite": f"sqlite:///{folder / corpus}-index.db",
                    "spread": f"{url}&spread=true&prefix=parity-{corpus}-{uuid.uuid4().hex[:8]}",
                }
                runs = {}
                for backend, uri in uris.items():
                    (folder / "runs" / corpus / backend).mkdir(parents=True)
                    run = folder / "runs" / corpus / backend
                    runs[backend] = start_crawl(corpus, paths, uri, run, folder)
                found = {}
                for backend, process in runs.items():
                    run = folder / "runs" / corpus / backend
                    if process.wait() != 0:
                        print((run / "crawl.log").read_text(encoding="utf-8")[-3000:])
                        return 1
                    found[backend] = outcome(run)
                sqlite, spread = found["sqlite"], found["spread"]
                match = sqlite["urls"] == spread["urls"]
                counts = ("kept", "dropped", "contained")
                equal = all(sqlite[k] == spread[k] for k in counts)
                same = same and equal and not sqlite["errors"] and not spread["errors"]
                rows.append((corpus, sqlite, spread, match))
                for name, mine, theirs in (("SQLite", sqlite, spread), ("spread", spread, sqlite)):
                    for page in sorted(set(mine["urls"]) - set(theirs["urls"])):
                        print(f"{corpus}: kept only on {name}: {page}")
                print(f"{corpus}: done", flush=True)
            commands = [
                m.info("stats")["total_commands_processed"] - b
                for m, b in zip(masters, before, strict=True)
            ]
        finally:
            if cluster is not None:
                cluster.stop()
    print(f"\nSIMHASH_ANCHORS: {COMMON.get('SIMHASH_ANCHORS', 'default')}")
    print("| corpus | SQLite kept | SQLite dropped (contained) | spread kept "
          "| spread dropped (contained) | index errors | same pages kept |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---|")
    for corpus, sqlite, spread, match in rows:
        print(
            f"| {corpus} | {sqlite['kept']:,} | {sqlite['dropped']:,} ({sqlite['contained']:,}) "
            f"| {spread['kept']:,} | {spread['dropped']:,} ({spread['contained']:,}) "
            f"| {sqlite['errors'] + spread['errors']} | {'yes' if match else 'NO'} |"
        )
    total = sum(commands) or 1
    shares = "  ".join(f"{100 * c / total:.1f}%" for c in commands)
    print(f"\ncommands served by each master during the spread crawls: {shares} ({total:,})")
    print("parity: " + ("the same counts" if same else "DIFFERENT COUNTS"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
