"""Paragraphs of made-up prose from a seeded generator, for the tests of sketches and the
rule: texts of any length whose shares of one another are known by construction."""

from __future__ import annotations

import random

_VOCABULARY = (
    "council tram line budget river bridge school library harbour station market "
    "museum garden road festival mayor vote plan city north south east west winter "
    "summer rain report figure cost year month week street park housing water power"
)
WORDS = tuple(_VOCABULARY.split())


def prose(words: int, seed: int) -> list[str]:
    """Paragraphs of 40 words drawn from WORDS with a generator seeded by *seed*."""
    rng = random.Random(seed)
    flat = [rng.choice(WORDS) for _ in range(words)]
    return [" ".join(flat[i : i + 40]) for i in range(0, words, 40)]


def contents_entries(count: int = 60, seed: int = 8) -> list[str]:
    """The lines of a table of contents: a name and a few words of description each
    (``ALTER TABLE — change a table``), too short to be paragraphs, of words of their own
    (not of :data:`WORDS`)."""
    rng = random.Random(seed)
    names = ["".join(rng.choices("abcdefghiklmnoprstu", k=rng.randint(4, 9))) for _ in range(400)]
    return [
        f"{rng.choice(names).upper()} — " + " ".join(rng.choices(names, k=rng.randint(1, 4)))
        for _ in range(count)
    ]
