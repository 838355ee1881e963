"""Every Unicode code point, as the tests that compare two implementations on all of them
take it: built on first use and once a process (a million strings cost a fraction of a
second and tens of MB, which a process that runs none of these tests need not pay)."""

from __future__ import annotations

from functools import cache

#: The lone surrogates, which a str may hold but UTF-8 does not.
SURROGATES = range(0xD800, 0xE000)


@cache
def every_character() -> tuple[str, ...]:
    """Every code point but the surrogates, in order."""
    return tuple(chr(p) for p in range(0x110000) if p not in SURROGATES)


@cache
def every_character_and_lone_surrogates() -> tuple[str, ...]:
    """:func:`every_character`, then the first and the last surrogate."""
    return (*every_character(), "\ud800", "\udfff")


@cache
def every_character_text() -> str:
    """:func:`every_character` as one string."""
    return "".join(every_character())
