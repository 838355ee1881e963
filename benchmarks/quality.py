"""How right are the fingerprints? Precision, recall and F1 on real pages, against peers.

    python benchmarks/quality.py              # ../shared/corpora: Handbook, Reuters, zh pairs
    python benchmarks/quality.py --quick      # a subset, in under two minutes
    python benchmarks/quality.py --pages DIR  # your own .html/.txt files
    python benchmarks/quality.py --anchors-only  # ours with and without anchors, MinHash LSH

Every method sees the same documents and calls a pair a duplicate in its own way:

* ours: ``scrapy_simhash`` by distance only (``SIMHASH_ANCHORS = False``: main text by
  SIMHASH_EXTRACTOR, TF-IDF top 128, 64-bit SimHash, distance <= 3; texts with fewer than 20
  distinct terms match exactly); also with the other extractors (``trafilatura``, ``none``);
* ours, anchors: at its defaults: the same, or one text contained in the other by its
  paragraph anchors (``scrapy_simhash.anchors``). Over all pairs of a corpus, an anchor
  held by more than ``MAX_ANCHOR_PAGES + 1`` of its documents is boilerplate (an index
  counts the pages stored before; a corpus at once is the same once it is in);
* ``simhash`` package: ``Simhash(text)`` with its defaults (character 4-grams), distance <= 3;
* trafilatura: ``trafilatura.deduplication.Simhash(text)``, distance <= 3;
* MinHash LSH: datasketch ``MinHashLSH(threshold=0.8, num_perm=128)`` over the same
  shingles as the ground truth (so it estimates the very measure the truth is defined by).

Peers get the main text of each page as the built-in extractor gives it, so that the
comparison is about fingerprinting; the extractor rows compare text extraction.

Ground truth, from the text itself: tokens are lower-cased words (scripts with spaces) and
single Han characters; shingles are 4 consecutive tokens; a pair is a near-duplicate when
the Jaccard similarity of the two shingle sets, computed exactly, is >= 0.8. The truth text
of an HTML page is all of its visible text minus the Debian Handbook's own template
(``#banner``, ``#title``, ``.docnav``; on other pages nothing is removed). All pairs with
Jaccard >= 0.8 are found exactly (prefix filtering), and every pair a method flags is scored.

Sections: (a) recall by edit kind on real pages; (b)+(c) precision/recall/F1 over all pairs
of distinct real pages, where the natural near-duplicates (untranslated handbook chapters,
re-sent Reuters stories) are the positives and same-template pages the traps; (d) short
texts (LCQMC, PAWS-X): the exact-match path, and what SimHash would have said.
"""

from __future__ import annotations

import argparse
import html as html_lib
import math
import random
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import lxml.html
import mmh3
import numpy as np

from scrapy_simhash.analysis.fingerprint import Fingerprinter, simhash
from scrapy_simhash.analysis.terms import TermExtractor
from scrapy_simhash.anchors import DEFAULT_ANCHORS, MAX_ANCHOR_PAGES, contained
from scrapy_simhash.dedup import Analyser
from scrapy_simhash.extract.extractors import get_extractor, visible_text
from scrapy_simhash.extract.text import exact_form, normalize_text
from scrapy_simhash.index.rule import Candidate, Probe, decide
from scrapy_simhash.sketch import DEFAULT_MIN_SHARE

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"
MAX_DISTANCE = 3
SHINGLE = 4
JACCARD = 0.8
HANDBOOK_LANGUAGES = ["en-US", "hr-HR", "ro-RO", "tr-TR", "zh-CN", "zh-TW"]

# ---------------------------------------------------------------------------- documents


@dataclass
class Doc:
    name: str
    html: str | None  # None for plain-text documents
    text: str = ""  # main text (built-in extractor), what peers see
    truth: frozenset[int] = field(default_factory=frozenset)  # ground-truth shingles


_TRUTH_TOKENS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]|[^\W\u3400-\u9fff\uf900-\ufaff]+")


def shingles(text: str) -> frozenset[int]:
    """The set of SHINGLE-token shingles of *text*, each as a stable 64-bit hash."""
    tokens = _TRUTH_TOKENS.findall(text.lower())
    if not tokens:
        return frozenset()
    spans = (
        [tokens]
        if len(tokens) < SHINGLE
        else (tokens[i : i + SHINGLE] for i in range(len(tokens) - SHINGLE + 1))
    )
    return frozenset(mmh3.hash64("\x1f".join(span))[0] for span in spans)


def truth_text(doc_html: str | None, text: str) -> str:
    if doc_html is None:
        return text
    root = lxml.html.document_fromstring(doc_html.encode("utf-8"))
    for element in root.xpath(
        "//*[@id='banner' or @id='title' or contains(concat(' ', @class, ' '), ' docnav ')]"
    ):
        element.drop_tree()
    return visible_text(lxml.html.tostring(root, encoding="unicode"), remove_boilerplate=False)


def make_doc(name: str, raw: str, is_html: bool) -> Doc:
    doc_html = raw if is_html else None
    text = get_extractor("builtin")(raw) if is_html else raw
    return Doc(name, doc_html, text, shingles(normalize_text(truth_text(doc_html, text))))


