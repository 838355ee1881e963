"""Small sites whose distinct pages share a block with their siblings: a help site's menu
pages sharing a note box, a blog's list pages sharing a sidebar, a quotes site's tag pages
sharing one quote, and a documentation site with an alphabetical index, a table of
contents and a licence footer on every page. Markup as the usual generators write it
(a help system's HTML export, a WordPress theme, a quotes site, Sphinx)."""

from __future__ import annotations

NOTE = (
    "Menu commands that edit, view, arrange, format and print a document are only available "
    "while a document is open and active. The active document is the one shown on the "
    "screen; to apply a command to an object, select the object first."
)


def menu_page(app: str, items: list[tuple[str, str]]) -> str:
    """A help site's page of menus: a heading and a one-line description per menu, beside
    the note box every such page carries."""
    sections = "".join(
        f'<div class="embedded"><h2><a href="{app}/{w}.html">{w.title()}</a></h2>'
        f'<p class="paragraph">{s}</p></div>'
        for w, s in items
    )
    return (
        f'<html><head><meta charset="utf-8"><title>{app} menus</title></head><body>'
        f'<header><a href="/">Help</a></header><div id="DisplayArea"><h1>{app} menus</h1>'
        f"<p>These are the menus, submenus and dialogs of {app}.</p>"
        f'<div class="note"><p>{NOTE}</p></div>{sections}</div></body></html>'
    )


DRAW = menu_page(
    "Draw",
    [
        ("file", "General commands for drawings: open, close and print."),
        ("shape", "Manages the shape objects of a drawing."),
        ("page", "Page management and navigation of drawings."),
    ],
)
CALC = menu_page(
    "Calc",
    [
        ("sheet", "Inserts, deletes and renames the sheets of a workbook."),
        ("data", "Sorts, filters and validates ranges of cells."),
        ("styles", "Cell styles and conditional formats of a spreadsheet."),
    ],
)

_ABOUT = (
    "Hi, I am Clara. I bake bread at home, grow tomatoes on a small balcony in Leipzig and "
    "write about both when the dough is rising. This blog started in 2014 as a notebook of "
    "failed loaves and slowly became a place where readers send me their own recipes, "
    "questions about sourdough starters and photos of their harvests."
)
_RECENT = [
    "Rye sourdough with caraway",
    "Why my starter smelled of nail polish",
    "Balcony tomatoes in a cold June",
    "A week of flatbreads",
    "Proofing baskets compared",
]
_TAGS = ["bread", "sourdough", "rye", "tomatoes", "balcony", "flatbread", "baskets", "winter"]
_MONTHS = ["May 2024", "April 2024", "March 2024", "February 2024", "January 2024"]


def blog_list_page(title: str, posts: list[tuple[str, str, str]]) -> str:
    """A WordPress list page (a tag, category or archive page): one to three post titles
    with their dates, beside a sidebar of an about box, recent posts, tags and archives
    that is most of the page."""
    entries = "".join(
        f'<article class="post type-post status-publish hentry"><header class="entry-header">'
        f'<div class="entry-meta"><span class="posted-on"><time>{date}</time></span></div>'
        f'<h2 class="entry-title"><a href="/{slug}/" rel="bookmark">{name}</a></h2>'
        f"</header></article>"
        for name, slug, date in posts
    )
    recent = "".join(f'<li><a href="/{n.lower().replace(" ", "-")}/">{n}</a></li>' for n in _RECENT)
    tags = " ".join(f'<a href="/tag/{t}/" class="tag-cloud-link">{t}</a>' for t in _TAGS)
    months = "".join(f'<li><a href="/{m.split()[1]}/">{m}</a></li>' for m in _MONTHS)
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title} – '
        f'Crumbs and Leaves</title></head><body class="archive tag">'
        f'<div id="page" class="site"><header id="masthead" class="site-header">'
        f'<p class="site-title"><a href="/">Crumbs and Leaves</a></p>'
        f'<nav class="main-navigation"><ul><li><a href="/">Home</a></li>'
        f'<li><a href="/about/">About</a></li><li><a href="/recipes/">Recipes</a></li></ul>'
        f'</nav></header><div id="content" class="site-content"><div id="primary" '
        f'class="content-area"><main id="main" class="site-main"><header class="page-header">'
        f'<h1 class="page-title">{title}</h1></header>{entries}</main></div>'
        f'<aside id="secondary" class="widget-area">'
        f'<section class="widget widget_text"><h2 class="widget-title">About</h2>'
        f'<div class="textwidget"><p>{_ABOUT}</p></div></section>'
        f'<section class="widget widget_recent_entries"><h2 class="widget-title">Recent '
        f"Posts</h2><ul>{recent}</ul></section>"
        f'<section class="widget widget_tag_cloud"><h2 class="widget-title">Tags</h2>'
        f'<div class="tagcloud">{tags}</div></section>'
        f'<section class="widget widget_archive"><h2 class="widget-title">Archives</h2>'
        f"<ul>{months}</ul></section></aside></div>"
        f'<footer id="colophon" class="site-footer"><div class="site-info">'
        f"© 2024 Crumbs and Leaves. Proudly powered by WordPress.</div></footer>"
        f"</div></body></html>"
    )


