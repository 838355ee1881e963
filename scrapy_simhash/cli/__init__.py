"""The ``scrapy-simhash`` command: inspect, maintain and calibrate an index; dedup feeds.

Each command is a thin wrapper: it opens the index, calls one library function, prints.
Library errors (:class:`~scrapy_simhash.exceptions.SimhashError`) become one-line errors
with exit status 1. The commands are grouped by what users do:

* :mod:`.inspect`: ``stats``, ``check``, ``explain``, ``dropped``
* :mod:`.maintain`: ``export``, ``import``, ``expire``, ``forget``, ``vacuum``
* :mod:`.feeds`: ``dedup``
* :mod:`.calibrate`: ``calibrate``
* :mod:`.text`: ``text``, the text fingerprinted for a page and why
* :mod:`.report`: ``report``, an HTML page of the clusters
* :mod:`.rules`: ``rules``, the URL rules learned to skip predicted copies
* :mod:`.secret`: ``secret``

:mod:`.main` holds the group, the shared options and the project's settings.
"""

from __future__ import annotations

from ..durations import parse_cutoff

# Imported for their commands, which register themselves on the group.
from . import calibrate, feeds, inspect, maintain, report, rules, secret, text  # noqa: F401
from .main import main

__all__ = ["main", "parse_cutoff"]
