"""The fast segmenter (rjieba) must give exactly jieba's words (HMM off), so that it never
changes a fingerprint; pure jieba keeps working without it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from scrapy_simhash.analysis.fingerprint import Fingerprinter
from scrapy_simhash.analysis.terms import Segmenter
from scrapy_simhash.extract.extractors import visible_text
from scrapy_simhash.extract.text import normalize_text

HAS_RJIEBA = importlib.util.find_spec("rjieba") is not None
needs_rjieba = pytest.mark.skipif(not HAS_RJIEBA, reason="rjieba is not installed (extra [fast])")

# Real-world shapes: news prose, mixed Latin product names, traditional script, numbers,
# runs of one repeated character, and words jieba's dictionary lacks.
SAMPLES = [
    "北京大学的研究人员周二发布了一项关于城市交通的新研究。研究显示，地铁线路的扩建显著减少了"
    "市中心的交通拥堵，同时提高了公共交通的使用率。",
    "苹果公司发布了新款 iPhone 和 MacBook Pro，搭载 M4 芯片，性能提升明显。",
    "使用 apt-get install 安装软件包之前，请先运行 apt update 更新软件包列表（sources.list）。",
    "這是一個以繁體中文書寫的段落，內容涉及系統管理、網路設定與套件維護。",
    "哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈哈",
    "2024年3月15日，上证指数收于3054.64点，涨幅0.54%；深证成指下跌0.12%。",
    "区块链去中心化应用生态与元宇宙虚拟现实结合，打工人内卷躺平",
    "",
]


@pytest.fixture(scope="module")
def fingerprinters() -> tuple[Fingerprinter, Fingerprinter]:
    """(jieba, rjieba); loading jieba's dictionary takes about a second, so once."""
    return Fingerprinter(segmenter="jieba"), Fingerprinter(segmenter="rjieba")


def test_unknown_backend_is_named_in_the_error():
    with pytest.raises(ValueError, match="'hmm' is not one of auto, jieba, rjieba"):
        Segmenter("hmm")


def test_auto_prefers_rjieba_when_installed():
    assert Segmenter("auto").backend == ("rjieba" if HAS_RJIEBA else "jieba")


def test_jieba_alone_segments(fingerprinters):
    words = fingerprinters[0].term_extractor.segmenter.cut("北京大学的研究人员")
    assert "北京大学" in words
    assert "".join(words) == "北京大学的研究人员"


def test_cutting_joined_runs_equals_cutting_each_run(fingerprinters):
    # term_counts cuts all Han runs of a text in one call, joined by line breaks.
    segmenter = fingerprinters[0].term_extractor.segmenter
    runs = ["北京大学的研究人员", "发布了", "一项关于城市交通的新研究", "哈哈哈"]
    joined = [w for w in segmenter.cut("\n".join(runs)) if w != "\n"]
    assert joined == [w for run in runs for w in segmenter.cut(run)]


@needs_rjieba
@pytest.mark.parametrize("text", SAMPLES)
def test_rjieba_matches_jieba_on_samples(text, fingerprinters):
    slow, fast = fingerprinters
    assert fast.term_extractor.segmenter.cut(text) == slow.term_extractor.segmenter.cut(text)
    assert fast.term_extractor.tokens(text) == slow.term_extractor.tokens(text)
    assert fast.term_extractor.term_counts(text) == slow.term_extractor.term_counts(text)
    assert fast.fingerprint(text) == slow.fingerprint(text)


@pytest.mark.slow
@needs_rjieba
@pytest.mark.corpus
def test_rjieba_matches_jieba_on_every_chinese_handbook_page(corpora, fingerprinters):
    pages = sorted((corpora / "debian-handbook").glob("zh-*/*.html"))
    assert len(pages) >= 250, "expected the zh-CN and zh-TW handbook pages"
    slow_fp, fast_fp = fingerprinters
    differing = []
    for page in pages:
        text = normalize_text(visible_text(page.read_text(encoding="utf-8")))
        if fast_fp.term_extractor.tokens(text) != slow_fp.term_extractor.tokens(text) or (
            fast_fp.fingerprint(text) != slow_fp.fingerprint(text)
        ):
            differing.append(page.name)
    assert differing == []


@needs_rjieba
def test_choosing_rjieba_does_not_load_it():
    # Importing rjieba loads its dictionary: a crawl's process that leaves analysis to its
    # workers builds a Fingerprinter and must not pay for that.
    code = (
        "import sys; from scrapy_simhash.analysis.fingerprint import Fingerprinter; "
        "f = Fingerprinter(); assert f.term_extractor.segmenter.backend == 'rjieba'; "
        "print('rjieba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_a_broken_rjieba_falls_back_to_jieba_words(tmp_path, monkeypatch, caplog):
    # Found on the path, fails to import: "auto" segments with jieba and says why; asking
    # for rjieba by name raises.
    (tmp_path / "rjieba").mkdir()
    (tmp_path / "rjieba" / "__init__.py").write_text("raise ImportError('broken build')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "rjieba", raising=False)
    segmenter = Segmenter("auto")
    assert segmenter.backend == "rjieba"
    assert segmenter.cut("北京大学的研究人员") == ["北京大学", "的", "研究", "人员"]
    assert segmenter.backend == "jieba"
    assert "cannot be imported; segmenting with jieba" in caplog.text
    with pytest.raises(ImportError, match="broken build"):
        Segmenter("rjieba").cut("北京")
