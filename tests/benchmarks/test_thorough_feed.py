"""The pure helpers of benchmarks/thorough: a page's text as lines, its sections, the four
edits of the planted copies, the order of the feed and the truth's grams of a plain text."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def feed():
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.thorough import feed
    finally:
        sys.path.remove(str(ROOT))
    return feed


PARAGRAPHS = [
    "Installing the package needs 2 steps and 15 minutes on a 2019 laptop, nothing more.",
    "The first step downloads the archive and checks its signature against the key.",
    "The second step unpacks it into the prefix and writes the configuration file there.",
    "Afterwards the service starts by itself and listens on port 8080 for requests.",
    "Logs go to the journal; read them with journalctl when something looks wrong.",
]


def test_deleted_paragraph_is_the_middle_long_one(feed):
    copy = feed.edit(PARAGRAPHS, "deleted paragraph", "")
    assert copy == PARAGRAPHS[:2] + PARAGRAPHS[3:]
    assert feed.edit(PARAGRAPHS[:3], "deleted paragraph", "") is None


def test_appended_sentence_is_last(feed):
    copy = feed.edit(PARAGRAPHS, "appended sentence", "A sentence from elsewhere.")
    assert copy == [*PARAGRAPHS, "A sentence from elsewhere."]


def test_cut_removes_the_last_tenth_at_a_word_boundary(feed):
    text = "\n".join(PARAGRAPHS)
    copy = "\n".join(feed.edit(PARAGRAPHS, "10% cut", ""))
    assert text.startswith(copy)
    assert 0.85 * len(text) <= len(copy) <= 0.9 * len(text)
    assert text[len(copy)] in " \n"


def test_numbers_changed_shifts_every_digit(feed):
    copy = feed.edit(PARAGRAPHS, "numbers changed", "")
    assert copy[0].startswith("Installing the package needs 3 steps and 26 minutes on a 3120")
    assert copy[3].endswith("port 9191 for requests.")
    assert copy[1:3] == PARAGRAPHS[1:3]
    assert feed.edit(["no digits here"] * 5, "numbers changed", "") is None


def test_unknown_kind_is_refused(feed):
    with pytest.raises(ValueError):
        feed.edit(PARAGRAPHS, "reversed", "")


def test_page_blocks_drop_chrome_and_mark_headings(feed):
    html = (
        "<html><body><nav>Home | News</nav><div class='sidebar'>Recent posts</div>"
        "<h2>Setup</h2><p>First <b>bold</b> line.</p><p>Second line.</p>"
        "<footer>Copyright</footer><script>var x;</script></body></html>"
    )
    assert feed.page_blocks(html) == [feed.HEADING + "Setup", "First bold line.", "Second line."]


def test_sections_join_short_parts(feed):
    h = feed.HEADING
    lines = [h + "A", "a" * 50, h + "B", "b" * 50, h + "C", "c" * 200, h + "D", "d" * 10]
    parts = feed.sections(lines, min_chars=100)
    assert parts == [["A", "a" * 50, "B", "b" * 50], ["C", "c" * 200, "D", "d" * 10]]
    assert feed.sections(["x" * 10], min_chars=100) == [["x" * 10]]


def test_copies_come_after_their_originals(feed):
    docs = [
        feed.Doc("c1", ["x"], kind="10% cut", source="o1"),
        feed.Doc("c2", ["x"], kind="numbers changed", source="o1"),
        feed.Doc("o2", ["y"]),
        feed.Doc("o1", ["x"]),
    ]
    order = [d.url for d in feed.copies_after_originals(docs)]
    assert sorted(order) == ["c1", "c2", "o1", "o2"]
    assert order.index("o1") < order.index("c1") and order.index("o1") < order.index("c2")


def test_render_squeezes_to_one_line(feed):
    assert feed.render(["a b", "c"], squeezed=True) == "a b c"
    assert feed.render(["a b", "c"], squeezed=False) == "a b\nc"


def test_score_counts_caught_copies_false_removals_and_shares(feed):
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.thorough.run import score
    finally:
        sys.path.remove(str(ROOT))
    original = feed.Doc("o1", PARAGRAPHS)
    other = feed.Doc("o2", ["Something else entirely, about gardening and tomatoes in May."])
    cut = feed.Doc("c1", feed.edit(PARAGRAPHS, "10% cut", ""), kind="10% cut", source="o1")
    numbers = feed.Doc(
        "c2", feed.edit(PARAGRAPHS, "numbers changed", ""), kind="numbers changed", source="o1"
    )
    docs = [original, other, cut, numbers]
    # the cut copy removed for its original; the original of o2 removed for o1 (false)
    result = score(docs, {"c1": ["o1"], "o2": ["o1"]})
    assert result["caught"] == {"10% cut": 1}
    assert result["recall"]["numbers changed"] == 0
    assert result["false_removals"] == 1
    assert result["below_goal"] == 1  # o2 shares little of its text with o1
    # datatrove-style: the copy kept as its cluster's root, the original removed for it
    result = score(docs, {"o1": ["c2"]})
    assert result["caught"] == {"numbers changed": 1}
    assert result["originals_removed_for_own_copy"] == 1
    assert result["false_removals"] == 0


def test_score_counts_copies_too_far_from_their_original_apart(feed):
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.thorough.run import score
    finally:
        sys.path.remove(str(ROOT))
    original = feed.Doc("o1", ["A short text of a few words only."])
    longer = feed.Doc(
        "c1",
        feed.edit(original.paragraphs, "appended sentence", "Then a much longer sentence " * 3),
        kind="appended sentence",
        source="o1",
    )
    result = score([original, longer], {})
    assert result["planted"] == {"appended sentence": 1}
    assert result["planted_lossless"] == {}
    assert result["recall_lossless"]["appended sentence"] is None
