"""The anchors of a text: its units (lines, or a wrapped text's sentences), their sizes
in words, and which of them become anchors."""

from __future__ import annotations

import itertools
import random
import re
import textwrap
import zlib

import pytest
from prose import WORDS, prose

from scrapy_simhash.analysis import anchors as analysis_anchors
from scrapy_simhash.analysis.anchors import (
    anchor_form,
    line_runs,
    squeeze,
    text_anchors,
    to_signed32,
    unit_sizes,
    words,
)
from scrapy_simhash.analysis.fingerprint import hash_term
from scrapy_simhash.analysis.sentences import (
    LONG_LINE_CHARS,
    SQUEEZED_LINE_CHARS,
    sentence_units,
    sentences,
    units,
)
from scrapy_simhash.anchors import DEFAULT_ANCHORS, MIN_LINE_CHARS, Anchors

SENTENCES = [
    "The committee met in New York this afternoon and could put its final stamp of "
    "approval on the deal later today, the bankers said.",
    "They declined to disclose details because two representatives on the panel have "
    "still to obtain the approval of their senior management.",
    "The interest rate on the rescheduling was originally set at one and one eighth "
    "points over Eurodollar rates, but the borrower asked for easier terms.",
    "It also asked for a reduction in the repayments it was due to make over the next "
    "three years, after an earlier request was rebuffed by the banks.",
    "The breakthrough in the talks, which have been going on intermittently for several "
    "months, follows another debt rescheduling pact announced earlier today.",
]


def wrapped(width: int, indent: str = "    ") -> str:
    """SENTENCES as a newswire story: two sentences a paragraph, wrapped at *width*."""
    paragraphs = [" ".join(SENTENCES[i : i + 2]) for i in range(0, len(SENTENCES), 2)]
    return "\n".join(
        textwrap.fill(p, width, initial_indent=indent if n else "")
        for n, p in enumerate(paragraphs)
    )


def test_a_line_of_chinese_counts_each_character_as_a_word():
    assert words("the quick brown fox") == 4
    assert words("中文的句子") == 5 + 1
    assert words("Debian 安装") == 2 + 2
    # A Chinese paragraph outweighs an English line of the same number of characters.
    assert words("系统" * 50) > words("word " * 20)


def test_lines_stay_units_unless_the_text_is_hard_wrapped():
    blocks = ["A heading", "A paragraph of an HTML page, as long as it is. " * 4, "Footer"]
    assert units(blocks) == blocks
    story = wrapped(70)
    assert max(map(len, story.splitlines())) <= 70
    assert units(story.splitlines()) == SENTENCES


def test_a_story_wrapped_at_two_widths_has_the_same_anchors():
    narrow, wide = text_anchors(wrapped(60)), text_anchors(wrapped(78, indent=""))
    assert len(narrow) == len(SENTENCES)
    assert narrow.hashes == wide.hashes


def test_anchors_are_the_largest_units_in_words_not_in_characters():
    english = [f"{n}a " + "an untranslated English paragraph of the manual, " * 3 for n in range(8)]
    chinese = [
        "一二三四五六七八"[n] + "这是已经翻译成中文的段落，内容比英文段落多。" * 4 for n in range(8)
    ]
    assert all(len(e) > len(c) for e in english for c in chinese)
    anchors = text_anchors("\n".join(english + chinese))
    by_chinese = text_anchors("\n".join(chinese))
    assert anchors.hashes == by_chinese.hashes


def test_the_compiled_unit_sizes_are_the_python_twins():
    compiled = analysis_anchors._UNIT_SIZES
    if compiled is None:
        pytest.skip(
            "the C accelerator is not built here (SCRAPY_SIMHASH_PURE_PYTHON or no compiler)"
        )
    rng = random.Random(5)
    alphabet = "ab 中文カナ한국\t\u3000\x1c\u2028.,é"
    for _ in range(500):
        lines = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(5)]
        assert compiled(lines, 10) == unit_sizes(lines, 10)


