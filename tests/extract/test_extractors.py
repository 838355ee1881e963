"""Main-content extraction: the built-in rules, trafilatura as an option, and the setting."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from scrapy.utils.test import get_crawler

from scrapy_simhash.exceptions import ConfigurationError
from scrapy_simhash.extract.extractors import get_extractor
from scrapy_simhash.settings import SimhashSettings

ARTICLE = (
    "The city council approved a new tram line on Tuesday after a long debate about costs. "
    "The line will connect the harbour district with the university campus and the central "
    "station, and the first trams are expected to run in the spring of next year."
)
PAGE = f"""<html><head><meta charset="utf-8"><title>Tram</title></head>
<body class="nav-open">
<div id="banner">Download the ebook</div>
<ul class="docnav top"><li>Prev</li><li>Next</li></ul>
<div class="navbar"><a href="/">Home</a> | <a href="/news">News</a></div>
<div class="post-header-content"><h1>New tram line</h1></div>
<div class="entry"><p>{ARTICLE}</p>
<div class="ad">Sponsored: save 40% on cloud hosting this month.</div>
<p>Residents of the eastern suburbs welcomed the decision.</p></div>
<div id="comments"><p>Great article, thanks for sharing!</p></div>
<div class="site-footer">Copyright Example News. All rights reserved.</div>
</body></html>"""


def test_builtin_drops_chrome_marked_by_class_or_id_and_keeps_the_content():
    # The headline is the page's furniture, not the article's body: copies of one story
    # on two sites carry different headlines.
    text = get_extractor("builtin")(PAGE)
    assert text.splitlines() == [
        ARTICLE,
        "Residents of the eastern suburbs welcomed the decision.",
    ]
    assert text.fallback is None


def test_none_keeps_all_visible_text():
    text = get_extractor("none")(PAGE)
    for chrome in ("Download the ebook", "Prev", "Home", "Sponsored", "Great article", "Copyright"):
        assert chrome in text


@pytest.mark.corpus
def test_builtin_drops_the_handbook_template(corpora):
    page = (corpora / "debian-handbook" / "en-US" / "apt.html").read_text(encoding="utf-8")
    builtin, everything = get_extractor("builtin", body=False)(page), get_extractor("none")(page)
    assert everything.startswith("Download the ebook\nPrev")
    for template in ("Download the ebook", "The Debian Administrator's Handbook", "Prev5.5."):
        assert template not in builtin
    assert "6.1.1. Syntax\nEach active line in the /etc/apt/sources.list file" in builtin
    assert len(builtin) > 0.6 * len(everything)
    # What is fingerprinted: the body, without the section headings.
    body = get_extractor("builtin")(page)
    assert "Each active line in the /etc/apt/sources.list file" in body
    assert "6.1.1. Syntax" not in body and len(body) > 0.5 * len(builtin)


def test_trafilatura_extracts_the_main_text():
    pytest.importorskip("trafilatura", reason="extra [trafilatura] not installed")
    text = get_extractor("trafilatura")(PAGE)
    assert ARTICLE in text
    assert "Copyright" not in text and "Great article" not in text


def test_trafilatura_falls_back_to_builtin_when_it_finds_no_main_text():
    pytest.importorskip("trafilatura", reason="extra [trafilatura] not installed")
    tiny = "<html><body><div class='footer'>Imprint</div></body></html>"
    text = get_extractor("trafilatura")(tiny)
    assert text == get_extractor("builtin")(tiny)
    assert text.fallback == "trafilatura"


def test_trafilatura_runs_one_call_at_a_time(monkeypatch):
    # Concurrent trafilatura.extract calls corrupt the heap and kill the crawl; the pipeline
    # analyses in a thread pool. The real extract runs, wrapped to count callers inside it.
    trafilatura = pytest.importorskip("trafilatura", reason="extra [trafilatura] not installed")
    real, inside, most = trafilatura.extract, [0], [0]
    count = threading.Lock()

    def spy(*args, **kwargs):
        with count:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        try:
            time.sleep(0.01)  # long enough for the other threads to arrive
            return real(*args, **kwargs)
        finally:
            with count:
                inside[0] -= 1

    monkeypatch.setattr(trafilatura, "extract", spy)
    extract = get_extractor("trafilatura")
    with ThreadPoolExecutor(6) as pool:
        texts = list(pool.map(extract, [PAGE] * 24))
    assert all(ARTICLE in text for text in texts)
    assert most[0] == 1


def test_missing_trafilatura_is_a_clear_error():
    # A fresh interpreter where importing trafilatura fails, as it does when not installed.
    code = (
        "import sys; sys.modules['trafilatura'] = None\n"
        "from scrapy_simhash.extract.extractors import get_extractor\n"
        "try:\n    get_extractor('trafilatura')\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("ConfigurationError SIMHASH_EXTRACTOR='trafilatura' needs")
    assert "pip install 'scrapy-simhash[trafilatura]'" in out.stdout


def test_unknown_extractor_names_the_choices():
    with pytest.raises(ConfigurationError, match="'readability' is not one of builtin, traf"):
        get_extractor("readability")


@pytest.mark.parametrize(
    ("settings", "name"),
    [
        ({}, "builtin"),
        ({"SIMHASH_EXTRACTOR": "None"}, "none"),
        ({"SIMHASH_REMOVE_BOILERPLATE": False}, "none"),
        ({"SIMHASH_EXTRACTOR": "trafilatura", "SIMHASH_REMOVE_BOILERPLATE": False}, "trafilatura"),
    ],
)
def test_setting_selects_the_extractor(settings, name):
    if name == "trafilatura":
        pytest.importorskip("trafilatura", reason="extra [trafilatura] not installed")
    config = SimhashSettings.from_settings(get_crawler(settings_dict=settings).settings)
    assert config.extractor_name == name
    assert config.html_extractor(PAGE) == get_extractor(name)(PAGE)
