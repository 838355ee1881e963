"""Synthetic "real sites" of issue #41, each one crawl, written to a temporary folder and
read back as a crawl would fetch them.

Every page's own text is real prose: whole Reuters-21578 story bodies
(``../shared/corpora/reuters21578``), each used once per site, their headlines as titles.
The text that pages share (a shipping paragraph, a security notice, a reference note) is
prose of the same kind, from other stories. Each site has a realistic template: a header
with its navigation, a footer, and where the case says so a sidebar.

* ``blog``: posts, and tag and monthly archive pages that list 1-2 posts with a short
  excerpt, all in a theme whose ``<div class="sidebar">`` holds a long archive list, a tag
  cloud, categories and recent posts;
* ``shop``: 50 products, each with its own ~80-word description and the same two long
  shipping and brand paragraphs inside ``<article>``;
* ``delivery``: a "delivery information" page made only of two paragraphs, crawled first,
  then 20 distinct ~450-word articles that each carry those two paragraphs;
* ``release-notes``: releases whose notes repeat an earlier release's long security
  paragraph and add their own fixes (and releases that do not);
* ``reference``: reference pages, each with its own description, syntax and example and
  the same two long notes, and an overview page that holds the two notes.
"""

from __future__ import annotations

import functools
import html as html_lib
import random
import re
import tempfile
from pathlib import Path

#: ../shared/corpora beside the project's root (as corpora.py says; not imported from it,
#: which imports this module).
CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"

#: Case -> whether its pages are crawled in the order generated (else shuffled).
CASES = {
    "blog": False,
    "shop": False,
    "delivery": True,
    "release-notes": False,
    "reference": False,
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"(])")


@functools.cache
def stories() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(headline, sentences) of distinct Reuters stories of 80 words or more."""
    found, seen = [], set()
    for path in sorted((CORPORA / "reuters21578").glob("reut2-00[0-3].sgm")):
        raw = path.read_text(encoding="latin-1")
        for story in re.findall(r"<REUTERS[^>]*>.*?</REUTERS>", raw, re.DOTALL):
            title = re.search(r"<TITLE>(.*?)</TITLE>", story, re.DOTALL)
            body = re.search(r"<BODY>(.*?)</BODY>", story, re.DOTALL)
            if not (title and body):
                continue
            text = html_lib.unescape(body.group(1)).replace("\x03", "")
            text = re.sub(r"\s*\bReuter\s*$", "", " ".join(text.split()), flags=re.IGNORECASE)
            head = text[:60].lower()
            if len(text.split()) < 80 or head in seen:
                continue
            seen.add(head)
            headline = " ".join(html_lib.unescape(title.group(1)).split()).title()
            sentences = tuple(s for s in _SENTENCE.split(text) if s)
            found.append((re.sub(r"\s*<\w+>", "", headline), sentences))
    return tuple(found)


class Prose:
    """Hands out stories, each once: a page's own text never repeats another's."""

    def __init__(self, seed: int) -> None:
        self.stories = list(stories())
        random.Random(seed).shuffle(self.stories)

    def story(self) -> tuple[str, tuple[str, ...]]:
        return self.stories.pop()

    def title(self) -> str:
        return self.story()[0]

    def sentences(self, words: int) -> list[str]:
        """Whole sentences, from as many stories as it takes, to at least *words* words."""
        taken: list[str] = []
        count = 0
        while count < words:
            for sentence in self.story()[1]:
                taken.append(sentence)
                count += len(sentence.split())
                if count >= words:
                    break
        return taken

    def paragraphs(self, words: int, per: int = 3) -> list[str]:
        sentences = self.sentences(words)
        return [" ".join(sentences[i : i + per]) for i in range(0, len(sentences), per)]

    def paragraph(self, words: int) -> str:
        return " ".join(self.sentences(words))


def paras(texts: list[str]) -> str:
    return "".join(f"<p>{html_lib.escape(t)}</p>\n" for t in texts)


def shell(site: str, title: str, main: str, *, menu: list[str], aside: str = "") -> str:
    """A page of *site*: header with its navigation, *main*, a sidebar *aside*, footer."""
    links = "".join(f'<li><a href="/{m.lower()}/">{m}</a></li>' for m in menu)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{html_lib.escape(title)} | {site}</title>
<link rel="stylesheet" href="/assets/style.css">
<script>window.dataLayer = window.dataLayer || [];
dataLayer.push({{page: "{title[:20]}"}});</script>
</head><body>
<header class="site-header"><a class="brand" href="/">{site}</a>
<nav class="primary-navigation"><ul>{links}</ul></nav></header>
<div class="container">
<main id="content" class="site-main">
{main}
</main>
{aside}
</div>
<footer class="site-footer"><p>Copyright 2024 {site}. All rights reserved.</p>
<p><a href="/privacy/">Privacy policy</a> · <a href="/terms/">Terms of use</a> ·
<a href="/contact/">Contact us</a></p></footer>
</body></html>
"""


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


