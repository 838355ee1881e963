"""What a backend stores and reads for :class:`~.policy.Index`: the store Protocol.

An index is a policy over a store, as Scrapy's HTTP cache is a policy over a storage:
:class:`~.policy.Index` holds the parameters, asks :func:`~.rule.decide` and says what a
check answers; a store (memory, SQLite, Redis) holds the connection, the format and the
atomic step of a check, and translates its driver's errors into ours. Neither knows the
other's insides: the store hands the policy what it read as a :class:`Reading`, and the
policy hands back a :class:`~.rule.Decision`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..anchors import Anchors
from ..sketch import Sketch
from .analysed import Analysed
from .parameters import IndexParameters
from .rule import Candidate, Decision, Probe
from .stored import DropRecord, StoredPage

if TYPE_CHECKING:
    from .journal import Journal

__all__ = ["Checked", "Decide", "Page", "Reading", "Store"]


class Reading(Protocol):
    """The candidates of a page as one atomic read found them."""

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        """The stored pages within *max_distance*, nearest first."""
        ...

    def anchored(self, probe: Probe) -> list[Candidate]:
        """The stored pages sharing long paragraphs with *probe* (see
        :func:`~.rule.anchor_candidates`)."""
        ...


#: The policy's verdict on what a reading found (see :meth:`Store.check`).
Decide = Callable[[Reading], Decision]


@dataclass(frozen=True)
class Page:
    """A page a check may store: its probe (key as stored, fingerprint, anchors and
    sketch) and how its text was read. *shares*: the verdict measures shares, so a
    reading brings the candidates' sketches (else it may leave them out)."""

    probe: Probe
    analysed: Analysed | None = None
    shares: bool = True

    @property
    def anchors(self) -> Anchors | None:
        return self.probe.anchors

    @property
    def sketch(self) -> Sketch | None:
        return self.probe.sketch


@dataclass(frozen=True)
class Checked:
    """What a store's check did: the last verdict asked (``None`` when nothing was read
    that needed one), and how many entries under the page's key it replaced when it
    stored the page (``None``: not stored, the verdict names the match)."""

    decision: Decision | None
    replaced: int | None


@runtime_checkable
class Store(Protocol):
    """The storage of one index. Each method raises the package's errors (naming
    :attr:`location`), never its driver's; :meth:`read_parameters` and :meth:`create`
    are called inside :meth:`errors`."""

    #: Where the store lives, for messages (never contains a password).
    location: str

    def errors(self, doing: str) -> AbstractContextManager[None]:
        """Turn the driver's errors into ours, naming the store and *doing*."""
        ...

    def read_parameters(self) -> IndexParameters | None:
        """The parameters stored, ``None`` where there is no index yet."""
        ...

    def create(self, parameters: IndexParameters) -> IndexParameters:
        """Create the index; return what is stored then (a racing creator may win)."""
        ...

    def opened(self, parameters: IndexParameters, max_distance: int) -> None:
        """The parameters are checked: lay out what depends on them."""
        ...

    def check(self, page: Page, decide: Decide) -> Checked:
        """Atomically: read the candidates of *page*, ask *decide*, and store *page*
        (replacing its key's entries) exactly when the verdict matched nothing."""
        ...

    def check_exact(
        self, digest: int, key: str, analysed: Analysed | None
    ) -> tuple[str, float] | int:
        """Atomically: the ``(key, added_at)`` stored under *digest*, or, with none,
        store it under *key* and return how many entries it replaced."""
        ...

    def read(self, page: Page, decide: Decide) -> Decision:
        """One reading of *page*'s candidates, the verdict on it; nothing stored."""
        ...

    def near(self, fingerprint: int, max_distance: int) -> list[Candidate]:
        """The stored pages within *max_distance*, nearest first (a query)."""
        ...

    def count(self) -> int: ...

    def add_drop(self, record: DropRecord) -> None:
        """Append *record* to the audit log."""
        ...

    def drops(self, since: float | None) -> Iterator[DropRecord]: ...

    def expire_drops(self, older_than: float) -> int: ...

    def pages(self) -> Iterator[StoredPage]: ...

    def find(self, key: str) -> list[StoredPage]: ...

    def add_pages(self, pages: Iterable[StoredPage]) -> int: ...

    def forget(self, key: str) -> int: ...

    def expire(self, older_than: float) -> int: ...

    def size(self) -> int | None: ...

    def compact(self) -> bool: ...

    def journal(self, crawl: str | None, **kwargs: object) -> Journal:
        """The crawl journal, its rows kept by this store."""
        ...

    def close(self) -> None: ...
