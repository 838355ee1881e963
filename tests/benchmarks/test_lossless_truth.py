"""The ground truth of benchmarks/lossless: the share of a dropped page's text that the
kept page holds (loaded from its file: ``benchmarks`` is no installed package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TRUTH = Path(__file__).resolve().parents[2] / "benchmarks" / "lossless" / "truth.py"


@pytest.fixture(scope="module")
def truth():
    spec = importlib.util.spec_from_file_location("lossless_truth", TRUTH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIRST = (
    "The central bank raised its key lending rate by half a point on Tuesday, citing "
    "stubborn inflation in services and a labour market that has barely cooled."
)
SECOND = (
    "Shares of the two carmakers fell sharply after the merger talks collapsed over the "
    "valuation of the battery unit, traders in Frankfurt said late in the session."
)


def page(*paragraphs: str, chrome: str = "") -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return f"<html><head><title>T</title></head><body>{chrome}<main>{body}</main></body></html>"


def test_half_of_the_dropped_text_is_about_half(truth):
    dropped = page(FIRST, SECOND)
    kept = page(FIRST)
    assert truth.share(dropped, kept) == pytest.approx(0.5, abs=0.1)
    # The other way round, everything of the shorter page is in the longer one.
    assert truth.share(kept, dropped) == 1.0


def test_distinct_texts_share_little_and_same_texts_everything(truth):
    assert truth.share(page(FIRST), page(SECOND)) < 0.3
    assert truth.share(page(FIRST), page(FIRST)) == 1.0


def test_case_and_whitespace_do_not_count(truth):
    assert truth.share(page(FIRST.upper()), page("  \n".join(FIRST.split()))) == 1.0


@pytest.mark.parametrize(
    "chrome",
    [
        f"<nav>{SECOND}</nav>",
        f"<aside>{SECOND}</aside>",
        f"<header>{SECOND}</header><footer>{SECOND}</footer>",
        f'<div class="sidebar widget"><ul><li>{SECOND}</li></ul></div>',
        f'<div id="main-menu">{SECOND}</div>',
        f'<ol class="breadcrumbs">{SECOND}</ol>',
        f'<section class="related-posts">{SECOND}</section>',
        f'<div class="toc">{SECOND}</div>',
        f"<script>var x = '{SECOND}';</script><style>p {{color: red}}</style>",
    ],
)
def test_chrome_is_not_the_pages_text(truth, chrome):
    with_chrome = page(FIRST, chrome=chrome)
    assert truth.page_text(with_chrome) == truth.page_text(page(FIRST))
    # A page that differs from another only by its chrome is all held by it.
    assert truth.share(page(FIRST), with_chrome) == 1.0
    assert truth.share(with_chrome, page(FIRST, SECOND)) == 1.0


def test_class_words_that_merely_contain_nav_or_toc_are_text(truth):
    kept = f'<div class="in-stock">{SECOND}</div><div class="canvas">{FIRST}</div>'
    assert truth.page_text(page(chrome=kept)) == f"{SECOND} {FIRST}".casefold()


def test_blocks_are_separated_and_inline_tags_are_not(truth):
    assert truth.page_text("<body><p>one</p><p>t<b>w</b>o</p></body>") == "one two"


def test_an_empty_dropped_page_loses_nothing(truth):
    assert truth.share("<html><body><nav>x</nav></body></html>", page(FIRST)) == 1.0


def test_a_wrapper_of_the_main_text_is_kept_whatever_its_class(truth):
    wrapped = (
        f'<html><body class="single has-sidebar"><div class="navbar-wrap"><h1>Title</h1>'
        f'<p>{FIRST}</p></div><div class="sidebar">{SECOND}</div></body></html>'
    )
    assert truth.page_text(wrapped) == f"title {FIRST}".casefold()