def compiled_or_skip(name: str):
    compiled = getattr(analysis_anchors, name)
    if compiled is None:
        pytest.skip(
            "the C accelerator is not built here (SCRAPY_SIMHASH_PURE_PYTHON or no compiler)"
        )
    return compiled


#: Line breaks of str.splitlines(), whitespace, letters that case-fold to others, kana,
#: Han, Hangul, punctuation: what the compiled loops tell apart.
_LINE_BREAKS = ["\n", "\r", "\r\n", "\n\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85"]
_LINE_BREAKS += ["\u2028", "\u2029"]
_ALPHABET = "ab Z \t\x1f\xa0\u3000\u2009.,!\u201c\u2014中文カナ한국ßµİΣﬁＡａ\U0001d400é\x00\x7f"


def random_text(rng: random.Random) -> str:
    """Lines of random lengths (many of 40 to 100 characters, as a wrapped text's), or
    the words of a random text wrapped at a random width."""
    if rng.random() < 0.3:
        text = " ".join(
            "".join(rng.choices("abcdefghij", k=rng.randint(1, 9))) + rng.choice(["", ".", ","])
            for _ in range(rng.randint(20, 200))
        )
        return textwrap.fill(text, rng.randint(40, 110))
    lines = []
    for _ in range(rng.randint(0, 30)):
        length = rng.choice([0, rng.randint(1, 30), rng.randint(40, 100), rng.randint(100, 300)])
        repeated = lines and rng.random() < 0.2  # a paragraph repeated, or one of its case
        line = rng.choice(lines[::2]) if repeated else "".join(rng.choices(_ALPHABET, k=length))
        lines.append(line.upper() if repeated and rng.random() < 0.5 else line)
        lines.append(rng.choice(_LINE_BREAKS))
    return "".join(lines[: rng.randint(max(0, len(lines) - 1), len(lines))])


#: Where a sentence ends, as its definition reads (a look-behind at every character).
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9])|(?<=[。！？])")


def reference_units(text: str) -> list[str]:
    """The units as their definition reads: a wrapped text's sentences; else each
    paragraph and each run of short lines that ends once it is long enough, after a line
    whose hash is 0 modulo 4, where a line of over 2,000 characters, or of over 320 that
    is more than half of the text, is its sentences, each a line."""
    lines = text.splitlines()
    if units(lines) != lines:
        return sentence_units(units(lines))
    half = sum(map(len, lines)) / 2
    lines = [
        piece
        for line in lines
        for piece in (
            SENTENCE_END.split(line) if len(line) > 2000 or 320 < len(line) > half else [line]
        )
    ]
    found, run = [], []
    for line in filter(anchor_form, lines):
        if len(anchor_form(line)) >= MIN_LINE_CHARS:
            found += ["\n".join(run)] if run else []
            found.append(line)
            run = []
            continue
        run.append(line)
        if len(anchor_form("\n".join(run))) >= MIN_LINE_CHARS and (
            zlib.crc32(anchor_form(line).encode("utf-8", "surrogatepass")) % 4 == 0
        ):
            found.append("\n".join(run))
            run = []
    return found + (["\n".join(run)] if run else [])


def reference_anchors(text: str, seed: bytes | None = None, count: int = DEFAULT_ANCHORS):
    """The anchors as their definition reads: every unit sized and normalised, ranked,
    and the first *count* distinct hashes of forms long enough taken; where none of those
    is a paragraph (one line of 160 characters of form or more), the last replaced by the
    largest paragraph not taken, if any."""
    _, sized = unit_sizes(reference_units(text), MIN_LINE_CHARS)
    chosen: dict[int, int] = {}
    paragraphs: list[tuple[int, int]] = []
    for size, unit in sorted(sized, key=lambda s: (-s[0], s[1])):
        form = anchor_form(unit)
        if len(form) < MIN_LINE_CHARS:
            continue
        anchor = to_signed32(hash_term(form, seed) & 0xFFFF_FFFF)
        if "\n" not in unit and len(form) >= 2 * MIN_LINE_CHARS:
            paragraphs.append((anchor, size))
        if len(chosen) < count:
            chosen.setdefault(anchor, size)
    if paragraphs and not any(anchor in chosen for anchor, _ in paragraphs):
        chosen.popitem()
        chosen.update([paragraphs[0]])
    return tuple(chosen), tuple(chosen.values())


