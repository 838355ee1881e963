"""The edits quality.py (a) and thresholds.py measure recall on: a real page or story and a
copy of it with one edit of a known kind (a paragraph deleted, an ad block inserted, a date
changed, a template changed, a cut...), and a short page with one word changed.
"""

from __future__ import annotations

import html as html_lib
import random
import re

import lxml.html
from quality_data import Doc, make_doc

from scrapy_simhash.analysis.terms import TermExtractor

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


def held_by_original(pair: tuple[Doc, Doc]) -> float:
    """The share of the copy's truth shingles that its original holds: what the lossless
    rule asks (a copy holding less of the original's text than 0.8 adds its own)."""
    original, copy = pair
    return len(copy.truth & original.truth) / len(copy.truth) if copy.truth else 1.0


def lossless_recall(pairs: list[tuple[Doc, Doc]], found: list[bool]) -> list[str]:
    """On originals of 2,000+ characters: the copies the original holds 0.8 of (by the
    truth) and how many are found, and those it holds less of, which the share check is
    right to keep, with how many are found all the same."""
    long = [(p, ok) for p, ok in zip(pairs, found, strict=True) if len(p[0].text) >= 2000]
    held = [ok for p, ok in long if held_by_original(p) >= 0.8]
    short = [ok for p, ok in long if held_by_original(p) < 0.8]
    cells = []
    for band in (held, short):
        cells.append(f"{sum(band)}/{len(band)} {sum(band) / len(band):.1%}" if band else "-")
    return cells
