"""Durations and points in time as users write them: ``30d``, ``12h``, ``2026-01-31``.

One grammar for everything that takes a duration (a Redis index's ``ttl=``, the CLI's
``--older-than`` and ``--since``): a number with an optional unit, ``s`` (the default),
``min``, ``h``, ``d`` or ``w``. ``m`` is refused: it reads as minutes to some and as
months to others (``expire --older-than 1m`` once removed every page of a day-old index).
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone

from .exceptions import ConfigurationError

__all__ = ["duration", "parse_cutoff"]

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$", re.IGNORECASE)
_UNITS = {"": 1, "s": 1, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_CHOICES = "90s, 45min, 12h, 30d, 2w"
#: The longest duration taken: 1000 years (a time that far back or ahead is still a date).
MAX_DURATION = 1000 * 365.25 * 86400


def duration(value: str, *, allow_zero: bool = False) -> float:
    """Seconds in ``3600``, ``90s``, ``45min``, ``12h``, ``30d`` or ``2w``; raises
    :class:`~scrapy_simhash.exceptions.ConfigurationError` (a ``ValueError``) for anything
    else, naming the choices; ``0`` only with *allow_zero*."""
    found = _DURATION.match(value)
    unit = found[2].lower() if found else ""
    if found and unit == "m":
        raise ConfigurationError(
            f"{value!r} is ambiguous: write {found[1]}min for minutes, or use days or weeks "
            f"for months ({_CHOICES})"
        )
    if not found or unit not in _UNITS:
        raise ConfigurationError(
            f"{value!r} is not a duration: a number of seconds, or with a unit ({_CHOICES})"
        )
    seconds = float(found[1]) * _UNITS[unit]
    if seconds <= 0 and not allow_zero:
        raise ConfigurationError(
            f"{value!r} is zero: nothing would be kept at all; give more than 0 ({_CHOICES})"
        )
    if seconds > MAX_DURATION:
        raise ConfigurationError(
            f"{value!r} is longer than 1000 years, which no date can go back or forward by"
        )
    return seconds


def parse_cutoff(value: str, now: float | None = None) -> float:
    """A duration (that long before *now*; ``0d`` is *now* itself: everything before this
    moment) or an ISO date/time (UTC unless it says otherwise) -> seconds since the
    epoch; raises ``ValueError`` for anything else."""
    now = time.time() if now is None else now
    try:
        return now - duration(value, allow_zero=True)
    except ConfigurationError as e:
        if _DURATION.match(value):  # a number with a unit that is wrong: say so
            raise ConfigurationError(f"{e}, or a date (2026-01-31)") from None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ConfigurationError(
            f"{value!r} is neither a duration ({_CHOICES}) nor a date (2026-01-31)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()
