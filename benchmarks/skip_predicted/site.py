"""A site with the URL variants real sites repeat, served over local HTTP.

Built from documents (title, paragraphs, section). Every URL names one *content*: a
document, a page of the list of all documents, or a section's table of contents. The copies:

* ``/p/<n>.html?utm_source=feed&utm_medium=rss`` and ``?ref=related``: tracking parameters;
* ``/print/p/<n>.html`` and ``/amp/p/<n>.html``: the page without its navigation;
* ``/s/<section>/index.html`` beside ``/s/<section>/``;
* ``/list/page/1/`` beside ``/list/``, the list's first page; ``/list/page/2/``... are
  distinct pages.

The server counts every request by path, so a crawl's downloads and copies are known.
"""

from __future__ import annotations

import html
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

PER_LIST_PAGE = 20


@dataclass(frozen=True)
class Document:
    title: str
    paragraphs: tuple[str, ...]
    section: str


class Site:
    """The pages of *documents*: path (without query) -> (content id, HTML)."""

    def __init__(self, documents: list[Document]) -> None:
        self.documents = documents
        self.sections = sorted({d.section for d in documents})
        self.list_pages = max(1, -(-len(documents) // PER_LIST_PAGE))

    def content(self, path: str) -> tuple[str, str] | None:
        """(content id, HTML) of the page at *path* (query ignored), or ``None``."""
        parts = [p for p in path.split("/") if p]
        printed = parts[:1] in (["print"], ["amp"])
        if printed:
            parts = parts[1:]
        if len(parts) == 2 and parts[0] == "p" and parts[1].endswith(".html"):
            number = parts[1].removesuffix(".html")
            if number.isdigit() and int(number) < len(self.documents):
                return f"p{number}", self._document(int(number), printed=printed)
            return None
        if printed:
            return None
        if parts in (["list"], ["list", "page", "1"]):
            return "l1", self._list(1)
        if len(parts) == 3 and parts[:2] == ["list", "page"] and parts[2].isdigit():
            page = int(parts[2])
            return (f"l{page}", self._list(page)) if 1 <= page <= self.list_pages else None
        if len(parts) in (2, 3) and parts[0] == "s" and parts[1] in self.sections:
            if len(parts) == 3 and parts[2] != "index.html":
                return None
            return f"s{parts[1]}", self._section(parts[1])
        return None

    def _page(self, title: str, links: list[str], body: str) -> str:
        nav = "".join(
            f'<li><a href="{html.escape(link)}">{html.escape(link)}</a></li>' for link in links
        )
        return (
            f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}'
            f"</title></head><body><nav><ul>{nav}</ul></nav><main><h1>{html.escape(title)}"
            f"</h1>{body}</main><footer><p>Documentation site, served for a benchmark.</p>"
            "</footer></body></html>"
        )

    def _document(self, number: int, *, printed: bool) -> str:
        doc = self.documents[number]
        n = len(self.documents)
        links = [
            "/list/",
            "/list/page/1/",
            f"/s/{doc.section}/",
            f"/s/{doc.section}/index.html",
            f"/p/{(number + 1) % n}.html",
            f"/p/{(number + 2) % n}.html?utm_source=feed&utm_medium=rss",
            f"/p/{(number + 3) % n}.html?ref=related",
            f"/print/p/{number}.html",
            f"/amp/p/{number}.html",
        ]
        body = "".join(f"<p>{html.escape(p)}</p>" for p in doc.paragraphs)
        # A print or AMP page: the same text without the site's navigation.
        return self._page(doc.title, [] if printed else links, body)

    def _summary(self, number: int) -> str:
        doc = self.documents[number]
        words = " ".join(doc.paragraphs).split()[:30]
        return f"<h2>{html.escape(doc.title)}</h2><p>{html.escape(' '.join(words))}</p>"

    def _list(self, page: int) -> str:
        first = (page - 1) * PER_LIST_PAGE
        numbers = range(first, min(first + PER_LIST_PAGE, len(self.documents)))
        links = []
        for number in numbers:
            links += [f"/p/{number}.html", f"/p/{number}.html?utm_source=list"]
        if page < self.list_pages:
            links.append(f"/list/page/{page + 1}/")
        if page > 1:
            links.append("/list/" if page == 2 else f"/list/page/{page - 1}/")
        body = "".join(self._summary(number) for number in numbers)
        return self._page(f"All pages, page {page}", links, body)

    def _section(self, section: str) -> str:
        numbers = [i for i, d in enumerate(self.documents) if d.section == section]
        links = [f"/p/{i}.html" for i in numbers]
        body = "".join(self._summary(i) for i in numbers)
        return self._page(f"Section {section}", links, body)


class Server:
    """*site* served on 127.0.0.1 in a thread; :attr:`requests` lists the paths asked for."""

    def __init__(self, site: Site) -> None:
        self.site = site
        self.requests: list[str] = []
        served = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                served.requests.append(self.path)
                found = served.site.content(urlsplit(self.path).path)
                if found is None:
                    self.send_error(404)
                    return
                data = found[1].encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def content_id(self, url: str) -> str | None:
        found = self.site.content(urlsplit(url).path)
        return None if found is None else found[0]