@pytest.mark.slow
def test_the_anchors_are_those_of_their_definition():
    rng = random.Random(19)
    for _ in range(1500):
        text = random_text(rng)
        anchors = text_anchors(text, count=3)
        assert (anchors.hashes, anchors.sizes) == reference_anchors(text, count=3), text


def test_two_paragraphs_of_one_anchor_count_once():
    # Two paragraphs whose forms differ but whose anchors are one (found by trying).
    seen: dict[int, str] = {}
    for n in itertools.count():
        line = f"{n} " + "lorem ipsum dolor sit amet " * 4
        anchor = hash_term(anchor_form(line)) & 0xFFFF_FFFF
        if anchor in seen:
            break
        seen[anchor] = line
    first, second = sorted([seen[anchor], line])
    text = "\n".join([second, "x" * 100, first, "short"])
    anchors = text_anchors(text, count=2)
    assert len(anchors) == 2
    assert (anchors.hashes, anchors.sizes) == reference_anchors(text, count=2)


@pytest.mark.slow
def test_the_compiled_anchor_form_is_the_python_twin():
    compiled = compiled_or_skip("_ANCHOR_FORM")
    for point in range(0x10000):
        line = f"A{chr(point)} b{chr(point)}"
        assert compiled(line) == anchor_form(line), hex(point)
    rng = random.Random(3)
    for _ in range(3000):
        line = "".join(rng.choices(_ALPHABET, k=rng.choice([rng.randint(0, 60), 5000])))
        assert compiled(line) == anchor_form(line), line

    class Shouting(str):
        def casefold(self):
            return self.upper()

    assert compiled(Shouting("Quiet, please")) == anchor_form(Shouting("Quiet, please"))


def test_the_compiled_sketch_form_is_the_python_twin():
    # The anchor form with its numbers as they are: the same loop, told not to make them 0.
    from scrapy_simhash.analysis import sketch

    compiled = sketch._SKETCH_FORM
    if compiled is None:
        pytest.skip("the C accelerator is not built here")
    rng = random.Random(4)
    for _ in range(3000):
        line = "".join(rng.choices(_ALPHABET + "0123456789", k=rng.randint(0, 60)))
        assert compiled(line) == squeeze(line.casefold()), line
    assert compiled("Ver 2026-12-01, ipv6 1,250") == "ver 2026 12 01 ipv6 1 250"


def test_whitespace_beyond_latin_1_is_where_the_compiled_loops_look_for_it():
    # They look for whitespace among the characters U+0085, U+00A0, U+1680 and U+2000 to
    # U+3000 only, beyond ASCII.
    spaces = [point for point in range(0x80, 0x110000) if chr(point).isspace()]
    assert all(point in (0x85, 0xA0, 0x1680) or 0x2000 <= point <= 0x3000 for point in spaces)


def test_a_text_without_a_long_unit_has_no_anchors():
    assert not text_anchors("short\nlines\nonly")
    lines = (f"{'part ' * n}{SENTENCES[0]}" for n in range(20))
    assert len(text_anchors("\n".join(lines))) == DEFAULT_ANCHORS


def test_the_anchor_form_ignores_case_quotes_and_dashes():
    assert anchor_form("“Quoted” — Text") == anchor_form('"quoted" - text')


