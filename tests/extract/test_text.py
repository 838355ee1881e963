from __future__ import annotations

import html
import unicodedata

import lxml.etree
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash.analysis.confusables import fold_confusables
from scrapy_simhash.extract.extractors import visible_text
from scrapy_simhash.extract.fields import field_text
from scrapy_simhash.extract.main_text import main_text
from scrapy_simhash.extract.text import (
    _INVISIBLE_CHARS,
    _LIBXML2_MAX_DEPTH,
    _PARSER,
    _too_deep,
    exact_form,
    looks_like_html,
    normalize_characters,
    normalize_text,
    parse_html,
    raw_length,
    text_of,
    tidy_whitespace,
)

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>T</title>
<style>p {color: red}</style><script>var tracking = 1;</script></head>
<body><header>Site name</header><nav><a href="/">Home</a> <a href="/news">News</a></nav>
<main><article><h1>Headline</h1><p>First <b>bold</b> paragraph.</p><p>Second one.</p>
<noscript>Enable JS</noscript></article></main>
<aside>Popular stories</aside><div role="navigation">More links</div>
<footer>Copyright</footer></body></html>"""


def test_visible_text_keeps_content_only():
    assert visible_text(PAGE) == "Headline\nFirst bold paragraph.\nSecond one."


def test_visible_text_can_keep_boilerplate():
    text = visible_text(PAGE, remove_boilerplate=False)
    for word in ("Home", "Popular stories", "Copyright", "Headline"):
        assert word in text
    assert "tracking" not in text and "color" not in text and "Enable JS" not in text


def test_xhtml_with_encoding_declaration():
    page = '<?xml version="1.0" encoding="UTF-8"?><html><body><p>你好，世界</p></body></html>'
    assert visible_text(page) == "你好，世界"


def test_deep_nesting_keeps_text():
    # libxml2 drops text nested deeper than its limit without a word.
    page = "<p>before</p>" + "<div>" * 5000 + "deep &amp; text" + "</div>" * 5000 + "<p>after</p>"
    assert visible_text(page) == "before\ndeep & text\nafter"


@pytest.mark.parametrize("extra", [-2, -1, 0, 1])
def test_too_deep_at_the_limit(extra):
    # The XPath check against a walk that counts the levels, on both sides of the limit.
    divs = _LIBXML2_MAX_DEPTH - 2 + extra  # below <html> and <body>
    page = "<html><body>" + "<div>" * divs + "x" + "</div>" * divs + "</body></html>"
    root = lxml.etree.fromstring(page.encode(), parser=_PARSER)
    *_, innermost = root.iter("div")
    levels = len(list(innermost.iterancestors())) + 1
    assert levels == _LIBXML2_MAX_DEPTH + extra
    assert _too_deep(root) == (levels >= _LIBXML2_MAX_DEPTH)


def test_characters_xml_refuses_become_spaces():
    # Control characters (replaced in the page's UTF-8 bytes), U+FFFE and U+FFFF (in its
    # text), next to characters of two, three and four bytes that hold the same byte
    # values inside them.
    page = "<p>a\x0cb\x01c\ufffed\uffffe \u00ff\uffef\ufeff\U0001f600 tab\tend</p>"
    root = parse_html(page)
    assert lxml.etree.tostring(root, method="text", encoding="unicode") == (
        "a b c d e \u00ff\uffef\ufeff\U0001f600 tab\tend"
    )


@pytest.mark.parametrize(
    "reference",
    ["&#1;", "&#x1f;", "&#X0C;", "&#0011;", "&#65534;", "&#xFFFF;", "&#x01", "&#13;", "&#x0D;"],
)
def test_character_references_xml_refuses_become_spaces(reference):
    # The parser decodes references into the tree: "&#1;" once made every page that held
    # one fail when its text was read ("All strings must be XML compatible").
    page = f"<html><body><p>one{reference}two three four five six seven eight</p></body></html>"
    assert visible_text(page) == "one two three four five six seven eight"
    assert main_text(page) == "one two three four five six seven eight"


@pytest.mark.parametrize("reference", ["&#9;", "&#10;", "&#128;", "&#8217;", "&#x1F600;"])
def test_character_references_xml_allows_are_kept(reference):
    decoded = html.unescape(reference)
    page = f"<html><body><p>one{reference}two</p></body></html>"
    assert lxml.etree.tostring(parse_html(page), method="text", encoding="unicode") == (
        f"one{decoded}two"
    )


def test_normalize_folds_width_and_invisible_characters():
    assert normalize_text("Ｈｅｌｌｏ\u200b wor\u200dld\u00a0 !\n\n\nok") == "Hello world !\nok"
    assert exact_form("  Hello   WORLD ") == exact_form("hello world")


def test_field_text_types():
    assert field_text(None) == ""
    assert field_text(b"caf\xc3\xa9 \xff") == "café \ufffd"
    assert field_text(["a", None, "<p>b</p>"]) == "a\nb"
    assert field_text(42) == "42"
    assert field_text("plain < text > here") == "plain < text > here"


def test_looks_like_html():
    assert looks_like_html("<div>x</div>")
    assert not looks_like_html("a < b and c > d")


def test_a_noscript_that_swallowed_the_page_is_the_page():
    # An unclosed <div> inside <noscript> makes the parser put the whole body in it.
    story = "The bears of the park had sixteen cubs this year, the most in fourteen years."
    html = (
        f'<html><body><noscript><div id="nojs"></noscript><div><p>{story}</p></div></body></html>'
    )
    assert story in visible_text(html, remove_boilerplate=False)
    # A small <noscript> is what it says: text for readers without scripts.
    html = f"<html><body><noscript>Please enable JavaScript.</noscript><p>{story}</p></body></html>"
    assert visible_text(html, remove_boilerplate=False) == story


ABOUT = (
    "This blog is written by the people who keep the browser safe: engineers, researchers "
    "and the team that answers the reports of the security community."
)


def test_a_noscript_holding_a_paragraph_is_the_content_for_readers_without_scripts():
    # A blog platform renders the post with scripts and gives readers without them (and a
    # crawl) the post in <noscript>; a notice there is not content.
    post = (
        "We have seen threats on the web become more sophisticated every year, and so the "
        "protections in the browser have to learn faster: this post explains how the new "
        "checks work and what they never send to our servers."
    )
    html = (
        "<html><body><nav><a href='/'>Blog</a></nav><div class='post-body'><script>render()"
        f"</script><noscript><p>{post}</p></noscript></div>"
        "<noscript>Please enable JavaScript to see the comments.</noscript>"
        f"<aside><p>{ABOUT}</p><p>{ABOUT}</p></aside></body></html>"
    )
    assert main_text(html) == post
    assert visible_text(html, remove_boilerplate=False) == f"Blog\n{post}\n{ABOUT}\n{ABOUT}"


def test_ruby_readings_are_not_text():
    # Readings printed over words (furigana): a copy without them reads the same words.
    html = (
        "<p>子どもへの<ruby>虐待<rp>(</rp><rt>ぎゃくたい</rt><rp>)</rp></ruby>をなくす"
        "<ruby>法<rt>ほう</rt>律<rt>りつ</rt></ruby>ができました。</p>"
    )
    assert (
        visible_text(html, remove_boilerplate=False) == "子どもへの虐待をなくす法律ができました。"
    )


def test_text_is_composed_as_a_reader_sees_it():
    # "ü" as u and a combining diaeresis, "ক্ষ" the same either way: one text.
    decomposed = "Die Bu\u0308cher von Mu\u0308nchen und \u0995\u09cd\u09b7 sind hier."
    text = visible_text(f"<p>{decomposed}</p>", remove_boilerplate=False)
    assert text == unicodedata.normalize("NFC", decomposed)
    assert "Bücher" in text and "München" in text


@given(
    st.text(
        alphabet=st.sampled_from(
            "a中\u00ad\u034f\u180e\u200b\u200f\u202a\u2060\u206f\ufeffｶﾞ\U0001f600"
        )
        | st.characters(),
        max_size=30,
    )
)
def test_normalize_characters_drops_the_invisible_characters(text):
    # Searched for before the substitution (in C where built): the same as substituting.
    # Look-alike letters in a word of another script are folded first ('AЀ': the A is
    # read as the Cyrillic one).
    folded = fold_confusables(unicodedata.normalize("NFKC", text))
    expected = _INVISIBLE_CHARS.sub("", folded)
    assert normalize_characters(text) == expected


# Spaces of several kinds and characters of several widths, around markup whose text
# libxml2 joins.
_SPACES_PAGE = st.lists(
    st.sampled_from(
        [" ", "\t", "\n", "\r\n", "\xa0", "\x85", "\u3000", "a", "中", "<b>", "</b>", "<p>"]
    )
)


@given(_SPACES_PAGE)
def test_text_of_and_raw_length_are_those_of_xpath(pieces):
    # raw_length (tostring) stands in for XPath's string-length(): the extracted text
    # depends on it.
    root = parse_html("<div>x" + "".join(pieces) + "y</div>")
    for element in root.iter():
        assert raw_length(element) == lxml.etree.XPath("string-length()")(element)
        assert text_of(element) == lxml.etree.XPath("string()")(element)


@pytest.mark.parametrize("page", ["", " ", "\n\t \u3000\u00a0", "\ufeff x"])
def test_a_page_of_spaces_has_no_tree(page):
    # U+FEFF is not a space: that page has text.
    assert (parse_html(page) is None) == (page.strip() == "")


def test_source_line_breaks_are_spaces_except_in_pre():
    # As a browser shows them: a paragraph wrapped in its source is one line.
    page = (
        "<html><body><p>A paragraph wrapped\nin its source\r\nacross lines,&#13;&#10;and on.</p>"
        "<pre>line one\nline <b>two\nthree</b>\n</pre><div>x\n</div></body></html>"
    )
    assert visible_text(page, remove_boilerplate=False) == (
        "A paragraph wrapped in its source across lines, and on.\nline one\nline two\nthree\nx"
    )


@given(st.text(alphabet=st.sampled_from(" \t\r\f\v\u00a0\n\u3000a中"), max_size=40))
def test_tidy_whitespace_makes_each_run_of_spaces_one(text):
    # The rule, written as plainly as it reads: a run of spaces, tabs, carriage returns,
    # form feeds, vertical tabs and no-break spaces is one space; each line is stripped
    # (of any whitespace), and empty lines go.
    spaces = " \t\r\f\v\u00a0"
    runs = []
    for character in text:
        if character in spaces:
            if not runs or runs[-1] != " ":
                runs.append(" ")
        else:
            runs.append(character)
    lines = [line.strip() for line in "".join(runs).split("\n")]
    assert tidy_whitespace(text) == "\n".join(line for line in lines if line)


def test_a_look_alike_letter_in_a_word_of_another_script_is_folded():
    # The example the property above once found: the Latin A of a Cyrillic word is read
    # as the Cyrillic A.
    assert normalize_characters("A\u0400") == "\u0410\u0400"