BLOG_TAG_RYE = blog_list_page(
    "Tag: rye",
    [
        ("Rye sourdough with caraway", "rye-sourdough-with-caraway", "May 12, 2024"),
        ("Dark rye for the winter", "dark-rye-for-the-winter", "January 3, 2024"),
    ],
)
BLOG_TAG_BALCONY = blog_list_page(
    "Tag: balcony",
    [("Balcony tomatoes in a cold June", "balcony-tomatoes-in-a-cold-june", "June 2, 2024")],
)

_QUOTE = (
    "“The world as we have created it is a process of our thinking. It cannot be changed "
    "without changing our thinking.”",
    "Albert Einstein",
    ["change", "deep-thoughts", "thinking", "world"],
)
_TOP_TAGS = ["love", "inspirational", "life", "humor", "books", "reading", "friendship"]


def quotes_tag_page(tag: str) -> str:
    """A quotes site's tag page: the quotes tagged so (here one, which every one of its
    tags' pages shows), the top tags beside, a footer."""
    text, author, tags = _QUOTE
    tag_links = " ".join(f'<a class="tag" href="/tag/{t}/">{t}</a>' for t in tags)
    top = "".join(
        f'<span class="tag-item"><a class="tag" href="/tag/{t}/">{t}</a></span>' for t in _TOP_TAGS
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><title>Quotes to '
        f'Scrape</title></head><body><div class="container"><div class="row header-box">'
        f'<div class="col-md-8"><h1><a href="/">Quotes to Scrape</a></h1></div>'
        f'<div class="col-md-4"><p><a href="/login">Login</a></p></div></div>'
        f'<h3>Viewing tag: <a href="/tag/{tag}/page/1/">{tag}</a></h3>'
        f'<div class="row"><div class="col-md-8"><div class="quote"><span class="text">'
        f'{text}</span><span>by <small class="author">{author}</small> <a href="/author/'
        f'{author.replace(" ", "-")}">(about)</a></span><div class="tags">Tags: {tag_links}'
        f'</div></div><nav><ul class="pager"></ul></nav></div><div class="col-md-4 '
        f'tags-box"><h2>Top Ten tags</h2>{top}</div></div></div><footer class="footer">'
        f'<div class="container"><p class="text-muted">Quotes by: <a href="https://www.'
        f'goodreads.com/quotes">GoodReads.com</a></p><p class="copyright">Made with '
        f'<span class="sh-red">❤</span> by <a href="https://www.zyte.com">Zyte</a></p>'
        f"</div></footer></body></html>"
    )


_LICENCE = (
    "© Copyright 2001-2024, Example Software Foundation. This page is licensed under the "
    "Example Software Foundation License Version 2. Examples, recipes, and other code in the "
    "documentation are additionally licensed under the Zero Clause BSD License. See History "
    "and License for more information."
)