def jaccard(a: frozenset[int], b: frozenset[int]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def handbook_docs(langs: Iterable[str], limit: int | None = None) -> list[Doc]:
    docs = []
    for lang in langs:
        files = sorted((CORPORA / "debian-handbook" / lang).glob("*.html"))[:limit]
        docs += [make_doc(f"{lang}/{f.name}", f.read_text(encoding="utf-8"), True) for f in files]
    return docs


def reuters_docs(files: int) -> list[Doc]:
    docs = []
    for path in sorted((CORPORA / "reuters21578").glob("reut2-*.sgm"))[:files]:
        raw = path.read_text(encoding="latin-1")
        for story in re.finditer(r'<REUTERS[^>]*NEWID="(\d+)".*?</REUTERS>', raw, re.DOTALL):
            body = re.search(r"<BODY>(.*?)</BODY>", story.group(0), re.DOTALL)
            if body:
                text = html_lib.unescape(body.group(1)).replace("\x03", "").strip()
                text = re.sub(r"\s*\bReuter\s*$", "", text, flags=re.IGNORECASE)
                docs.append(make_doc(f"reuters/{story.group(1)}", text, False))
    return docs


def user_docs(directory: Path) -> list[Doc]:
    files = sorted(p for p in directory.rglob("*") if p.suffix in (".html", ".htm", ".txt"))
    return [
        make_doc(str(p.relative_to(directory)), p.read_text("utf-8", "replace"), p.suffix != ".txt")
        for p in files
    ]


# ------------------------------------------------------------------------------ methods


class Method:
    """Signs documents; flags pairs of signatures as duplicates."""

    name = ""

    def sign(self, doc: Doc) -> object:
        raise NotImplementedError

    def flagged(self, signatures: list) -> set[tuple[int, int]]:
        """All pairs (i < j) this method calls duplicates."""
        raise NotImplementedError

    def same(self, a: object, b: object) -> bool:
        return bool(self.flagged([a, b]))


def _pairs_within(values: list[int | None], distance: int) -> set[tuple[int, int]]:
    """Index pairs of 64-bit values within *distance* bits (None never matches)."""
    ids = [i for i, v in enumerate(values) if v is not None]
    array = np.array([values[i] for i in ids], dtype=np.uint64)
    found = set()
    for k in range(len(ids) - 1):
        near = np.nonzero(np.bitwise_count(array[k + 1 :] ^ array[k]) <= distance)[0]
        found.update((ids[k], ids[k + 1 + j]) for j in near)
    return found


def _pairs_equal(values: list[object | None]) -> set[tuple[int, int]]:
    groups: dict[object, list[int]] = defaultdict(list)
    for i, v in enumerate(values):
        if v is not None:
            groups[v].append(i)
    return {(a, b) for g in groups.values() for x, a in enumerate(g) for b in g[x + 1 :]}


class Ours(Method):
    def __init__(self, extractor: str = "builtin", **params) -> None:
        self.extract = get_extractor(extractor)
        min_terms = params.pop("min_terms", 20)
        self.dedup = Analyser(
            Fingerprinter(segmenter="auto", **params), min_terms=min_terms, anchors=0
        )
        label = ", ".join(f"{k}={v}" for k, v in params.items())
        self.name = f"ours ({extractor}{', ' + label if label else ''})"
        self.extractor_name = extractor

    def text(self, doc: Doc) -> str:
        """The text analysed: the built-in extractor's is the document's own text."""
        if doc.html is None or self.extractor_name == "builtin":
            return doc.text
        return self.extract(doc.html)

    def sign(self, doc: Doc) -> object:
        analysis = self.dedup.analyse(self.text(doc))
        return (analysis.kind, analysis.value)

    @staticmethod
    def flagged(signatures, distance: int = MAX_DISTANCE):
        near = _pairs_within([v if k == "simhash" else None for k, v in signatures], distance)
        exact = _pairs_equal([v if k == "short" else None for k, v in signatures])
        return near | exact

    @staticmethod
    def distance(a, b) -> int:
        """Bits between two signatures; short texts are 0 apart or never near (99)."""
        (kind_a, value_a), (kind_b, value_b) = a, b
        if kind_a != kind_b or kind_a == "empty":
            return 99
        if kind_a == "short":
            return 0 if value_a == value_b else 99
        return (value_a ^ value_b).bit_count()


class OursAnchors(Ours):
    """Ours at its defaults: by distance, or by containment (paragraph anchors)."""

    def __init__(self, extractor: str = "builtin") -> None:
        super().__init__(extractor)
        self.dedup.anchors = DEFAULT_ANCHORS
        self.name = f"ours ({extractor}, anchors)"

    def sign(self, doc: Doc) -> object:
        analysis = self.dedup.analyse(self.text(doc))
        return (analysis.kind, analysis.value, analysis.anchors)

    @staticmethod
    def flagged(signatures, distance: int = MAX_DISTANCE):
        found = Ours.flagged([(k, v) for k, v, _ in signatures], distance)
        holders: dict[int, list[int]] = defaultdict(list)
        for i, (_, _, anchors) in enumerate(signatures):
            for h in anchors.hashes if anchors else ():
                holders[h].append(i)
        shared: Counter[tuple[int, int]] = Counter()
        for docs in holders.values():
            if len(docs) <= MAX_ANCHOR_PAGES + 1:
                shared.update((a, b) for x, a in enumerate(docs) for b in docs[x + 1 :])
        for (a, b), count in shared.items():
            if count >= 2 and (a, b) not in found:
                mine, theirs = signatures[a][2], signatures[b][2]
                hashes, chars = mine.shared_with(theirs.hashes)
                if contained(len(hashes), chars, mine.summary, theirs.summary):
                    found.add((a, b))
        return found


class OursShared(OursAnchors):
    """Ours at its defaults: a pair found by distance or by paragraph anchors, confirmed
    by the share check (``SIMHASH_MIN_SHARE``) of the later page held by the earlier, as
    the crawl's one rule (``scrapy_simhash.index.rule.decide``) says."""

    def __init__(self, extractor: str = "builtin") -> None:
        super().__init__(extractor)
        self.name = f"ours ({extractor}, anchors and share check)"

    def sign(self, doc: Doc) -> object:
        analysis = self.dedup.analyse(self.text(doc))
        return (analysis.kind, analysis.value, analysis.anchors, analysis.sketch)

    @staticmethod
    def flagged(signatures, distance: int = MAX_DISTANCE):
        bare = [(kind, value, anchors) for kind, value, anchors, _ in signatures]
        candidates = Ours.flagged([(k, v) for k, v, _ in bare], distance)
        holders: dict[int, list[int]] = defaultdict(list)
        for i, (_, _, anchors) in enumerate(bare):
            for h in anchors.hashes if anchors else ():
                holders[h].append(i)
        for docs in holders.values():
            if len(docs) <= MAX_ANCHOR_PAGES + 1:
                candidates.update((a, b) for x, a in enumerate(docs) for b in docs[x + 1 :])
        return {pair for pair in candidates if _confirmed(signatures, *pair, distance)}


def _confirmed(signatures, a: int, b: int, distance: int) -> bool:
    """Whether the crawl's rule drops page *b* checked with page *a* stored."""
    kind_a, value_a, anchors_a, sketch_a = signatures[a]
    kind_b, value_b, anchors_b, sketch_b = signatures[b]
    if kind_a != kind_b or kind_a == "empty":
        return False
    if kind_a == "short":
        return value_a == value_b
    apart = (value_a ^ value_b).bit_count()
    stored = sketch_a.stored() if sketch_a else None
    near = Candidate(a, "a", value_a, 0.0, a, apart, sketch=stored)
    found = [near]
    if anchors_a and anchors_b:
        shared, _ = anchors_b.shared_with(anchors_a.hashes)
        found.append(
            replace(near, found="contained", shared=tuple(shared), summary=anchors_a.summary)
        )
    probe = Probe("b", value_b, anchors_b, sketch_b)
    return (
        decide(probe, found, max_distance=distance, min_share=DEFAULT_MIN_SHARE).candidate
        is not None
    )


class SimhashPackage(Method):
    name = "simhash package (defaults)"

    def __init__(self) -> None:
        from simhash import Simhash

        class Patched(Simhash):
            # Under numpy 2 the package overflows uint8 for a feature seen over 255 times
            # (OverflowError); this computes what it computes under numpy 1.
            @staticmethod
            def _bitarray_from_bytes(b):
                return np.unpackbits(np.frombuffer(b, dtype=">B")).astype(np.int64)

        self.simhash = Patched

    def sign(self, doc):
        return self.simhash(doc.text).value if doc.text.strip() else None

    def flagged(self, signatures):
        return _pairs_within(signatures, MAX_DISTANCE)


class TrafilaturaSimhash(Method):
    name = "trafilatura Simhash"

    def __init__(self) -> None:
        from trafilatura.deduplication import Simhash

        self.simhash = Simhash

    def sign(self, doc):
        return self.simhash(doc.text).hash if doc.text.strip() else None

    def flagged(self, signatures):
        return _pairs_within(signatures, MAX_DISTANCE)


class MinHashLSH(Method):
    name = f"MinHash LSH (datasketch, threshold {JACCARD}, 128 perm)"

    def __init__(self) -> None:
        from datasketch import MinHash, MinHashLSH

        self.minhash, self.lsh = MinHash, MinHashLSH

    def sign(self, doc):
        if not doc.truth:
            return None
        m = self.minhash(num_perm=128, seed=1)
        m.update_batch([s.to_bytes(8, "little", signed=True) for s in doc.truth])
        return m

    def flagged(self, signatures):
        lsh = self.lsh(threshold=JACCARD, num_perm=128)
        found = set()
        for i, m in enumerate(signatures):
            if m is None:
                continue
            found.update((j, i) for j in lsh.query(m))
            lsh.insert(i, m)
        return found


def methods(extractors: bool, peers: bool = True) -> list[Method]:
    chosen: list[Method] = [Ours("builtin"), OursAnchors("builtin")]
    if extractors:
        chosen += [Ours("trafilatura"), Ours("none")]
    if not peers:  # the peers are not even built: their packages need not be installed
        return chosen
    return [*chosen, SimhashPackage(), TrafilaturaSimhash(), MinHashLSH()]


# ---------------------------------------------------------------------- ground truth


def true_pairs(docs: list[Doc]) -> set[tuple[int, int]]:
    """All pairs with shingle Jaccard >= JACCARD, exactly, by prefix filtering."""
    frequency = Counter(s for d in docs for s in d.truth)
    index: dict[int, list[int]] = defaultdict(list)
    candidates: set[tuple[int, int]] = set()
    for i, doc in enumerate(docs):
        if not doc.truth:
            continue
        ordered = sorted(doc.truth, key=lambda s: (frequency[s], s))
        prefix = len(ordered) - math.ceil(JACCARD * len(ordered)) + 1
        for s in ordered[:prefix]:
            for j in index[s]:
                candidates.add((j, i))
            index[s].append(i)
    return {(a, b) for a, b in candidates if jaccard(docs[a].truth, docs[b].truth) >= JACCARD}


#: A pair whose smaller text has this share of its shingles in the larger is a copy too,
#: in the truth that counts containment (a truncated copy, one with text added around it).
CONTAINED = 0.9


def contained_pairs(docs: list[Doc], share: float = CONTAINED) -> set[tuple[int, int]]:
    """All pairs where the text with fewer shingles has at least *share* of them in the
    other, exactly (prefix filtering on the smaller text's rarest shingles)."""
    frequency = Counter(s for d in docs for s in d.truth)
    holders: dict[int, list[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        for s in doc.truth:
            holders[s].append(i)
    found = set()
    for i, doc in enumerate(docs):
        if not doc.truth:
            continue
        ordered = sorted(doc.truth, key=lambda s: (frequency[s], s))
        prefix = len(ordered) - math.ceil(share * len(ordered)) + 1
        candidates = {j for s in ordered[:prefix] for j in holders[s] if j != i}
        for j in candidates:
            other = docs[j].truth
            if len(other) >= len(doc.truth) and len(doc.truth & other) >= share * len(doc.truth):
                found.add((min(i, j), max(i, j)))
    return found


# ------------------------------------------------------------------------------ edits

AD = {
    "en": "Sponsored: Save 40% on cloud hosting this month. Fast servers, free migration, "
    "24/7 support. Sign up today at our partner's site and get your first month free.",
    "zh": "广告：本月云服务器限时优惠四折，高速稳定，免费迁移，全天候客服支持。"
    "立即注册，首月免费试用。",
}
COMMENTS = {
    "en": [
        "Great article, thanks for sharing! This helped me fix my setup.",
        "I disagree with the second point, in my experience it works differently.",
        "Does anyone know if this still applies to the latest release?",
    ],
    "zh": [
        "写得很好，谢谢分享！帮我解决了问题。",
        "第二点我不太同意，我的经验不一样。",
        "请问这在最新版本里还适用吗？",
    ],
}
TEMPLATE = (
    '<div class="site-header"><div class="logo">Linux Docs Mirror</div><div class="menu">'
    "<a href='/'>Home</a> | <a href='/news'>News</a> | <a href='/guides'>Guides</a> | "
    "<a href='/forum'>Forum</a> | <a href='/about'>About us</a> | <a href='/contact'>Contact</a>"
    "</div></div>"
)
FOOTER = (
    '<div class="site-footer">Copyright 2024 Linux Docs Mirror. All rights reserved. '
    "Privacy policy | Terms of use | Cookie settings | Sitemap</div>"
)
#: What a repost appends (a source line, a notice with a date) and what a syndicated copy
#: puts before the text (its own headline, a byline).
REPOST_LINES = {
    "en": [
        "Source: Example Wire Service. Copyright 2024 Example Media. All rights reserved.",
        "Read more: https://news.example/2024/03/15/story-12345",
    ],
    "zh": ["转载请注明出处：本文来源于某某网", "2024-03-15 10:23:45 责任编辑：王小明"],
}
BYLINE = {
    "en": "By Staff Writer, with wire reports | March 15, 2024",
    "zh": "本报记者 李明 报道",
}
_NUMBER = re.compile(r"\d+")
_TEMPLATE_XPATH = (
    "//nav|//header|//footer|//*[@id='banner' or @id='title' or contains(@class, 'docnav') "
    "or contains(@class, 'nav') or contains(@class, 'menu') or contains(@id, 'nav')]"
)


def _bump(match: re.Match) -> str:
    return str(int(match.group()) + 7)


def _lang(name: str, text: str) -> str:
    return "zh" if len(re.findall(r"[\u4e00-\u9fff]", text[:2000])) > 50 else "en"


def _html_paragraphs(root) -> list:
    found = []
    for el in root.iter("p", "div"):
        if el.tag == "div" and "para" not in (el.get("class") or ""):
            continue
        if el.xpath("ancestor::*[contains(@class, 'docnav') or @id='title']"):
            continue
        if len(el.text_content().strip()) >= 40:
            found.append(el)
    return found


def _fragment(markup: str):
    return lxml.html.fragment_fromstring(markup)


def edit_html(doc_html: str, kind: str, lang: str, donor: str, rng: random.Random) -> str | None:
    root = lxml.html.document_fromstring(doc_html.encode("utf-8"))
    paras = _html_paragraphs(root)
    if len(paras) < 6:
        return None
    middle = paras[len(paras) // 2]
    if kind == "delete paragraph":
        middle.drop_tree()
    elif kind == "insert paragraph":
        middle.addnext(_fragment(f"<p>{html_lib.escape(donor)}</p>"))
    elif kind == "insert ad block":
        paras[len(paras) // 3].addnext(_fragment(f'<div class="ad">{AD[lang]}</div>'))
    elif kind == "insert comment block":
        items = "".join(f"<li><b>user{i}</b> {c}</li>" for i, c in enumerate(COMMENTS[lang]))
        paras[-1].addnext(_fragment(f'<div class="comments"><ul>{items}</ul></div>'))
    elif kind == "change date/number":
        # Every number in the first paragraph that has numbers, or a date line added.
        with_numbers = [p for p in paras if _NUMBER.search(p.text_content())]
        target = with_numbers[0] if with_numbers else None
        if target is None:
            paras[0].addprevious(_fragment("<p>Last updated: 2024-03-15</p>"))
        else:
            for el in target.iter():
                if el.text:
                    el.text = _NUMBER.sub(_bump, el.text)
                if el is not target and el.tail:
                    el.tail = _NUMBER.sub(_bump, el.tail)
    elif kind == "repost lines appended":
        for line in REPOST_LINES[lang]:
            paras[-1].addnext(_fragment(f"<p>{html_lib.escape(line)}</p>"))
    elif kind == "headline + byline added":
        paras[0].addprevious(_fragment(f"<p>{html_lib.escape(headline(donor, lang))}</p>"))
        paras[0].addprevious(_fragment(f"<p>{html_lib.escape(BYLINE[lang])}</p>"))
    elif kind == "every number changed":
        if not _NUMBER.search(root.text_content()):
            return None
        for el in root.iter():
            if isinstance(el.tag, str) and el.tag not in ("script", "style"):
                if el.text:
                    el.text = _NUMBER.sub(_bump, el.text)
                if el.tail:
                    el.tail = _NUMBER.sub(_bump, el.tail)
    elif kind == "change template":
        for el in root.xpath(_TEMPLATE_XPATH):
            if el.getparent() is not None:
                el.drop_tree()
        body = root.find("body")
        body.insert(0, _fragment(TEMPLATE))
        body.append(_fragment(FOOTER))
    elif kind.startswith("truncate"):
        share = 0.10 if "10" in kind else 0.25
        total = sum(len(p.text_content()) for p in paras)
        cut = 0
        for p in reversed(paras):
            if cut >= share * total:
                break
            cut += len(p.text_content())
            p.drop_tree()
    else:
        raise ValueError(kind)
    return lxml.html.tostring(root, encoding="unicode")


def edit_text(text: str, kind: str, lang: str, donor: str, rng: random.Random) -> str | None:
    paras = [p for p in re.split(r"\n\s+|\n\n", text) if p.strip()]
    if len(paras) < 4:
        return None
    mid = len(paras) // 2
    if kind == "delete paragraph":
        del paras[mid]
    elif kind == "insert paragraph":
        paras.insert(mid, donor)
    elif kind == "insert ad block":
        paras.insert(len(paras) // 3, AD[lang])
    elif kind == "insert comment block":
        paras += COMMENTS[lang]
    elif kind == "change date/number":
        i = next((i for i, p in enumerate(paras) if _NUMBER.search(p)), None)
        if i is None:
            paras.insert(0, "Last updated: 2024-03-15")
        else:
            paras[i] = _NUMBER.sub(_bump, paras[i])
    elif kind == "repost lines appended":
        paras += REPOST_LINES[lang]
    elif kind == "headline + byline added":
        paras[:0] = [headline(donor, lang), BYLINE[lang]]
    elif kind == "every number changed":
        if not _NUMBER.search(text):
            return None
        paras = [_NUMBER.sub(_bump, p) for p in paras]
    elif kind == "change template":
        return None
    elif kind.startswith("truncate"):
        share = 0.10 if "10" in kind else 0.25
        total = sum(map(len, paras))
        while paras and total - sum(map(len, paras)) < share * total:
            paras.pop()
    return "\n".join(paras)


def headline(donor: str, lang: str) -> str:
    """Another text's first words as a headline: a syndicated copy's own title."""
    if lang == "zh":
        return donor[:18]
    return " ".join(donor.split()[:9]).rstrip(".,;:")


EDITS = [
    "repost lines appended",
    "headline + byline added",
    "delete paragraph",
    "insert paragraph",
    "insert ad block",
    "insert comment block",
    "change date/number",
    "change template",
    "every number changed",
    "truncate 10%",
    "truncate 25%",
]


def edited_pairs(docs: list[Doc], seed: int = 7) -> dict[str, list[tuple[Doc, Doc]]]:
    rng = random.Random(seed)
    out: dict[str, list[tuple[Doc, Doc]]] = {k: [] for k in [*EDITS, SHORT_EDIT]}
    for n, doc in enumerate(docs):
        lang = _lang(doc.name, doc.text)
        donor_doc = docs[(n + len(docs) // 2) % len(docs)]
        donor_paras = [p for p in donor_doc.text.split("\n") if len(p) > 80] or [AD[lang]]
        donor = rng.choice(donor_paras)
        for kind in EDITS:
            if doc.html is not None:
                new = edit_html(doc.html, kind, lang, donor, rng)
                if new is not None:
                    out[kind].append((doc, make_doc(doc.name + "~", new, True)))
            else:
                new = edit_text(doc.text, kind, lang, donor, rng)
                if new is not None:
                    out[kind].append((doc, make_doc(doc.name + "~", new, False)))
        short = short_page(doc.text, rng)
        if short is not None:
            out[SHORT_EDIT].append(
                (
                    make_doc(doc.name + "<", short[0], False),
                    make_doc(doc.name + "<~", short[1], False),
                )
            )
    return out


#: Texts just above SIMHASH_MIN_TERMS are the most fragile: one word is 1/20 to 1/45 of them.
SHORT_EDIT = "one word changed, short page (20-45 terms)"
_TERMS = TermExtractor()
_LATIN_WORD = re.compile(r"\b[^\W\d_]{4,}\b")


def short_page(text: str, rng: random.Random) -> tuple[str, str] | None:
    """The first lines of *text* that hold 20 to 45 distinct terms, and the same with one
    word replaced (a Latin word, or two Han characters); None if no such start exists."""
    lines: list[str] = []
    for line in text.split("\n"):
        lines.append(line)
        if len(_TERMS.term_counts("\n".join(lines))) >= 25:
            break
    short = "\n".join(lines)
    if not 20 <= len(_TERMS.term_counts(short)) <= 45:
        return None
    words = _LATIN_WORD.findall(short)
    if words:
        word = rng.choice(words)
        return short, re.sub(rf"\b{re.escape(word)}\b", "zebra", short, count=1)
    han = re.findall(r"[\u4e00-\u9fff]{2}", short)
    if not han:
        return None
    return short, short.replace(rng.choice(han), "斑马", 1)


# ---------------------------------------------------------------------------- reports


def table(header: list[str], rows: list[list[object]]) -> str:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|",
    ]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def scores(flagged: set, truth: set) -> tuple[float, float, float]:
    """Precision, recall and F1 of the *flagged* pairs against the *truth*."""
    tp = len(flagged & truth)
    precision = tp / len(flagged) if flagged else 1.0
    recall = tp / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def section_edits(docs: list[Doc], chosen: list[Method]) -> dict[str, list[tuple[Doc, Doc]]]:
    """Print the recall of each edit kind; return the edited pairs."""
    pairs = edited_pairs(docs)
    print("\n## (a) Recall by edit kind: share of edited copies still within the threshold\n")
    header = ["edit", "pairs", "median Jaccard"] + [m.name for m in chosen]
    rows = []
    by_length: list[list[object]] = []
    signs: dict[tuple[int, int], object] = {}
    for kind, kind_pairs in pairs.items():
        if not kind_pairs:
            continue
        js = [jaccard(a.truth, b.truth) for a, b in kind_pairs]
        row: list[object] = [kind, len(kind_pairs), f"{statistics.median(js):.2f}"]
        for mi, m in enumerate(chosen):
            found = []
            for a, b in kind_pairs:
                key = (mi, id(a))
                if key not in signs:
                    signs[key] = m.sign(a)
                found.append(m.same(signs[key], m.sign(b)))
            row.append(pct(sum(found) / len(kind_pairs)))
            if isinstance(m, Ours) and m.extractor_name == "builtin":
                by_length.append([kind, _anchors_label(m), *_recall_by_length(kind_pairs, found)])
        rows.append(row)
    print(table(header, rows))
    print("\n## (a2) Ours, with and without anchors: the same recall by length of the original\n")
    print(
        "The same edit is a larger share of a shorter text: a paragraph is a tenth of a "
        "2,000-character page and a fiftieth of a 10,000-character one.\n"
    )
    bands = [*(f"{label} chars" for label, _ in LENGTH_BANDS), "all >= 2,000 chars"]
    print(table(["edit", "anchors", *bands], by_length))
    return pairs


def _anchors_label(method: Ours) -> str:
    return "on" if isinstance(method, OursAnchors) else "off"


#: Bands of the original text's length (characters of its main text), for (a2).
LENGTH_BANDS = [
    ("< 2,000", 2000),
    ("2,000-5,000", 5000),
    ("5,000-10,000", 10000),
    (">= 10,000", 1 << 62),
]


def _recall_by_length(pairs: list[tuple[Doc, Doc]], found: list[bool]) -> list[str]:
    """'hits/pairs share' of *found* in each of the :data:`LENGTH_BANDS` of the original."""
    cells = []
    low = 0
    for _, high in LENGTH_BANDS:
        band = [ok for (a, _), ok in zip(pairs, found, strict=True) if low <= len(a.text) < high]
        cells.append(f"{sum(band)}/{len(band)} {pct(sum(band) / len(band))}" if band else "-")
        low = high
    band = [ok for (a, _), ok in zip(pairs, found, strict=True) if len(a.text) >= 2000]
    cells.append(f"{sum(band)}/{len(band)} {pct(sum(band) / len(band))}" if band else "-")
    return cells


def section_pairs(
    title: str,
    docs: list[Doc],
    chosen: list[Method],
    note: str = "",
    truth: set[tuple[int, int]] | None = None,
) -> dict:
    """Print each method's scores over all pairs of *docs* (*truth*: their true pairs,
    computed here when not given)."""
    start = time.perf_counter()
    truth = true_pairs(docs) if truth is None else truth
    identical = {(a, b) for a, b in truth if docs[a].truth == docs[b].truth}
    n = len(docs)
    print(f"\n## {title}\n")
    print(
        f"{n} documents, {n * (n - 1) // 2:,} pairs; {len(truth)} near-duplicate pairs "
        f"(shingle Jaccard >= {JACCARD}), {len(truth) - len(identical)} of them not "
        f"identical. {note}\n"
    )
    rows = []
    results = {}
    for m in chosen:
        t = time.perf_counter()
        flagged = m.flagged([m.sign(d) for d in docs])
        tp = flagged & truth
        precision, recall, f1 = scores(flagged, truth)
        nonident = truth - identical
        r_ni = len(tp & nonident) / len(nonident) if nonident else 1.0
        fp = flagged - truth
        rows.append(
            [
                m.name,
                len(flagged),
                len(fp),
                f"{precision:.3f}",
                f"{recall:.3f}",
                f"{f1:.3f}",
                f"{r_ni:.3f}",
                f"{time.perf_counter() - t:.1f}",
            ]
        )
        results[m.name] = (flagged, truth)
    print(
        table(
            [
                "method",
                "flagged",
                "false pos.",
                "precision",
                "recall",
                "F1",
                "recall (not identical)",
                "s",
            ],
            rows,
        )
    )
    print(f"\n({time.perf_counter() - start:.0f} s)")
    wider = truth | contained_pairs(docs)
    print(
        f"\nWith a truth that counts containment too ({len(wider) - len(truth)} more pairs "
        f"where {CONTAINED:.0%} of the smaller text's shingles are in the larger: truncated "
        "copies, copies with text added around them):\n"
    )
    print(
        table(
            ["method", "flagged", "false pos.", "precision", "recall", "F1"],
            [
                [
                    name,
                    len(flagged),
                    len(flagged - wider),
                    *(f"{x:.3f}" for x in scores(flagged, wider)),
                ]
                for name, (flagged, _) in results.items()
            ],
        )
    )
    if SHOW_FALSE_POSITIVES:
        flagged, _ = results[chosen[0].name]
        print(f"\n{chosen[0].name}'s false positives (shingle Jaccard, pages):\n")
        for a, b in sorted(flagged - truth):
            print(f"- {jaccard(docs[a].truth, docs[b].truth):.2f} {docs[a].name} ~ {docs[b].name}")
        if not flagged - truth:
            print("(none)")
    return results


#: Set by ``--false-positives``: list the first method's false pairs under each corpus.
SHOW_FALSE_POSITIVES = False


def section_natural(docs: list[Doc], results: dict) -> None:
    """Untranslated handbook chapters vs en-US: same file name, other language."""
    by_name = {d.name: i for i, d in enumerate(docs)}
    rows = []
    for lang in ("hr-HR", "ro-RO", "tr-TR"):
        pairs = set()
        for d in docs:
            if d.name.startswith(lang + "/"):
                other = "en-US/" + d.name.split("/", 1)[1]
                if other in by_name:
                    a, b = sorted((by_name[other], by_name[d.name]))
                    pairs.add((a, b))
        if not pairs:
            continue
        some = next(iter(results.values()))[1]
        positives = pairs & some
        row: list[object] = [f"en-US vs {lang}", len(positives)]
        for flagged, _ in results.values():
            row.append(f"{len(positives & flagged)}/{len(positives)}")
        rows.append(row)
    if rows:
        print("\n### (c) Untranslated chapters found (one page in two languages, Jaccard >= 0.8)\n")
        print(table(["pair", "true", *results], rows))


def section_short(limit: int | None) -> None:
    print("\n## (d) Short texts: Chinese sentence pairs (LCQMC test, PAWS-X zh test)\n")
    fingerprinter = Fingerprinter()
    dedup = Analyser(fingerprinter)  # at its defaults: with anchors
    rows = []
    for name, path, skip in (
        ("LCQMC", CORPORA / "zh-pairs" / "lcqmc-test.tsv", 0),
        ("PAWS-X zh", CORPORA / "zh-pairs" / "pawsx-zh-test.tsv", 1),
    ):
        lines = path.read_text(encoding="utf-8").splitlines()[skip:][:limit]
        stats: dict[str, Counter] = {"0": Counter(), "1": Counter()}
        for line in lines:
            cols = line.split("\t")
            s1, s2, label = cols[-3], cols[-2], cols[-1].strip()
            a, b = dedup.analyse(s1), dedup.analyse(s2)
            c = stats[label]
            c["pairs"] += 1
            c["short"] += a.kind == "short" and b.kind == "short"
            dropped = a.kind == b.kind and (
                (a.kind == "short" and a.value == b.value)
                or (a.kind == "simhash" and (a.value ^ b.value).bit_count() <= MAX_DISTANCE)
            )
            c["dropped"] += dropped
            c["dropped, texts differ"] += dropped and exact_form(s1) != exact_form(s2)
            both = a.anchors and b.anchors
            hashes, chars = a.anchors.shared_with(b.anchors.hashes) if both else ((), 0)
            anchored = dropped or bool(
                both and contained(len(hashes), chars, a.anchors.summary, b.anchors.summary)
            )
            c["dropped with anchors, texts differ"] += anchored and exact_form(s1) != exact_form(s2)
            forced = [
                simhash(
                    fingerprinter.term_extractor.top_terms(
                        fingerprinter.term_extractor.term_counts(normalize_text(s))
                    )
                )
                for s in (s1, s2)
            ]
            c["simhash<=3"] += (forced[0] ^ forced[1]).bit_count() <= MAX_DISTANCE and bool(
                forced[0] or forced[1]
            )
        for label, c in stats.items():
            meaning = "same intent/paraphrase" if label == "1" else "different meaning"
            rows.append(
                [
                    f"{name}, label {label} ({meaning})",
                    c["pairs"],
                    pct(c["short"] / c["pairs"]),
                    c["dropped"],
                    c["dropped, texts differ"],
                    c["dropped with anchors, texts differ"],
                    pct(c["simhash<=3"] / c["pairs"]),
                ]
            )
    print(
        table(
            [
                "pairs",
                "n",
                "both on the exact path",
                "dropped by ours",
                "of them different texts",
                "different texts dropped with anchors",
                "SimHash alone would drop (d<=3)",
            ],
            rows,
        )
    )
    print(
        "\nOurs drops a pair of short texts only when their normalised texts are equal (the "
        "datasets hold some byte-identical pairs, even under label 0); a drop of two different "
        "texts would be a false drop. Label-1 pairs are paraphrases, not copies: keeping them "
        "is right for a page de-duplicator."
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a subset (< 2 minutes)")
    parser.add_argument("--pages", type=Path, help="your own directory of .html/.txt files")
    parser.add_argument("--no-peers", action="store_true", help="ours only")
    parser.add_argument(
        "--anchors-only",
        action="store_true",
        help="ours by distance, with paragraph anchors, with anchors and the share check (the "
        "defaults), and MinHash LSH; no other peer or extractor",
    )
    parser.add_argument(
        "--thresholds",
        action="store_true",
        help="also (e)+(f): each threshold from 2 to 8, what it buys and costs "
        "(benchmarks/thresholds.py)",
    )
    parser.add_argument(
        "--false-positives", action="store_true", help="list ours' false pairs of each corpus"
    )
    args = parser.parse_args(argv)
    global SHOW_FALSE_POSITIVES
    SHOW_FALSE_POSITIVES = args.false_positives

    if args.anchors_only:
        chosen = [Ours("builtin"), OursAnchors("builtin"), OursShared("builtin"), MinHashLSH()]
    else:
        chosen = methods(extractors=True, peers=not args.no_peers)
    print(
        f"# Quality: distance <= {MAX_DISTANCE}; "
        f"truth = {SHINGLE}-token shingle Jaccard >= {JACCARD}"
    )
    if args.pages:
        docs = user_docs(args.pages)
        section_edits(docs, chosen)
        section_pairs(f"(b) All pairs of {args.pages}", docs, chosen)
        return
    if not CORPORA.is_dir():
        sys.exit(f"no corpora at {CORPORA}; pass --pages DIR")
    edit_docs, langs, hb, rt = corpus_docs(args.quick)
    edit_pairs = section_edits(edit_docs, chosen)
    hb_truth, rt_truth = true_pairs(hb), true_pairs(rt)
    results = section_pairs(
        "(b)+(c) Debian Handbook: all pairs, " + ", ".join(langs),
        hb,
        chosen,
        "Same-template pages within a language are the traps; "
        "untranslated chapters are the natural near-duplicates.",
        hb_truth,
    )
    section_natural(hb, results)
    section_pairs(
        "(b)+(c) Reuters-21578: all pairs of stories with a body",
        rt,
        chosen,
        "Re-sent and corrected stories are the natural near-duplicates.",
        rt_truth,
    )
    section_short(500 if args.quick else None)
    if args.thresholds:
        import thresholds  # benchmarks/thresholds.py, which imports this module

        thresholds.section_thresholds(
            edit_pairs,
            [("Debian Handbook", hb, hb_truth), ("Reuters-21578", rt, rt_truth)],
            index_pages=50_000,
        )


def corpus_docs(quick: bool) -> tuple[list[Doc], list[str], list[Doc], list[Doc]]:
    """The shared corpora as every section uses them: the pages to edit (handbook en-US and
    zh-CN, long Reuters stories), the handbook languages, their pages, and Reuters."""
    edit_docs = handbook_docs(["en-US", "zh-CN"], limit=25 if quick else None)
    edit_docs += [d for d in reuters_docs(1) if len(d.text) > 1500][: 40 if quick else 200]
    langs = ["en-US", "hr-HR", "zh-CN"] if quick else HANDBOOK_LANGUAGES
    return edit_docs, langs, handbook_docs(langs), reuters_docs(3 if quick else 22)


if __name__ == "__main__":
    main()
