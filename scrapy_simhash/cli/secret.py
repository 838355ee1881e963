"""A random key for ``SIMHASH_SECRET``: ``secret``."""

from __future__ import annotations

import secrets

import click

from ..analysis.fingerprint import SEED_BYTES
from .main import honours, main


@honours(frozenset(), "it only prints a new random key")
@main.command(short_help="Print a new random key for SIMHASH_SECRET.")
def secret() -> None:
    """Print a new random 128-bit key (32 hex digits) for SIMHASH_SECRET. A random key
    cannot be guessed from the key id an index stores; a passphrase can, if it is weak.
    Changing the secret needs a new index: the pages of one cannot be checked with another.

    \b
    Example:
      scrapy-simhash secret
    """
    key = secrets.token_hex(SEED_BYTES)
    click.echo(f"SIMHASH_SECRET = {key!r}  # keep it out of public code and logs")
