"""The feed of the thorough benchmark: real documentation and web text with planted copies.

* **Originals**: the text of real pages of ``debian-handbook`` (six languages),
  ``doc-sites`` (Python 3.11, PostgreSQL 15) and ``web-extraction``, as plain text:
  ``<body>`` without script/style/nav/header/footer/aside and without elements whose class
  or id names a sidebar, menu, nav, footer, related, toc or breadcrumb part (the rules of
  :mod:`benchmarks.lossless.truth`), one line per block element. The corpora hold about
  3,300 pages; to reach the number of originals asked for, pages are cut into **sections**
  at their ``h1``-``h3`` headings, consecutive sections joined until a document holds at
  least :data:`MIN_CHARS` characters (a remainder that short is joined to the document
  before it). Pages are cut only as far as needed: each page is either whole or cut,
  never both, so no original contains another by construction.
* A share of the originals (:data:`SQUEEZED`, 30%) is **squeezed** to one line (a scraped
  field, a WET record); the others keep their line breaks.
* **Planted copies**, per kind (:data:`KINDS`), each of an original drawn at random among
  those the edit applies to (:func:`edit`), rendered like its original (lines or one line).
* The feed is shuffled with the seed; a copy that lands before its original is swapped
  with it, so that every copy comes after its original (the first of a pair is the one a
  sequential filter keeps).
"""

from __future__ import annotations

import html as html_lib
import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import lxml.html

from benchmarks.lossless import truth
from benchmarks.lossless.corpora import CORPORA, doc_site, handbook, web_extraction

KINDS = ("deleted paragraph", "appended sentence", "10% cut", "numbers changed")
#: A document (whole page or joined sections) holds at least this many characters.
MIN_CHARS = 1000
#: The share of originals squeezed to one line.
SQUEEZED = 0.3
_HEADINGS = frozenset({"h1", "h2", "h3"})
_SPACE = re.compile(r"[ \t\r\f\v\xa0]+")
_DIGIT = re.compile(r"\d")
_SENTENCE = re.compile(r"[^.!?。！？]{40,220}[.!?。！？]")
#: Marks the first line of a heading block.
HEADING = "\x00"


@dataclass
class Doc:
    url: str
    paragraphs: list[str]
    squeezed: bool = False
    kind: str | None = None  # None for an original
    source: str | None = None  # the original's url, for a copy

    @property
    def text(self) -> str:
        return render(self.paragraphs, self.squeezed)


def render(paragraphs: list[str], squeezed: bool) -> str:
    return (" " if squeezed else "\n").join(paragraphs)


# --- text of a page -------------------------------------------------------------------


def page_blocks(html: str) -> list[str]:
    """The page's text as lines, one per block element (headings h1-h3 marked with
    :data:`HEADING`), chrome removed by the rules of :func:`truth.page_text`."""
    raw = html.encode("utf-8", "surrogatepass")
    if not raw.strip():
        return []
    try:
        root = lxml.html.document_fromstring(raw)
    except (lxml.etree.ParserError, ValueError):
        return []
    body = root.find("body")
    top = body if body is not None else root
    doomed = [
        el
        for el in top.iter()
        if el is not top
        and (
            not isinstance(el.tag, str)
            or el.tag in truth.NEVER_TEXT
            or (
                (
                    el.tag in truth.CHROME_TAGS
                    or truth.is_chrome(el.get("class"))
                    or truth.is_chrome(el.get("id"))
                )
                and not truth.holds_main(el)
            )
        )
    ]
    for el in doomed:
        if el.getparent() is not None:
            el.drop_tree()
    parts: list[str] = []
    _walk(top, parts)
    lines = []
    for line in "".join(parts).split("\n"):
        heading = line.startswith(HEADING) or HEADING in line[:2]
        line = _SPACE.sub(" ", line.replace(HEADING, "")).strip()
        if line:
            lines.append(HEADING + line if heading else line)
    return lines


def _walk(el, parts: list[str]) -> None:
    block = el.tag in truth.BLOCKS
    if block:
        parts.append("\n")
        if el.tag in _HEADINGS:
            parts.append(HEADING)
    if el.text:
        parts.append(el.text if el.tag == "pre" else el.text.replace("\n", " "))
    for child in el:
        if isinstance(child.tag, str):
            _walk(child, parts)
        if child.tail:
            parts.append(child.tail.replace("\n", " "))
    if block:
        parts.append("\n")


