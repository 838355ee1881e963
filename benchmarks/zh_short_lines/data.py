"""Chinese documents made of short lines, and copies of them with edits of a known size.

Two kinds of documents, from ``../shared/corpora``:

* **digests**: the Chinese Debian Handbook (zh-CN and zh-TW), each page's Chinese
  sentences, one sentence a line (a changelog or a newsletter of one-line items), in
  documents of 2,000 to 4,000 characters. A sentence is kept when it is 6 to
  :data:`MAX_LINE` characters long and at least half of its letters are Han: the
  handbook's untranslated English paragraphs end in no Chinese full stop, and were
  lines of thousands of characters, not short lines of Chinese;
* **questions**: LCQMC's questions, one a line, 150 to a document (about 1,700 characters):
  a Q&A digest whose lines share words with many other lines.

Edits (each copy of one original, its lines kept whole):

* ``delete block``: a run of consecutive lines, about 8% of the text, removed;
* ``insert block``: a run of lines of about 8% of the text, from another document, inserted
  at a random line;
* ``delete line``: one line removed;
* ``cut 10%``: the last lines, 10% of the text, removed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT.parent / "shared" / "corpora"
KINDS = ("delete block", "insert block", "delete line", "cut 10%")
#: Share of a document's characters that a block edit removes or inserts.
BLOCK = 0.08
_SENTENCE = re.compile(r"[^。！？；!?]*[。！？；!?]")
#: The longest line a digest keeps: an item of a newsletter or a changelog.
MAX_LINE = 200
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LETTER = re.compile(r"[^\W\d_]")


def _is_chinese_line(line: str) -> bool:
    letters = len(_LETTER.findall(line))
    return 6 <= len(line) <= MAX_LINE and 2 * len(_HAN.findall(line)) >= letters


@dataclass
class Doc:
    name: str
    lines: list[str]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def available() -> str | None:
    """Why the data is missing, or ``None``."""
    for path in (
        CORPORA / "debian-handbook" / "zh-CN",
        CORPORA / "zh-pairs" / "lcqmc-test.tsv",
        CORPORA / "zh-pairs" / "pawsx-zh-test.tsv",
    ):
        if not path.exists():
            return f"{path} is missing (see ../shared/corpora/README.md)"
    return None


def _chunks(name: str, lines: list[str], min_chars: int, max_chars: int) -> list[Doc]:
    """*lines* in order, cut into documents of *min_chars* to about *max_chars*."""
    docs, chunk = [], []
    for number, line in enumerate(lines):
        chunk.append(line)
        if sum(map(len, chunk)) >= max_chars or number == len(lines) - 1:
            if sum(map(len, chunk)) >= min_chars:
                docs.append(Doc(f"{name}#{len(docs)}", chunk))
            chunk = []
    return docs


def digests(min_chars: int = 2000, max_chars: int = 2500) -> list[Doc]:
    """The handbook's Chinese sentences, one a line, each language's pages in order."""
    from benchmarks.lossless.truth import page_text

    docs = []
    for lang in ("zh-CN", "zh-TW"):
        lines = []
        for page in sorted((CORPORA / "debian-handbook" / lang).glob("*.html")):
            text = page_text(page.read_bytes())
            lines += [s.strip() for s in _SENTENCE.findall(text) if _is_chinese_line(s.strip())]
        docs += _chunks(lang, lines, min_chars, max_chars)
    return docs


def wiki(min_chars: int = 2000, max_chars: int = 2500) -> list[Doc]:
    """PAWS-X's first sentences (from Wikipedia), one a line: a digest of facts. Only the
    first of each pair: the second rewords it, and would be a near-copy of its line."""
    path = CORPORA / "zh-pairs" / "pawsx-zh-test.tsv"
    seen: dict[str, None] = {}
    for row in path.read_text(encoding="utf-8").splitlines()[1:]:
        fields = row.split("\t")
        if len(fields) > 2 and len(fields[1].strip()) >= 6:
            seen.setdefault(fields[1].strip(), None)
    return _chunks("pawsx", list(seen), min_chars, max_chars)


def questions(per_doc: int = 150) -> list[Doc]:
    seen: dict[str, None] = {}
    path = CORPORA / "zh-pairs" / "lcqmc-test.tsv"
    for row in path.read_text(encoding="utf-8").splitlines():
        for question in row.split("\t")[:2]:
            seen.setdefault(question.strip(), None)
    lines = [q for q in seen if len(q) >= 6]
    return [
        Doc(f"lcqmc#{n // per_doc}", lines[n : n + per_doc])
        for n in range(0, len(lines) - per_doc + 1, per_doc)
    ]


def _run_of(lines: list[str], chars: float, rng: random.Random) -> tuple[int, int]:
    """A random run of consecutive lines of about *chars* characters (one line at least)."""
    start = rng.randrange(len(lines))
    end, size = start, 0
    # Whole lines, up to about *chars*: one more only while it brings the run closer.
    while end < len(lines) and (
        end == start or abs(size + len(lines[end]) - chars) < abs(size - chars)
    ):
        size += len(lines[end])
        end += 1
    return start, end


def edit(doc: Doc, kind: str, donor: Doc, rng: random.Random) -> list[str]:
    lines = doc.lines
    chars = sum(map(len, lines))
    if kind == "delete block":
        start, end = _run_of(lines, BLOCK * chars, rng)
        return lines[:start] + lines[end:]
    if kind == "insert block":
        start, end = _run_of(donor.lines, BLOCK * chars, rng)
        at = rng.randrange(len(lines) + 1)
        return lines[:at] + donor.lines[start:end] + lines[at:]
    if kind == "delete line":
        drop = rng.randrange(len(lines))
        return lines[:drop] + lines[drop + 1 :]
    if kind == "cut 10%":
        kept, size = [], 0
        for line in lines:
            if size + len(line) > 0.9 * chars:
                break
            kept.append(line)
            size += len(line)
        return kept
    raise ValueError(kind)