def test_the_anchor_form_reads_every_number_as_0_but_in_a_word():
    assert anchor_form("Released 2026-12-01: 1,250 fixes (3.5%)") == "released 0 0 0 0 0 fixes 0 0"
    assert anchor_form("2026年12月1日发布") == "0年0月0日发布"
    # Letters touching the digits make a name, not a number.
    assert anchor_form("IPv6 and ipv4, Python3 v2") == "ipv6 and ipv4 python3 v2"
    assert anchor_form("3rd edition") == "3rd edition"


# Texts whose anchors are pinned below: computed once, so that a faster way of computing
# them cannot change them unnoticed (a change of the anchors is a new ANCHORS_FORMAT).
_HAN = [
    "Debian 是一个自由的操作系统，由遍布世界各地的志愿者共同开发和维护。"
    "它以稳定著称，许多服务器和桌面系统都选择它作为基础，软件包的数量超过五万个。",
    "安装程序会先检测硬件，然后询问语言、键盘布局和网络设置。"
    "对于大多数用户来说，默认的选项已经足够，只需要在分区这一步稍加注意，避免覆盖已有的数据。",
    "软件包管理是 Debian 最重要的特性之一。APT 工具可以自动处理依赖关系，"
    "从镜像服务器下载所需的文件，并在升级时保持系统的一致性，管理员因此节省了大量时间。",
    "如果在安装过程中遇到问题，可以切换到第二个控制台查看日志。"
    "日志中通常记录了出错的原因，例如找不到驱动程序、网络无法连接或者磁盘空间不足等情况。",
    "安装完成后，系统会提示重新启动。请记得取出安装介质，否则计算机可能会再次从光盘或 U 盘启动，"
    "重新进入安装程序，而不是启动刚刚安装好的系统。",
]
#: A page of Chinese paragraphs (each of two sentences of _HAN), a heading and a link.
CHINESE = "\n".join(
    ["安装手册", *(a + b for a, b in zip(_HAN, _HAN[1:] + _HAN[:1], strict=True)), "返回首页"]
)
#: A page of English paragraphs, one of them of quotes, dashes and letters that case-fold
#: to others.
ENGLISH = "\n".join(
    [
        "Release notes",
        "The new release brings a faster package manager, which resolves dependencies in a "
        "fraction of the time the old one needed on large systems.",
        "Administrators who upgrade from the previous release should read the chapter on "
        "changed defaults first: the firewall is now enabled on new installations.",
        "Several desktop environments were updated, and the installer offers them in a menu; "
        "the choice can be changed later without reinstalling the system.",
        "The kernel supports more hardware than before, including recent graphics cards, "
        "wireless adapters and the storage controllers of many laptops.",
        "Support for the oldest architecture ends with this release, as announced two years "
        "ago; its users are advised to stay on the previous release.",
        "“Quoted” — the project's thanks go to every translator — ÉCOLE, Straße and ΣΊΣΥΦΟΣ "
        "are spelled in many ways, and the handbook's translators keep up.",
        "Copyright 2026",
    ]
)
#: A newswire story wrapped at 70 characters (its anchors are its sentences).
STORY = wrapped(70)
#: Both pages, the English one upper-cased, a line of characters without a simple case
#: folding and a paragraph repeated.
MIXED = "\n".join(
    [CHINESE, ENGLISH.upper(), "µ-Strasse ﬁnal ǅ İstanbul " * 4, CHINESE.splitlines()[1]]
)