def sections(lines: list[str], min_chars: int = MIN_CHARS) -> list[list[str]]:
    """The page's lines cut at its headings, consecutive sections joined until each holds
    *min_chars* characters; a last part shorter than that joins the one before it."""
    cut: list[list[str]] = []
    for line in lines:
        if line.startswith(HEADING) or not cut:
            cut.append([])
        cut[-1].append(line.lstrip(HEADING))
    out: list[list[str]] = []
    for part in cut:
        if out and sum(map(len, out[-1])) < min_chars:
            out[-1].extend(part)
        else:
            out.append(list(part))
    if len(out) > 1 and sum(map(len, out[-1])) < min_chars:
        out[-2].extend(out.pop())
    return out


def corpus_pages() -> list[tuple[str, str]]:
    """Every page of the three corpora, ``(url, html)``, in a fixed order."""
    pages = []
    for site in ("python-3.11", "postgresql-15"):
        pages += [(f"https://docs.example/{key}", html) for key, html in doc_site(site)]
    pages += [
        (f"https://debian-handbook.example/{key}", html)
        for key, html in handbook(("en-US", "hr-HR", "ro-RO", "tr-TR", "zh-CN", "zh-TW"))
    ]
    pages += web_extraction()
    return sorted(pages)


CACHE = Path(__file__).resolve().parent / "cache"


def corpus_blocks() -> list[tuple[str, list[str]]]:
    """:func:`page_blocks` of every page of :func:`corpus_pages` (cached in ``cache/``:
    parsing the 3,300 pages takes a minute of CPU)."""
    path = CACHE / "pages.json"
    if path.exists():
        return [(url, lines) for url, lines in json.loads(path.read_text(encoding="utf-8"))]
    pages = [(url, page_blocks(html)) for url, html in corpus_pages()]
    CACHE.mkdir(exist_ok=True)
    path.write_text(json.dumps(pages, ensure_ascii=False), encoding="utf-8")
    return pages


def originals(n: int, rng: random.Random, min_chars: int = MIN_CHARS) -> list[Doc]:
    """About *n* originals: pages of at least *min_chars* characters, whole, and as many
    of them cut into sections as it takes to reach *n* (all of them when *n* is more than
    that gives)."""
    pages = [(url, lines) for url, lines in corpus_blocks() if sum(map(len, lines)) >= min_chars]
    rng.shuffle(pages)
    cuts = [sections(lines, min_chars) for _, lines in pages]
    total = len(pages)
    split = 0
    while total < n and split < len(pages):
        total += len(cuts[split]) - 1
        split += 1
    docs = []
    if total < n:  # every page cut: fill up with Reuters-21578 stories
        stories = [(url, paras) for url, paras in reuters() if sum(map(len, paras)) >= min_chars]
        docs += [Doc(url, paras) for url, paras in stories[: n - total]]
    for i, (url, lines) in enumerate(pages):
        if i < split and len(cuts[i]) > 1:
            docs += [Doc(f"{url}#s{j}", part) for j, part in enumerate(cuts[i])]
        else:
            docs.append(Doc(url, [line.lstrip(HEADING) for line in lines]))
    rng.shuffle(docs)
    docs = docs[:n]
    for doc in docs:
        doc.squeezed = rng.random() < SQUEEZED
    return docs


def reuters() -> list[tuple[str, list[str]]]:
    """Reuters-21578 stories as ``(url, paragraphs)`` (a paragraph starts on an indented
    line; the closing "Reuter" left out), in the corpus's order."""
    stories = []
    for path in sorted((CORPORA / "reuters21578").glob("reut2-*.sgm")):
        raw = path.read_text(encoding="latin-1")
        for story in re.finditer(r'<REUTERS[^>]*NEWID="(\d+)".*?</REUTERS>', raw, re.DOTALL):
            body = re.search(r"<BODY>(.*?)</BODY>", story.group(0), re.DOTALL)
            if not body:
                continue
            text = html_lib.unescape(body.group(1)).replace("\x03", "").strip()
            text = re.sub(r"\s*\bReuter\s*$", "", text, flags=re.IGNORECASE)
            paragraphs = [
                _SPACE.sub(" ", p.replace("\n", " ")).strip() for p in re.split(r"\n\s+", text)
            ]
            stories.append(
                (f"https://reuters.example/{story.group(1)}", [p for p in paragraphs if p])
            )
    return stories


# --- edits ----------------------------------------------------------------------------


