"""What ``scrapy-simhash rules`` shows: the URL rules crawls with ``SIMHASH_SKIP_PREDICTED``
learned, one row per site and rule, with their evidence and state."""

from __future__ import annotations

from typing import Any

from ..url_rules import Evidence, confirmed

__all__ = ["rule_rows"]


def _state(observations: int, distinct: int, min_copies: int) -> str:
    """``retired`` (a distinct page would have been lost), ``confirmed`` (it explained
    *min_copies* copies) or ``learning``."""
    if distinct:
        return "retired"
    return "confirmed" if observations >= min_copies else "learning"


def rule_rows(found: dict[tuple[str, str], Evidence], min_copies: int) -> list[dict[str, Any]]:
    """The rules *found* (``(site, rule)`` -> their evidence) as rows, by site, the rules
    with the most copies first."""
    return [
        {
            "site": where,
            "rule": rule,
            "state": _state(e.observations, e.distinct, min_copies),
            "copies": e.observations,
            "distinct": e.distinct,
            "skipped": e.skipped,
            "confirmed": confirmed(e, min_copies),
        }
        for (where, rule), e in sorted(
            found.items(), key=lambda kv: (kv[0][0], -kv[1].observations)
        )
    ]