SEED = b"0123456789abcdef"
PINNED = [
    (CHINESE, None, 3, (226597643, -1606207534, -670208198), (134, 133, 130), 397, 984),
    (
        CHINESE,
        None,
        8,
        (226597643, -1606207534, -670208198, -680699450, -940662080),
        (134, 133, 130, 130, 128),
        655,
        984,
    ),
    (
        CHINESE,
        None,
        16,
        (226597643, -1606207534, -670208198, -680699450, -940662080),
        (134, 133, 130, 130, 128),
        655,
        984,
    ),
    (CHINESE, SEED, 3, (-18056264, -1647089128, 746167152), (134, 133, 130), 397, 984),
    (
        CHINESE,
        SEED,
        8,
        (-18056264, -1647089128, 746167152, 1703034313, -1270532431),
        (134, 133, 130, 130, 128),
        655,
        984,
    ),
    (
        CHINESE,
        SEED,
        16,
        (-18056264, -1647089128, 746167152, 1703034313, -1270532431),
        (134, 133, 130, 130, 128),
        655,
        984,
    ),
    (ENGLISH, None, 3, (-261103066, -1081186103, 214520070), (25, 24, 24), 73, 972),
    (
        ENGLISH,
        None,
        8,
        (-261103066, -1081186103, 214520070, 651758940, -2022340866, -756550184),
        (25, 24, 24, 23, 23, 20),
        139,
        972,
    ),
    (
        ENGLISH,
        None,
        16,
        (-261103066, -1081186103, 214520070, 651758940, -2022340866, -756550184),
        (25, 24, 24, 23, 23, 20),
        139,
        972,
    ),
    (ENGLISH, SEED, 3, (-28635531, -623854264, 1317097262), (25, 24, 24), 73, 972),
    (
        ENGLISH,
        SEED,
        8,
        (-28635531, -623854264, 1317097262, -651738440, 525797586, -205016540),
        (25, 24, 24, 23, 23, 20),
        139,
        972,
    ),
    (
        ENGLISH,
        SEED,
        16,
        (-28635531, -623854264, 1317097262, -651738440, 525797586, -205016540),
        (25, 24, 24, 23, 23, 20),
        139,
        972,
    ),
    (STORY, None, 3, (-1312373502, 1859793420, 1919009926), (28, 25, 24), 77, 1000),
    (
        STORY,
        None,
        8,
        (-1312373502, 1859793420, 1919009926, 1232899645, 1673939231),
        (28, 25, 24, 22, 21),
        120,
        1000,
    ),
    (
        STORY,
        None,
        16,
        (-1312373502, 1859793420, 1919009926, 1232899645, 1673939231),
        (28, 25, 24, 22, 21),
        120,
        1000,
    ),
    (STORY, SEED, 3, (1311428975, 1404330091, 1300093300), (28, 25, 24), 77, 1000),
    (
        STORY,
        SEED,
        8,
        (1311428975, 1404330091, 1300093300, 578747815, -820689400),
        (28, 25, 24, 22, 21),
        120,
        1000,
    ),
    (
        STORY,
        SEED,
        16,
        (1311428975, 1404330091, 1300093300, 578747815, -820689400),
        (28, 25, 24, 22, 21),
        120,
        1000,
    ),
    (MIXED, None, 3, (226597643, -1606207534, -670208198), (134, 133, 130), 397, 985),
    (
        MIXED,
        None,
        8,
        (
            226597643,
            -1606207534,
            -670208198,
            -680699450,
            -940662080,
            -261103066,
            -1081186103,
            214520070,
        ),
        (134, 133, 130, 130, 128, 25, 24, 24),
        728,
        985,
    ),
    (
        MIXED,
        None,
        16,
        (
            226597643,
            -1606207534,
            -670208198,
            -680699450,
            -940662080,
            -261103066,
            -1081186103,
            214520070,
            651758940,
            -2022340866,
            -756550184,
            606861916,
        ),
        (134, 133, 130, 130, 128, 25, 24, 24, 23, 23, 20, 16),
        810,
        985,
    ),
    (MIXED, SEED, 3, (-18056264, -1647089128, 746167152), (134, 133, 130), 397, 985),
    (
        MIXED,
        SEED,
        8,
        (
            -18056264,
            -1647089128,
            746167152,
            1703034313,
            -1270532431,
            -28635531,
            -623854264,
            1317097262,
        ),
        (134, 133, 130, 130, 128, 25, 24, 24),
        728,
        985,
    ),
    (
        MIXED,
        SEED,
        16,
        (
            -18056264,
            -1647089128,
            746167152,
            1703034313,
            -1270532431,
            -28635531,
            -623854264,
            1317097262,
            -651738440,
            525797586,
            -205016540,
            1993337041,
        ),
        (134, 133, 130, 130, 128, 25, 24, 24, 23, 23, 20, 16),
        810,
        985,
    ),
]


