"""Pages of sites with a template that an extractor leaves in the main text: articles,
a sidebar of recent posts and notes, an article reposted into another site's template."""

from __future__ import annotations

from crawls import page_text


def paragraph(number: int) -> str:
    """A paragraph of 60 pseudo-words (about 420 characters), unlike any other."""
    return page_text(number)


def article(number: int, paragraphs: int = 3) -> list[str]:
    return [paragraph(1000 * number + i) for i in range(paragraphs)]


def sidebar(site: int) -> list[str]:
    """A site's sidebar as an extractor may leave it in the main text: a list of recent
    posts (short lines) and a long note."""
    titles = [f"Recent post {site} {page_text(50_000 + site * 10 + i)[:40]}" for i in range(8)]
    return [*titles, paragraph(90_000 + site), paragraph(91_000 + site)]


def text(*parts: list[str]) -> str:
    return "\n".join(line for part in parts for line in part)


def reposted(host_sidebar: int) -> list[tuple[str, str]]:
    """Site 1's article (its main text: the article alone), then site 2's own, then site
    1's article reposted into site 2, where the main text keeps the sidebar."""
    return [
        ("https://one.test/a", text(article(1))),
        ("https://two.test/b", text(article(2), sidebar(host_sidebar))),
        ("https://two.test/repost", text(article(1), sidebar(host_sidebar))),
    ]
