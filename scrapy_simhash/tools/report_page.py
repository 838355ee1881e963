"""The pieces of ``scrapy-simhash report``'s HTML page that hold no data of their own:
its style, its filter script, and bar charts in inline SVG. No network, no CDN."""

from __future__ import annotations

import html

__all__ = ["SCRIPT", "STYLE", "bar_chart", "link"]

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: .5em 0; }
td, th { border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }
td.n { text-align: right; }
.charts { display: flex; flex-wrap: wrap; gap: 2em; }
.cluster { border: 1px solid #bbb; border-radius: 4px; padding: .4em .9em; margin: .8em 0;
  content-visibility: auto; contain-intrinsic-size: auto 12em; }
.cluster h3 { margin: .3em 0; font-size: 1.05em; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; margin: .5em 0; }
.pair > div { border: 1px solid #ddd; padding: .5em; max-height: 24em; overflow: auto;
  white-space: pre-wrap; font-size: .9em; }
.pair h4 { margin: 0 0 .3em 0; font-size: .9em; word-break: break-all; }
mark { background: #fde68a; }
ins { background: #bfdbfe; text-decoration: none; }
.key { display: inline-block; width: 1em; height: 1em; vertical-align: middle; }
.note { color: #555; font-size: .92em; }
#filter { width: 30em; padding: .3em; font-size: 1em; }
pre { background: #f6f6f6; padding: .6em; overflow: auto; }
"""

SCRIPT = """
(function () {
  var input = document.getElementById('filter');
  var shown = document.getElementById('shown');
  function apply() {
    var q = input.value.trim().toLowerCase();
    var count = 0;
    document.querySelectorAll('[data-filter]').forEach(function (el) {
      var hit = !q || el.getAttribute('data-filter').indexOf(q) >= 0;
      el.hidden = !hit;
      if (hit && el.classList.contains('cluster')) { count++; }
    });
    shown.textContent = count;
  }
  input.addEventListener('input', apply);
  if (location.hash.indexOf('#filter=') === 0) {
    input.value = decodeURIComponent(location.hash.slice(8));
  }
  apply();
})();
"""

_W, _H, _M = 460, 220, 34


def bar_chart(bars: list[tuple[str, int]], *, label: str, colour: str, css_class: str) -> str:
    """A bar chart of ``(name, count)`` in inline SVG, each bar titled with its count."""
    peak = max([n for _, n in bars] + [1])
    plot_w, plot_h = _W - 2 * _M, _H - 2 * _M
    slot = plot_w / max(1, len(bars))
    parts = [
        f'<svg class="{css_class}" xmlns="http://www.w3.org/2000/svg" width="{_W}" '
        f'height="{_H}" viewBox="0 0 {_W} {_H}" role="img" aria-label="{html.escape(label)}">',
        f'<text x="{_M}" y="{_M - 14}" font-size="12">{html.escape(label)} (peak {peak})</text>',
        f'<line x1="{_M}" y1="{_M + plot_h}" x2="{_M + plot_w}" y2="{_M + plot_h}" stroke="#333"/>',
    ]
    every = max(1, len(bars) // 16)
    for n, (name, count) in enumerate(bars):
        x = _M + n * slot
        if count:
            h = max(1.0, plot_h * count / peak)
            parts.append(
                f'<rect x="{x + 0.1 * slot:.1f}" y="{_M + plot_h - h:.1f}" '
                f'width="{0.8 * slot:.1f}" height="{h:.1f}" fill="{colour}">'
                f"<title>{html.escape(name)}: {count}</title></rect>"
            )
        if n % every == 0:
            parts.append(
                f'<text x="{x + slot / 2:.1f}" y="{_M + plot_h + 14}" font-size="10" '
                f'text-anchor="middle">{html.escape(name)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)


def link(key: str) -> str:
    """*key*, a link where it is a URL."""
    text = html.escape(key)
    if key.startswith(("http://", "https://", "file://")):
        return f'<a href="{html.escape(key, quote=True)}">{text}</a>'
    return text
