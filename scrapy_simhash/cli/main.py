"""The ``scrapy-simhash`` group and what every command shares: the project's settings,
the index location, common options, and library errors as one-line CLI errors.

The index is ``--index URI`` if given, else ``SIMHASH_INDEX_URI`` of the Scrapy project in
the working directory, else ``.scrapy/simhash.db`` (where the pipeline puts it).
Fingerprinting settings (``SIMHASH_TOP_N``, ``SIMHASH_SECRET``, ...) come from the same
project; ``-s NAME=VALUE`` overrides those a command uses, and is refused by the others.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TypeVar

import click

from ..analysis.fingerprint import format_fingerprint
from ..dedup import Analysis, Deduplicator
from ..durations import parse_cutoff
from ..exceptions import IndexNotFound, SimhashError
from ..index import open_index
from ..index.base import NearDuplicateIndex
from ..settings import SimhashSettings, index_uri, unknown_settings
from ..tools.fingerprinted import fingerprinted_text, item_from_source

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

#: Settings a command may honour: where the index is, and how texts are fingerprinted.
INDEX_SETTINGS = frozenset({"SIMHASH_INDEX_URI"})
FINGERPRINT_SETTINGS = frozenset(
    {
        "SIMHASH_TOP_N",
        "SIMHASH_SECRET",
        "SIMHASH_SEGMENTER",
        "SIMHASH_MIN_TERMS",
        "SIMHASH_MAX_TEXT_LENGTH",
        "SIMHASH_EXTRACTOR",
        "SIMHASH_REMOVE_BOILERPLATE",
        "SIMHASH_TEXT_FIELDS",
    }
)
C = TypeVar("C", bound=click.Command)


def honours(settings: frozenset[str], reason: str) -> Callable[[C], C]:
    """Declare the settings a command uses; ``-s`` for any other is refused with
    *reason* (why the command cannot use it) rather than silently ignored."""

    def mark(command: C) -> C:
        command.honoured_settings = settings  # type: ignore[attr-defined]
        command.refusal_reason = reason  # type: ignore[attr-defined]
        return command

    return mark


class SimhashGroup(click.Group):
    """Turns library errors into one-line CLI errors."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SimhashError as e:
            raise click.ClickException(str(e)) from None


class Env:
    """What every command needs: the project's settings and the index URI. Settings are
    read when a command asks for them, so that a setting one command cannot use (a bad
    SIMHASH_EXTRACTOR) does not break the others (``stats``)."""

    def __init__(self, overrides: dict[str, str]) -> None:
        self.overrides = overrides
        self._settings: SimhashSettings | None = None
        self._scrapy_settings: Any = None

    @property
    def scrapy_settings(self) -> Any:
        if self._scrapy_settings is None:
            from scrapy.utils.project import get_project_settings

            settings = get_project_settings()
            settings.setdict(self.overrides, priority="cmdline")
            self._scrapy_settings = settings
        return self._scrapy_settings

    @property
    def settings(self) -> SimhashSettings:
        if self._settings is None:
            self._settings = SimhashSettings.from_settings(self.scrapy_settings)
        return self._settings

    def text_of(self, value: str | bytes) -> str:
        """The text the pipeline fingerprints for the item behind *value* (a page, or a
        JSON object that is the item: see
        :func:`~scrapy_simhash.tools.fingerprinted.item_from_source`), with these settings'
        text fields, extractor and fallbacks."""
        if isinstance(value, bytes | bytearray):
            value = bytes(value).decode("utf-8", errors="replace")
        return fingerprinted_text(item_from_source(value, self.settings), self.settings)

    def index_uri(self, given: str | None, *, create: bool = False) -> str:
        """*given* (``--index``), else the project's index (see
        :func:`~scrapy_simhash.settings.index_uri`); *create* for a command that may
        create the index, which makes its directory as the crawl does."""
        if given:
            return given
        from scrapy.utils.project import data_path

        configured = self.scrapy_settings.get("SIMHASH_INDEX_URI")
        return index_uri(str(configured) if configured else None, data_path, create=create)

    def not_found(self, error: IndexNotFound, given: str | None) -> click.ClickException:
        """*error* with where the index was looked for and how to point elsewhere."""
        if given:
            hint = "(from --index); check the path or URI"
        elif self.scrapy_settings.get("SIMHASH_INDEX_URI"):
            hint = (
                f"(SIMHASH_INDEX_URI of the project in {os.getcwd()}); has the crawl run yet? "
                "Another index: --index URI"
            )
        else:
            from scrapy.utils.project import inside_project

            place = (
                "this Scrapy project" if inside_project() else f"{os.getcwd()}, no Scrapy project"
            )
            hint = (
                f"(the pipeline's default, looked for in {place}). cd into the Scrapy project "
                "that crawled, or point at the index with --index URI"
            )
        return click.ClickException(f"{error} {hint}")

    def open(
        self, given: str | None, *, read_only: bool = False, upgrade: bool = False
    ) -> NearDuplicateIndex:
        """Open an existing index (never creates one); *read_only* for commands that only
        read, which then also work on a read-only file system; *upgrade* to upgrade an
        index written by an earlier scrapy-simhash."""
        try:
            return open_index(
                self.index_uri(given), create=False, read_only=read_only, upgrade=upgrade
            )
        except IndexNotFound as e:
            raise self.not_found(e, given) from None

    def deduplicator(self, index: NearDuplicateIndex) -> Deduplicator:
        """A deduplicator for *index* with the project's fingerprinter, which must produce
        the index's kind of fingerprints."""
        config = self.settings
        theirs, ours = index.parameters.features, config.fingerprinter.signature
        if theirs != ours:
            raise click.ClickException(
                f"The index {index.location} holds fingerprints of features {theirs!r}, but "
                f"these settings make {ours!r}; run the command in the project that built the "
                "index, or set the same SIMHASH_TOP_N/SIMHASH_SECRET with -s"
            )
        return config.deduplicator(index)


