"""Real crawler objects and pipelines, for the tests that drive a component directly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from scrapy.crawler import Crawler
from scrapy.utils.test import get_crawler

from scrapy_simhash import SimhashDedupPipeline

ROOT = Path(__file__).resolve().parents[1]


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a test's child process: this one's, with *extra*, and the
    package under test importable whether or not it is installed."""
    variables = dict(os.environ, **extra)
    variables["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    return variables


def run_pure_python(code: str, data: object) -> object:
    """Run *code* in a new interpreter without the C accelerator
    (``SCRAPY_SIMHASH_PURE_PYTHON=1``), from the project's root, with *data* as JSON on
    its stdin; return the JSON it prints."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        env=subprocess_env(SCRAPY_SIMHASH_PURE_PYTHON="1"),
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


ARTICLE = (
    "The city council approved a new tram line on Tuesday after a long debate about costs. "
    "The line will connect the harbour district with the university campus and the central "
    "station, and the first trams are expected to run in the spring of next year, according "
    "to the transport department. Residents of the eastern suburbs welcomed the decision, "
    "while shop owners along the planned route worried about two years of construction work, "
    "closed streets and fewer customers. The mayor promised compensation for affected shops."
)


def make_crawler(tmp_path, **settings) -> Crawler:
    """A crawler whose index is ``index.db`` in *tmp_path*, stats open; *settings* override."""
    base = {
        "SIMHASH_INDEX_URI": f"sqlite:///{tmp_path / 'index.db'}",
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
    }
    crawler = get_crawler(settings_dict={**base, **settings})
    crawler.stats.open_spider()
    return crawler


def make_pipeline(tmp_path, **settings) -> SimhashDedupPipeline:
    """An opened pipeline on :func:`make_crawler`."""
    pipeline = SimhashDedupPipeline.from_crawler(make_crawler(tmp_path, **settings))
    pipeline.open_spider()
    return pipeline


def simhash_stats(pipeline: SimhashDedupPipeline) -> dict:
    """The pipeline's ``simhash/...`` stats, without the prefix."""
    return {
        k.removeprefix("simhash/"): v
        for k, v in pipeline.stats.get_stats().items()
        if k.startswith("simhash/")
    }