def next_digit(match: re.Match) -> str:
    return str((int(match.group()) + 1) % 10)


def edit(paragraphs: list[str], kind: str, donor: str) -> list[str] | None:
    """The paragraphs of a planted copy of *kind*, or None when the edit does not apply.

    * ``deleted paragraph``: the middle one of the paragraphs of 40+ characters (needs
      four of them);
    * ``appended sentence``: *donor* (a sentence of another document) added as a last
      paragraph;
    * ``10% cut``: the text's last 10% of characters cut, at a word boundary when there is
      one in the last 5% before the cut;
    * ``numbers changed``: every digit d replaced by (d + 1) mod 10 (needs a digit).
    """
    if kind == "deleted paragraph":
        long = [i for i, p in enumerate(paragraphs) if len(p) >= 40]
        if len(long) < 4:
            return None
        gone = long[len(long) // 2]
        return paragraphs[:gone] + paragraphs[gone + 1 :]
    if kind == "appended sentence":
        return [*paragraphs, donor]
    if kind == "10% cut":
        text = "\n".join(paragraphs)
        end = int(len(text) * 0.9)
        space = max(text.rfind(" ", 0, end), text.rfind("\n", 0, end))
        if space >= end - len(text) * 0.05:
            end = space
        return [p for p in text[:end].rstrip().split("\n") if p]
    if kind == "numbers changed":
        if not any(_DIGIT.search(p) for p in paragraphs):
            return None
        return [_DIGIT.sub(next_digit, p) for p in paragraphs]
    raise ValueError(kind)


def sentences(paragraphs: list[str]) -> list[str]:
    """Sentences of 40-220 characters of a document (candidates for an appended one)."""
    return [m.group().strip() for p in paragraphs for m in _SENTENCE.finditer(p)]


def build(
    n_originals: int, copies_per_kind: int, seed: int = 41, min_chars: int = MIN_CHARS
) -> list[Doc]:
    """The feed: originals and planted copies, shuffled, every copy after its original."""
    rng = random.Random(seed)
    docs = originals(n_originals, rng, min_chars)
    copies: list[Doc] = []
    for kind in KINDS:
        order = list(range(len(docs)))
        rng.shuffle(order)
        made = 0
        for i in order:
            if made >= copies_per_kind:
                break
            original = docs[i]
            donor = ""
            if kind == "appended sentence":
                donor_doc = docs[rng.randrange(len(docs))]
                found = sentences(donor_doc.paragraphs) if donor_doc is not original else []
                if not found:
                    continue
                donor = rng.choice(found)
            paragraphs = edit(original.paragraphs, kind, donor)
            if paragraphs is None or render(paragraphs, False) == render(
                original.paragraphs, False
            ):
                continue
            slug = kind.split()[0].strip("%")
            copies.append(
                Doc(
                    f"{original.url}~{slug}",
                    paragraphs,
                    original.squeezed,
                    kind,
                    original.url,
                )
            )
            made += 1
    feed = docs + copies
    rng.shuffle(feed)
    return copies_after_originals(feed)


def copies_after_originals(feed: list[Doc]) -> list[Doc]:
    """*feed* with every copy that comes before its original swapped with it."""
    feed = list(feed)
    where = {doc.url: i for i, doc in enumerate(feed)}
    for i in range(len(feed)):
        doc = feed[i]
        if doc.source is None:
            continue
        j = where[doc.source]
        if j > i:
            feed[i], feed[j] = feed[j], feed[i]
            where[feed[i].url], where[feed[j].url] = i, j
    # a swap can move another copy of the same original before it: repeat until none is
    if any(where[d.source] > i for i, d in enumerate(feed) if d.source is not None):
        return copies_after_originals(feed)
    return feed


def write(feed: list[Doc], path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for doc in feed:
            out.write(json.dumps({"url": doc.url, "text": doc.text}, ensure_ascii=False) + "\n")


def have_corpora() -> bool:
    return all(
        (CORPORA / part).exists()
        for part in ("debian-handbook", "doc-sites", "web-extraction/pages.tar.xz")
    )


def describe(feed: list[Doc]) -> Iterator[str]:
    kinds = {kind: sum(d.kind == kind for d in feed) for kind in KINDS}
    n = sum(d.kind is None for d in feed)
    yield f"{n} originals ({sum(d.squeezed for d in feed if d.kind is None)} on one line)"
    yield ", ".join(f"{v} {k}" for k, v in kinds.items())
