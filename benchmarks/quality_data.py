"""The documents and the ground truth that quality.py, thresholds.py and feature_search.py
share: the corpora as pages (``Doc``: main text and the truth's shingles), every pair that is
a near-duplicate by the truth (shingle Jaccard >= 0.8) or a containment, and a method's
scores against them. See quality.py's docstring for how the truth is defined.
"""

from __future__ import annotations

import html as html_lib
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import lxml.html
import mmh3

from scrapy_simhash.extract.extractors import get_extractor, visible_text
from scrapy_simhash.extract.text import normalize_text

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


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def scores(flagged: set, truth: set) -> tuple[float, float, float]:
    """Precision, recall and F1 of the *flagged* pairs against the *truth*."""
    tp = len(flagged & truth)
    precision = tp / len(flagged) if flagged else 1.0
    recall = tp / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def corpus_docs(quick: bool) -> tuple[list[Doc], list[str], list[Doc], list[Doc]]:
    """The shared corpora as every section uses them: the pages to edit (handbook en-US and
    zh-CN, long Reuters stories), the handbook languages, their pages, and Reuters."""
    edit_docs = handbook_docs(["en-US", "zh-CN"], limit=25 if quick else None)
    edit_docs += [d for d in reuters_docs(1) if len(d.text) > 1500][: 40 if quick else 200]
    langs = ["en-US", "hr-HR", "zh-CN"] if quick else HANDBOOK_LANGUAGES
    return edit_docs, langs, handbook_docs(langs), reuters_docs(3 if quick else 22)
