"""Fingerprints of ~1,450 real texts, recorded before the analysis was made faster: a change
of speed must never be a change of output (tests/test_fingerprint.py pins a few by hand).

The texts are taken from the shared corpora with a tag stripper of this file's own, so that
a change in the HTML extraction (text.py) does not move them. Each record holds a digest of
the text: a text that reads differently is reported as such, not as a fingerprint change.

To record again, deliberately, after a change of TERMS_VERSION::

    python tests/test_fingerprint_corpus.py ../shared/corpora
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import sys
import tarfile
import zlib
from pathlib import Path

import pytest

from scrapy_simhash.analysis.fingerprint import Fingerprinter, format_fingerprint

RECORDED = Path(__file__).parents[1] / "data" / "corpus-fingerprints.json"
_TAG = re.compile(r"<script.*?</script>|<style.*?</style>|<[^>]+>", re.S | re.I)
_REUTERS = re.compile(r'NEWID="(\d+)".*?<BODY>(.*?)</BODY>', re.S)


def _strip_tags(raw: str) -> str:
    return html.unescape(_TAG.sub("\n", raw))


def corpus_texts(corpora: Path) -> dict[str, str]:
    """Name -> text: the handbook pages in Chinese (both scripts) and English, the Reuters
    stories of one file, and one in twenty pages of the web-extraction set (many languages
    and sites; chosen by a checksum of the name)."""
    texts = {}
    for page in sorted((corpora / "debian-handbook").glob("[ez][nh]-*/*.html")):
        texts[f"handbook/{page.parent.name}/{page.name}"] = _strip_tags(
            page.read_text(encoding="utf-8")
        )
    raw = (corpora / "reuters21578" / "reut2-000.sgm").read_bytes().decode("latin-1")
    for match in _REUTERS.finditer(raw):
        texts[f"reuters/{match.group(1)}"] = html.unescape(match.group(2))
    # One pass over the stream: extracting members in another order decompresses it again
    # for each of them.
    with tarfile.open(corpora / "web-extraction" / "pages.tar.xz", "r|xz") as archive:
        for member in archive:
            if member.isfile() and zlib.crc32(member.name.encode()) % 20 == 0:
                data = archive.extractfile(member).read().decode("utf-8", "replace")
                texts[f"web/{member.name}"] = _strip_tags(data)
    return texts


def record(fingerprinter: Fingerprinter, text: str) -> list[object]:
    """[digest of the text, fingerprint, number of distinct terms]."""
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    counts = fingerprinter.term_extractor.term_counts(text)
    return [digest, format_fingerprint(fingerprinter.fingerprint(text)), len(counts)]


@pytest.fixture
def texts(corpora) -> dict[str, str]:
    return corpus_texts(corpora)


@pytest.mark.slow
@pytest.mark.corpus
def test_fingerprints_as_recorded(texts):
    # The default segmenter (rjieba when installed); tests/test_segmenter.py shows that
    # jieba gives the same words and fingerprints.
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    assert set(texts) == set(recorded)
    fingerprinter = Fingerprinter()
    now = {name: record(fingerprinter, text) for name, text in texts.items()}
    changed_text = [name for name in texts if now[name][0] != recorded[name][0]]
    assert changed_text == [], "these corpus texts read differently now; nothing was compared"
    differing = {name: (recorded[name], now[name]) for name in texts if now[name] != recorded[name]}
    assert differing == {}


if __name__ == "__main__":
    fingerprinter = Fingerprinter()
    corpus = corpus_texts(Path(sys.argv[1]))
    records = {name: record(fingerprinter, text) for name, text in sorted(corpus.items())}
    lines = ",\n".join(f"{json.dumps(name)}: {json.dumps(records[name])}" for name in records)
    RECORDED.write_text("{\n" + lines + "\n}\n", encoding="utf-8")  # one text a line
    print(f"{len(records)} fingerprints recorded in {RECORDED}")
