"""What is fingerprinted of an HTML page: the body of its main text, its paragraphs, where
they are most of it (scrapy_simhash.extract.body)."""

from __future__ import annotations

import pytest

from scrapy_simhash import Deduplicator, Fingerprinter, fingerprint, open_index
from scrapy_simhash.analysis.fingerprint import format_fingerprint
from scrapy_simhash.extract.body import BODY_CHARS
from scrapy_simhash.extract.extractors import get_extractor
from scrapy_simhash.extract.main_text import main_text

PARAGRAPHS = [
    "The city council approved a new tram line on Tuesday after a long debate about its "
    "costs. The line will connect the harbour district with the university campus and the "
    "central station, and the first trams are expected to run in the spring of next year.",
    "Residents of the eastern suburbs welcomed the decision, while shop owners along the "
    "planned route worried about two years of construction work, closed streets and fewer "
    "customers. The mayor promised compensation and a temporary bus service during works.",
    "Engineers will begin surveying the route next month. The council expects the project to "
    "cost about four hundred million, shared between the city, the region and a national "
    "infrastructure fund, and it will publish the tender documents before the summer.",
]


def article_page(headline: str, furniture: str, paragraphs: list[str] = PARAGRAPHS) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        '<html><head><meta charset="utf-8"></head><body><nav><a href="/">Home</a></nav>'
        f"<main><h1>{headline}</h1>{furniture}{body}</main></body></html>"
    )


ORIGINAL = article_page(
    "Council approves tram line", "<p class='dateline'>Tuesday, 12 March 2024, 10:23</p>"
)
# The same story on another site: its own headline, byline, dateline and image caption.
REPOST = article_page(
    "Tram line gets green light after long debate",
    "<div>Staff writer | Updated 13.03.2024</div><div>Photo: the harbour district</div>"
    "<div>Advertisement</div><div>Listen to this article, 3 minutes</div>",
)


def test_copies_that_differ_by_their_furniture_have_one_body():
    assert main_text(ORIGINAL) != main_text(REPOST)
    extract = get_extractor("builtin")
    assert extract(ORIGINAL) == extract(REPOST) == "\n".join(PARAGRAPHS)


def test_a_repost_with_other_furniture_is_dropped_through_the_deduplicator():
    extract = get_extractor("builtin")
    with open_index("memory:") as index:
        dedup = Deduplicator(index, Fingerprinter())
        assert dedup.check_text(extract(ORIGINAL), "original").match is None
        verdict = dedup.check_text(extract(REPOST), "repost")
        assert verdict.match is not None and verdict.match.key == "original"


def test_list_items_and_table_cells_are_body():
    # A product page: a description, the specifications that tell one product from the
    # next, and the shop's delivery terms. Specifications are short lines, and content.
    specs = "".join(
        f"<li>{name}: {value}</li>"
        for name, value in [("Width", "104 cm"), ("Length", "52 cm"), ("Height", "97 cm")]
    )
    table = "<table><tr><td>Weight</td><td>18 kg</td></tr></table>"
    page = (
        f"<html><body><main><h1>Oak desk</h1><p>{PARAGRAPHS[0]}</p><ul>{specs}</ul>{table}"
        f"<p>{PARAGRAPHS[1]}</p><p>{PARAGRAPHS[2]}</p></main></body></html>"
    )
    text = get_extractor("builtin")(page)
    assert "Width: 104 cm" in text and "Height: 97 cm" in text and "18 kg" in text
    assert "Oak desk" not in text


def test_short_lines_that_are_most_of_the_text_stay():
    # An interview of short questions and answers between two long answers: the short
    # lines are most of the text, so they are not furniture, and all of it counts.
    exchange = "".join(
        f"<div>Q: What did the {thing} cost? A: About {n} million, said the mayor.</div>"
        for n, thing in enumerate(
            ["tram", "station", "bridge", "depot", "survey", "tender", "ramp", "lift", "track"]
        )
    )
    page = (
        f"<html><body><main><h1>Interview</h1><p>{PARAGRAPHS[0]}</p>{exchange}"
        f"<p>{PARAGRAPHS[1]}</p></main></body></html>"
    )
    text = get_extractor("builtin")(page)
    assert "What did the depot cost? A: About 3 million" in text