def doc_page(title: str, body: str) -> str:
    """A Sphinx page: the related bar, the body, the sidebar, the licence footer."""
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8" /><title>{title} — '
        f'Example 3.2 documentation</title></head><body><div class="related" '
        f'role="navigation" aria-label="related navigation"><h3>Navigation</h3><ul>'
        f'<li><a href="genindex.html" title="General Index">index</a></li>'
        f'<li><a href="modules.html">modules</a> |</li><li><a href="index.html">Example '
        f'3.2 documentation</a> »</li></ul></div><div class="document"><div '
        f'class="documentwrapper"><div class="bodywrapper"><div class="body" role="main">'
        f'{body}</div></div></div><div class="sphinxsidebar" role="navigation" '
        f'aria-label="main navigation"><div class="sphinxsidebarwrapper"><h3>This Page</h3>'
        f'<ul><li><a href="_sources/page.rst.txt">Show Source</a></li></ul></div></div>'
        f'</div><div class="footer">{_LICENCE}<br />Last updated on Nov 02, 2024.</div>'
        f"</body></html>"
    )


def index_letter_page(letter: str, entries: list[str]) -> str:
    """An alphabetical index page: entries that are links, and nothing else."""
    rows = "".join(f'<li><a href="library/{e.split()[0]}.html#x">{e}</a></li>' for e in entries)
    return doc_page(
        f"Index – {letter}",
        f'<h1 id="index-{letter}">Index – {letter}</h1><table class="indextable"><tr>'
        f'<td style="width: 33%; vertical-align: top;"><ul>{rows}</ul></td></tr></table>',
    )


def chapter_page(title: str, paragraphs: list[str]) -> str:
    return doc_page(
        title,
        f'<section id="s"><h1>{title}</h1>'
        + "".join(f"<p>{p}</p>" for p in paragraphs)
        + "</section>",
    )


TUTORIAL = [
    "Python is an easy to learn, powerful programming language. It has efficient high-level "
    "data structures and a simple but effective approach to object-oriented programming. "
    "Its elegant syntax and dynamic typing, together with its interpreted nature, make it an "
    "ideal language for scripting and rapid application development in many areas.",
    "The interpreter and the extensive standard library are freely available in source or "
    "binary form for all major platforms from the web site, and may be freely distributed. "
    "The same site also contains distributions of and pointers to many free third party "
    "modules, programs and tools, and additional documentation.",
    "This tutorial introduces the reader informally to the basic concepts and features of "
    "the language and system. It helps to have an interpreter handy for hands-on "
    "experience, but all examples are self-contained, so the tutorial can be read off-line.",
]


def doc_site() -> dict[str, str]:
    """File name -> page: index pages of a few entries each, a table of contents, a
    chapter, and two copies of that chapter (another version's, a printable one) that
    differ by a sentence: the drops a crawl should make, and none other."""
    pages = {
        "genindex-Y.html": index_letter_page(
            "Y", ["ycor() (in module turtle)", "year (datetime.date attribute)", "yield"]
        ),
        "genindex-Q.html": index_letter_page(
            "Q", ["qsize() (queue.Queue method)", "quantize() (decimal method)", "quit"]
        ),
        "genindex-Z.html": index_letter_page(
            "Z", ["ZeroDivisionError", "zfill() (str method)", "zip() (built-in function)"]
        ),
        "contents.html": doc_page(
            "Documentation contents",
            "<h1>Documentation contents</h1><ul>"
            + "".join(
                f'<li><a href="{n}.html">{n.title()} guide</a></li>'
                for n in ("tutorial", "library", "reference", "howto")
            )
            + "</ul>",
        ),
        "tutorial.html": chapter_page("The Python Tutorial", TUTORIAL),
        "tutorial-3.1.html": chapter_page(
            "The Python Tutorial", [*TUTORIAL[:2], TUTORIAL[2].replace("off-line", "offline")]
        ),
        "tutorial-print.html": chapter_page(
            "The Python Tutorial",
            [*TUTORIAL, "This printable version was generated from the online tutorial."],
        ),
    }
    return pages
