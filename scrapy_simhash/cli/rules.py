"""``rules``: the URL rules crawls with ``SIMHASH_SKIP_PREDICTED`` learned, and their skips."""

from __future__ import annotations

from datetime import datetime, timezone

import click

from ..index.skip_rules import SkippedRequest, skip_rules_for
from ..tools.rules import rule_rows
from .main import INDEX_SETTINGS, Env, echo_json, honours, index_option, json_option, main

#: The settings ``rules`` reads: where the index is, and when a rule is confirmed.
RULES_SETTINGS = INDEX_SETTINGS | {"SIMHASH_SKIP_MIN_COPIES"}


@honours(RULES_SETTINGS, "it reads the URL rules; only SIMHASH_SKIP_MIN_COPIES applies")
@main.command(short_help="The URL rules learned per site, and the requests they skipped.")
@click.option("--skipped", is_flag=True, help="List the requests skipped as predicted copies.")
@click.option("--remove", "remove", metavar="RULE", help="Forget RULE (on every site, or --site).")
@click.option("--site", help="Only this site (host and port, e.g. docs.example:8080).")
@index_option
@json_option
@click.pass_obj
def rules(
    env: Env,
    skipped: bool,
    remove: str | None,
    site: str | None,
    index_uri: str | None,
    as_json: bool,
) -> None:
    """List the URL rules that crawls with SIMHASH_SKIP_PREDICTED learned from their drops,
    per site, with their evidence: copies they explained, distinct pages they would have
    lost (one retires a rule), requests they skipped. A rule is used once it explained
    SIMHASH_SKIP_MIN_COPIES copies and no distinct page.

    \b
    Example:
      scrapy-simhash rules
      scrapy-simhash rules --skipped --json
      scrapy-simhash rules --remove query:-ref --site news.example
    """
    if remove is not None:
        _remove(env, index_uri, remove, site)
        return
    with env.open(index_uri, read_only=True) as index:
        store = skip_rules_for(index)
        found = store.skipped() if skipped else store.rules(site)
    if skipped:
        _echo_skipped([s for s in found if site is None or s.site == site], as_json)
        return
    rows = rule_rows(found, env.settings.skip_min_copies)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo(f"No URL rules in {index.location} (see SIMHASH_SKIP_PREDICTED).")
        return
    click.echo(f"{'site':24} {'rule':32} {'state':9} {'copies':>6} {'distinct':>8} {'skipped':>7}")
    for row in rows:
        click.echo(
            f"{row['site']:24} {row['rule']:32} {row['state']:9} {row['copies']:6} "
            f"{row['distinct']:8} {row['skipped']:7}"
        )


def _remove(env: Env, index_uri: str | None, rule: str, site: str | None) -> None:
    """``rules --remove``: forget *rule* on every site, or on *site*."""
    with env.open(index_uri) as index:
        removed = skip_rules_for(index).remove(rule, site)
    if not removed:
        raise click.ClickException(f"No URL rule {rule!r}" + (f" on {site}" if site else ""))
    click.echo(f"Removed the URL rule {rule} from {removed} site(s).")


def _echo_skipped(requests: list[SkippedRequest], as_json: bool) -> None:
    """``rules --skipped``: the requests skipped as predicted copies, oldest first."""
    if as_json:
        echo_json([vars(s) for s in requests])
        return
    for s in requests:
        at = datetime.fromtimestamp(s.at, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        click.echo(f"{at}  {s.url} -> {s.target}  ({s.rule})")
    click.echo(f"{len(requests)} requests skipped as predicted copies.")