def test_one_paragraph_is_not_a_body():
    # One long shared text (a notice, a disclaimer) must not stand for the page alone.
    page = article_page(
        "Episode 12", "<div>M: Who slips next on the ice? Me: I bet you do.</div>", [PARAGRAPHS[0]]
    )
    text = get_extractor("builtin")(page)
    assert "Who slips next" in text


def test_a_block_broken_by_br_is_one_paragraph():
    # A cookie notice of two lines is one block: with one unique short line beside it, the
    # page has one paragraph, not two, and its unique line is fingerprinted.
    notice = (
        "Privacy and cookies: this site uses cookies. By continuing to use this website, you "
        "agree to their use and to the processing of your data as described in the policy.<br>"
        "To find out more, including how to control cookies, see here: our cookie policy and "
        "the list of partners who may process your data for measurement and advertising."
    )
    page = (
        "<html><body><main><div>M: Who slips next on the ice? Me: I bet you do.</div>"
        f"<div>{notice}</div></main></body></html>"
    )
    assert "Who slips next" in get_extractor("builtin")(page)


def test_hard_wrapped_prose_is_body():
    # Lines broken by <br> are short; their block is a paragraph, and stays in the body.
    wrapped = "<br>".join(PARAGRAPHS[1].split(", "))
    page = article_page("Headline", "", [PARAGRAPHS[0], wrapped])
    text = get_extractor("builtin")(page)
    assert "Residents of the eastern suburbs welcomed the decision" in text
    assert "Headline" not in text


def test_paragraphs_separated_by_br_are_paragraphs():
    # One block of paragraphs separated by <br><br>, with the site's lines in it: each
    # long line is a paragraph of the body; the dateline and the author line are not.
    block = "<br><br>".join(
        ["18.02.2022, 10:27 | Law | Comment now", *PARAGRAPHS, "Author: J. Doe"]
    )
    page = f"<html><body><main><h1>Headline</h1><div>{block}</div></main></body></html>"
    assert get_extractor("builtin")(page) == "\n".join(PARAGRAPHS)


def test_chinese_paragraphs_count_by_reading_length():
    # About 70 Chinese characters carry as much as 200 Latin ones.
    paragraph = (
        "市议会周二经过长时间辩论后批准了一条新的有轨电车线路。"
        "该线路将连接港口区与大学校园和中央车站，预计明年春天开通首批电车，票价与城市公交车完全相同。"
    )
    second = (
        "东郊居民对这一决定表示欢迎，而沿线商户则担心两年的施工、封闭的街道和更少的顾客。"
        "市长承诺在施工期间提供补偿和临时公交服务，并将每个月向市民公布工程的进度。"
    )
    assert len(paragraph) < BODY_CHARS and len(second) < BODY_CHARS
    page = article_page("议会批准电车线路", "<div>记者 张三</div>", [paragraph, second])
    assert get_extractor("builtin")(page) == paragraph + "\n" + second


def test_main_text_as_a_reader_sees_it_keeps_the_headline():
    assert main_text(ORIGINAL).startswith("Council approves tram line")
    assert get_extractor("builtin", body=False)(ORIGINAL) == main_text(ORIGINAL)


@pytest.mark.parametrize("page", [ORIGINAL, REPOST], ids=["original", "repost"])
def test_pinned_html_fingerprint(page):
    # HTML fields are fingerprinted through the extractor: a change of what it keeps changes
    # fingerprints, so it is deliberate (bump TERMS_VERSION and pin again).
    text = get_extractor("builtin")(page)
    assert format_fingerprint(fingerprint(text)) == "40046a409955b46c"
