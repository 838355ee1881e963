"""Durations and points in time as users write them: ``30d``, ``12h``, ``2026-01-31``.

One grammar for everything that takes a duration (a Redis index's ``ttl=``, the CLI's
``--older-than`` and ``--since``): a positive number with an optional unit, ``s``
(the default), ``m``, ``h``, ``d`` or ``w``.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

__all__ = ["duration", "parse_cutoff"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
#: The longest duration taken: 1000 years (a time that far back or ahead is still a date).
MAX_DURATION = 1000 * 365.25 * 86400


def duration(value: str) -> float:
    """Seconds in ``3600``, ``90s``, ``45m``, ``12h``, ``30d`` or ``2w``; raises
    ``ValueError`` for anything else, and for a duration that is not positive."""
    found = _DURATION.match(value)
    if not found or float(found[1]) <= 0:
        raise ValueError(
            f"{value!r} is not a duration: a positive number of seconds, or with a unit "
            "(90s, 45m, 12h, 30d, 2w)"
        )
    seconds = float(found[1]) * _UNITS[found[2].lower()]
    if seconds > MAX_DURATION:
        raise ValueError(
            f"{value!r} is longer than 1000 years, which no date can go back or forward by"
        )
    return seconds


def parse_cutoff(value: str, now: float | None = None) -> float:
    """A duration (that long before *now*) or an ISO date/time (UTC unless it says
    otherwise) -> seconds since the epoch; raises ``ValueError`` for anything else."""
    now = time.time() if now is None else now
    try:
        return now - duration(value)
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(
            f"{value!r} is neither a duration (30d, 12h, 90m, 2w) nor a date (2026-01-31)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()