MONTHS = [
    f"{m} {y}"
    for y in (2024, 2023, 2022)
    for m in re.findall(
        r"\w+",
        "December November October September August July June May April March February January",
    )
]


def blog(seed: int) -> list[tuple[str, str]]:
    rng, prose = random.Random(seed), Prose(seed)
    site = "Harbour Notes"
    menu = ["Home", "About", "Archives", "Contact"]
    posts = []
    for number in range(24):
        title, _ = prose.story()
        posts.append(
            {
                "title": title,
                "path": f"{2024 - number // 10}/{slug(title)}/",
                "month": MONTHS[number // 2 + number % 3],
                "body": prose.paragraphs(rng.randint(250, 650)),
                "tags": [],
                "category": rng.choice(CATEGORIES),
            }
        )
    tags = [prose.title().split()[0].lower() + f"-{i}" for i in range(20)]
    tag_posts = {tag: rng.sample(posts, rng.choice((1, 2))) for tag in tags}
    for tag, listed in tag_posts.items():
        for post in listed:
            post["tags"].append(tag)
    sidebar = (
        '<div class="sidebar">\n<section class="widget"><h3>Search</h3>'
        '<form action="/search"><input name="q"><button>Search</button></form></section>\n'
        '<section class="widget"><h3>Recent posts</h3><ul>'
        + "".join(f'<li><a href="/{p["path"]}">{p["title"]}</a></li>' for p in posts[:10])
        + '</ul></section>\n<section class="widget"><h3>Archives</h3><ul>'
        + "".join(
            f'<li><a href="/{slug(m)}/">{m}</a> ({1 + (i * 7) % 5})</li>'
            for i, m in enumerate(MONTHS)
        )
        + '</ul></section>\n<section class="widget"><h3>Tags</h3><p class="tagcloud">'
        + " ".join(f'<a href="/tag/{t}/">{t}</a>' for t in tags + EXTRA_TAGS)
        + '</p></section>\n<section class="widget"><h3>Categories</h3><ul>'
        + "".join(f'<li><a href="/category/{slug(c)}/">{c}</a></li>' for c in CATEGORIES)
        + "</ul></section>\n</div>"
    )

    def listing(heading: str, listed: list[dict]) -> str:
        items = "".join(
            f'<article class="excerpt"><h2><a href="/{p["path"]}">{p["title"]}</a></h2>'
            f'<p class="meta">Posted in {p["month"]} in {p["category"]}</p>'
            f"<p>{html_lib.escape(p['body'][0].split('. ')[0])}. "
            f'<a href="/{p["path"]}">Read more</a></p></article>\n'
            for p in listed
        )
        return f'<h1 class="page-title">{heading}</h1>\n{items}'

    pages = []
    for post in posts:
        tag_links = ", ".join(f'<a href="/tag/{t}/">{t}</a>' for t in post["tags"])
        main = (
            f'<article class="post"><h1>{post["title"]}</h1>'
            f'<p class="meta">Posted in {post["month"]} in {post["category"]}</p>\n'
            f'{paras(post["body"])}<p class="tags">Tagged: {tag_links}</p></article>'
        )
        pages.append(
            (
                post["path"] + "index.html",
                shell(site, post["title"], main, menu=menu, aside=sidebar),
            )
        )
    for tag, listed in tag_posts.items():
        main = listing(f"Posts tagged {tag}", listed)
        pages.append(
            (f"tag/{tag}/index.html", shell(site, f"Tag: {tag}", main, menu=menu, aside=sidebar))
        )
    by_month: dict[str, list[dict]] = {}
    for post in posts:
        by_month.setdefault(post["month"], []).append(post)
    for month, listed in by_month.items():
        main = listing(f"Archives: {month}", listed[:2])
        pages.append(
            (f"{slug(month)}/index.html", shell(site, month, main, menu=menu, aside=sidebar))
        )
    return pages


CATEGORIES = [
    "Travel",
    "Food",
    "Markets",
    "Books",
    "Harbour life",
    "Photography",
    "Weather",
    "Letters",
]
EXTRA_TAGS = [
    "sailing",
    "recipes",
    "winter",
    "summer",
    "fishing",
    "ferries",
    "lighthouse",
    "museum",
    "family",
    "gardening",
    "walks",
    "birds",
    "tides",
    "history",
    "festival",
    "music",
    "cycling",
    "rain",
    "coffee",
    "bakery",
]


def shop(seed: int) -> list[tuple[str, str]]:
    rng, prose = random.Random(seed), Prose(seed)
    site = "Northwind Outfitters"
    menu = ["Men", "Women", "Kids", "Outdoor", "Sale"]
    shipping = "Shipping and returns. " + prose.paragraph(130)
    brand = "About the brand. " + prose.paragraph(130)
    names = [prose.title() for _ in range(50)]
    pages = []
    for number, name in enumerate(names):
        others = rng.sample([n for n in names if n != name], 4)
        main = (
            f'<article class="product"><h1>{name}</h1>'
            f'<p class="price">{rng.randint(19, 240)}.{rng.choice((0, 50, 95)):02d} EUR</p>'
            f'<p class="sku">SKU NW-{1000 + number}</p>\n'
            f'<div class="description"><p>{html_lib.escape(prose.paragraph(80))}</p></div>\n'
            f"<h2>Shipping</h2><p>{html_lib.escape(shipping)}</p>\n"
            f"<h2>Our brand</h2><p>{html_lib.escape(brand)}</p></article>\n"
            '<section class="related-products"><h2>You may also like</h2><ul>'
            + "".join(f'<li><a href="/p/{slug(o)}/">{o}</a></li>' for o in others)
            + "</ul></section>"
        )
        pages.append((f"p/{slug(name)}/index.html", shell(site, name, main, menu=menu)))
    return pages


def delivery(seed: int) -> list[tuple[str, str]]:
    prose = Prose(seed)
    site = "The Weekly Ledger"
    menu = ["News", "Business", "Opinion", "Subscribe"]
    first, second = prose.paragraph(110), prose.paragraph(110)
    shared = paras([first, second])
    pages = [
        (
            "delivery-information/index.html",
            shell(site, "Delivery information", f"<article>{shared}</article>", menu=menu),
        )
    ]
    for _ in range(20):
        title, _ = prose.story()
        main = f"<article><h1>{title}</h1>\n{paras(prose.paragraphs(450))}{shared}</article>"
        pages.append((f"news/{slug(title)}/index.html", shell(site, title, main, menu=menu)))
    return pages


def release_notes(seed: int) -> list[tuple[str, str]]:
    rng, prose = random.Random(seed), Prose(seed)
    site = "Quarry Database"
    menu = ["Download", "Documentation", "Releases", "Community"]
    security = prose.paragraphs(220, per=4)
    pages = []
    for minor in range(14):
        version = f"4.{minor}.0"
        fixes = [prose.paragraph(rng.randint(12, 40)) for _ in range(rng.randint(1, 8))]
        parts = [f"<h1>Release {version}</h1>", f"<p>Released {MONTHS[20 - minor]}.</p>"]
        if minor >= 3:
            parts.append(f"<p>{html_lib.escape(prose.paragraph(20))}</p>")
        if minor == 3:
            parts.append("<h2>Security</h2>" + paras(security))
        elif minor > 3 and minor % 4 != 0:
            parts.append("<h2>Security (from release 4.3.0)</h2>" + paras(security))
        parts.append(
            "<h2>Fixes</h2><ul>"
            + "".join(f"<li>{html_lib.escape(f)}</li>" for f in fixes)
            + "</ul>"
        )
        main = f'<article class="release">{"".join(parts)}</article>'
        pages.append(
            (f"releases/{version}.html", shell(site, f"Release {version}", main, menu=menu))
        )
    return pages


VERBS = [
    "read",
    "write",
    "open",
    "close",
    "merge",
    "split",
    "parse",
    "format",
    "encode",
    "decode",
    "load",
    "dump",
    "sort",
    "index",
    "scan",
    "fetch",
    "store",
    "match",
]
NOUNS = [
    "table",
    "record",
    "stream",
    "buffer",
    "block",
    "header",
    "column",
    "page",
    "cursor",
    "schema",
    "journal",
    "snapshot",
    "segment",
    "key",
    "value",
    "row",
]


def reference(seed: int) -> list[tuple[str, str]]:
    rng, prose = random.Random(seed), Prose(seed)
    site = "quarry 4 reference"
    menu = ["Overview", "Functions", "Types", "Errors"]
    note_one = "Note. " + prose.paragraph(120)
    note_two = "Thread safety. " + prose.paragraph(120)
    notes = f'<div class="admonition note"><p>{note_one}</p></div>\n' + (
        f'<div class="admonition warning"><p>{note_two}</p></div>\n'
    )
    names = sorted({f"{rng.choice(VERBS)}_{rng.choice(NOUNS)}" for _ in range(40)})[:24]
    pages = [
        (
            "reference/index.html",
            shell(
                site,
                "Overview",
                f'<div class="body"><h1>Overview</h1><p>{prose.paragraph(15)}</p>{notes}</div>',
                menu=menu,
            ),
        )
    ]
    for name in names:
        args = rng.sample(
            ["path", "size", "offset", "mode", "timeout", "strict", "encoding", "limit"],
            rng.randint(1, 4),
        )
        signature = f"{name}({', '.join(args)}, *, flags=0) -> {name.split('_')[1].title()}"
        example = "\n".join(
            [
                ">>> import quarry",
                f">>> db = quarry.connect('{slug(prose.title())}.qdb')",
                f">>> result = db.{name}({', '.join(repr(a) for a in args)})",
                f">>> result.{rng.choice(NOUNS)}s[{rng.randint(0, 9)}]",
                f"{rng.randint(100, 99999)}",
            ]
        )
        main = (
            f'<div class="body"><h1><code>{name}()</code></h1>\n'
            f"{paras(prose.paragraphs(rng.randint(40, 90)))}"
            f'<h2>Syntax</h2><pre class="syntax">{html_lib.escape(signature)}</pre>\n'
            f'<h2>Example</h2><pre class="example">{html_lib.escape(example)}</pre>\n'
            f"{notes}</div>"
        )
        pages.append((f"reference/{name}.html", shell(site, f"{name}()", main, menu=menu)))
    return pages


BUILDERS = {
    "blog": blog,
    "shop": shop,
    "delivery": delivery,
    "release-notes": release_notes,
    "reference": reference,
}
HOSTS = {
    "blog": "harbournotes.example",
    "shop": "northwind.example",
    "delivery": "weeklyledger.example",
    "release-notes": "quarrydb.example",
    "reference": "docs.quarrydb.example",
}


def site_pages(case: str, seed: int = 41) -> list[tuple[str, str]]:
    """The pages of *case* as ``(url, html)``: generated, written to a temporary folder
    as a site, and read back from it in the order generated."""
    generated = BUILDERS[case](seed)
    with tempfile.TemporaryDirectory(prefix=f"lossless-{case}-") as folder:
        for path, page in generated:
            target = Path(folder) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(page, encoding="utf-8")
        return [
            (
                f"https://{HOSTS[case]}/{path.removesuffix('index.html')}",
                (Path(folder) / path).read_text(encoding="utf-8"),
            )
            for path, _ in generated
        ]