@pytest.mark.parametrize(("text", "seed", "count", "hashes", "sizes", "words", "cover"), PINNED)
def test_the_anchors_of_known_texts_stay_what_they_were(
    text, seed, count, hashes, sizes, words, cover
):
    assert text_anchors(text, seed, count=count) == Anchors(hashes, sizes, words, cover)


def test_a_text_squeezed_to_one_line_is_anchored_by_its_sentences():
    sentences = [
        " ".join(paragraph.split()[:15]).capitalize() + "." for paragraph in prose(4000, 3)
    ]
    squeezed = " ".join(sentences)  # one line of about 9,500 characters
    assert "\n" not in squeezed and len(squeezed) > LONG_LINE_CHARS
    whole = text_anchors(squeezed)
    assert len(whole) == DEFAULT_ANCHORS
    cut = text_anchors(squeezed[: int(len(squeezed) * 0.9)])
    assert len(set(whole.hashes) & set(cut.hashes)) >= DEFAULT_ANCHORS - 2
    # The same sentences one to a line are the same units, and so the same anchors.
    assert text_anchors("\n".join(sentences)).hashes == whole.hashes
    # A paragraph of ordinary length among others stays one unit...
    others = ["\n".join(sentences[n : n + 3]) for n in (10, 20, 30)]
    paragraph = " ".join(sentences[:5])
    assert text_anchors("\n".join([paragraph, *others])).sizes[0] == len(paragraph.split())
    # ... but a shorter text squeezed into one line (most of the text, over 320
    # characters) is anchored by its sentences too, so that a copy cut by a tenth is found.
    short = " ".join(sentences[:12])
    assert SQUEEZED_LINE_CHARS < len(short) < LONG_LINE_CHARS
    whole, cut = text_anchors(short), text_anchors(short[: int(len(short) * 0.9)])
    assert len(whole) == DEFAULT_ANCHORS
    assert len(set(whole.hashes) & set(cut.hashes)) >= DEFAULT_ANCHORS - 2


def test_runs_of_short_lines_end_where_their_lines_say():
    # A digest of one-line items: a line deleted, or the last tenth cut, changes the runs
    # around the edit only, wherever it is.
    rng = random.Random(5)
    items = [" ".join(rng.choices(WORDS, k=rng.randint(3, 8))) for _ in range(120)]
    whole = line_runs(items)
    assert len(whole) > 10 and all(len(anchor_form(run)) >= MIN_LINE_CHARS for run in whole[:-1])
    changed = [
        len(set(whole) - set(line_runs(items[:drop] + items[drop + 1 :]))) for drop in range(120)
    ]
    # The runs meet again after the edit: at its run, or one or two later where the
    # boundary line came before the run was long enough.
    assert max(changed) <= 4 and sum(c <= 2 for c in changed) >= 0.9 * len(changed), changed
    cut = line_runs(items[:108])
    assert len(set(whole) - set(cut)) <= 4
    # A paragraph ends the run before it and is a unit of its own.
    paragraph = SENTENCES[0]
    assert line_runs([items[0], paragraph, items[1]]) == [items[0], paragraph, items[1]]


def test_sentences_are_cut_where_the_definition_cuts_them():
    # The pattern jumps from mark to mark; the definition looks behind every character.
    rng = random.Random(23)
    pieces = ["Word", "x", ".", "!", "?", '"', ")", " ", "  ", "A", "7", "(", "。", "！", "a"]
    for _ in range(3000):
        text = "".join(rng.choices(pieces, k=rng.randint(0, 30)))
        assert sentences(text) == SENTENCE_END.split(text), text