def _parse_set(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict:
    overrides = {}
    for value in values:
        name, sep, setting = value.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{value!r} is not NAME=VALUE", ctx, param)
        overrides[name.strip()] = setting
    return overrides


def _refuse_unused(ctx: click.Context, overrides: dict[str, str]) -> None:
    """``-s`` values the command about to run cannot honour: an error with the reason."""
    if not overrides or ctx.invoked_subcommand is None:
        return
    command = ctx.command.get_command(ctx, ctx.invoked_subcommand)  # type: ignore[attr-defined]
    honoured = getattr(command, "honoured_settings", frozenset())
    unknown = unknown_settings(overrides)
    if unknown:
        raise click.UsageError(f"-s {unknown[0]}", ctx)
    for name in overrides:
        if name not in honoured:
            raise click.UsageError(
                f"-s {name}: '{ctx.invoked_subcommand}' cannot use it; "
                f"{getattr(command, 'refusal_reason', '')}",
                ctx,
            )


@click.group(cls=SimhashGroup, context_settings=CONTEXT_SETTINGS)
@click.option(
    "-s",
    "--set",
    "overrides",
    multiple=True,
    metavar="NAME=VALUE",
    callback=_parse_set,
    help="Override a setting of the project that the command uses, e.g. "
    "-s SIMHASH_TOP_N=64 (repeatable).",
)
@click.version_option(package_name="scrapy-simhash")
@click.pass_context
def main(ctx: click.Context, overrides: dict[str, str]) -> None:
    """Inspect and maintain a scrapy-simhash index, calibrate its threshold, and remove
    near-duplicates from exported feeds.

    The index is --index URI if given, else SIMHASH_INDEX_URI of the Scrapy project in
    the working directory, else .scrapy/simhash.db.

    \b
    Example:
      scrapy-simhash stats
      scrapy-simhash --set SIMHASH_TOP_N=64 check page.html --index sqlite:///crawl.db
    """
    _refuse_unused(ctx, overrides)
    ctx.obj = Env(overrides)


def index_option(f):
    return click.option(
        "--index",
        "index_uri",
        metavar="URI",
        help="The index: sqlite:///path.db, redis://host:6379/0, a path. "
        "[default: the project's SIMHASH_INDEX_URI, else .scrapy/simhash.db]",
    )(f)


def raw_csv_option(f):
    return click.option(
        "--raw-csv",
        is_flag=True,
        help="Write CSV cells as they are. By default a cell starting with = + - @ (or a "
        "tab or carriage return) gets a leading ' so that spreadsheets do not run it as "
        "a formula.",
    )(f)


def json_option(f):
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")(f)


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether paths *a* and *b* name one file: by name (``./``, ``../``, symlinks) and,
    where both exist, by identity (device and inode: a hard link is the same file under
    another name)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False  # one of them does not exist (yet): not the same file


def refuse_overwrite(
    outputs: list[tuple[str, os.PathLike[str]]], inputs: list, what: str = "an input"
) -> None:
    """Refuse each output (option, path) that is one of *inputs*, before anything is read
    or written."""
    for option, path in outputs:
        for given in inputs:
            if same_file(path, given):
                shown = (
                    ""
                    if os.path.realpath(path) == os.path.realpath(given)
                    else f" (the same file as {given}, a hard link)"
                )
                raise click.ClickException(
                    f"{option} {path} would overwrite {what}{shown}; choose another"
                )


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def cutoff(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """Callback of ``--older-than``/``--since``: a duration ago or a date -> seconds since
    the epoch; anything else is a usage error naming the option."""
    if value is None:
        return None
    try:
        return parse_cutoff(value)
    except ValueError as e:
        raise click.BadParameter(str(e), ctx, param) from None


def describe_analysis(analysis: Analysis) -> str:
    if analysis.kind == "empty":
        return "no text"
    if analysis.kind == "short":
        described = f"{analysis.terms} terms: too short for SimHash, matched on its exact text"
    else:
        described = f"{analysis.terms} terms, fingerprint {format_fingerprint(analysis.value)}"
    if analysis.fallback:
        described += f" (a wider text than the main text: {analysis.fallback}; see 'text')"
    return described


def interrupted(done: str, rest: str) -> None:
    """Ctrl-C during a command that commits in batches: say how far it got, exit 130."""
    click.echo(
        f"Interrupted after {done}; those are committed and the index is consistent. "
        f"Run the command again to {rest}.",
        err=True,
    )
    raise click.exceptions.Exit(130)
