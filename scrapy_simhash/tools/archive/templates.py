"""Sites' templates in an archive job (``SIMHASH_SITE_TEMPLATES``, see
:mod:`scrapy_simhash.template`): each record read with its site's template as the crawl's
check reads a page, learned from the records before it.

What a site's template is at a record depends on the records of the site before it alone
(every record read with a template teaches it, kept or not, and only the first
:data:`~scrapy_simhash.template.LEARN_PAGES` do): never on what is kept. The local engine
reads the records in order and learns as it goes (:class:`Learning`). The dask engine reads
partitions at once: a first pass finds each site's first records that teach it
(:func:`learners_of`, per partition; :func:`first_learners`, over all of them), and each
record's template is then made from those before it (:class:`Learned`): the same
templates, at the cost of reading those records twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Protocol

from ...analysis.template import read_with, text_blocks
from ...dedup import Analysis, AnalysisParams, site_read
from ...index.rule import sighting
from ...template import LEARN_PAGES, Template, site_of

#: A record that teaches its site's template: ``(order, page, blocks)``, its order in the
#: job, its sighting and its blocks (``block -> characters``).
Learner = tuple[int, int, dict[int, int]]


class Sites(Protocol):
    def template(self, site: str, order: int) -> Template:
        """The template of *site* at the record of *order*: learned from those before."""

    def learn(self, template: Template, blocks: dict[int, int], page: int) -> None:
        """The record just read (*page*, with *blocks*) teaches *template*."""


class Learning:
    """The local engine's: one template a site, learned as the records are read in order."""

    def __init__(self) -> None:
        self.templates: dict[str, Template] = {}

    def template(self, site: str, order: int) -> Template:
        return self.templates.setdefault(site, Template())

    def learn(self, template: Template, blocks: dict[int, int], page: int) -> None:
        template.learned(blocks, page)


class Learned:
    """The dask engine's: each site's first learners known, a record's template is made
    from those before it (at most :data:`~scrapy_simhash.template.LEARN_PAGES`)."""

    def __init__(self, learners: dict[str, list[Learner]]) -> None:
        self.learners = learners
        #: site -> its template made of all its learners, for the records after them
        self._whole: dict[str, Template] = {}

    def template(self, site: str, order: int) -> Template:
        learners = self.learners.get(site, [])
        if learners and order <= learners[-1][0]:
            return _made(learners, order)
        # After every learner of the site (most of its records): made once.
        whole = self._whole.get(site)
        if whole is None:
            whole = self._whole[site] = _made(learners, order)
        return whole

    def learn(self, template: Template, blocks: dict[int, int], page: int) -> None:
        """Nothing: what the record teaches is in the learners already."""


def _made(learners: list[Learner], order: int) -> Template:
    """The template *learners* (in order) teach the records before *order*."""
    template = Template()
    for learner_order, page, blocks in learners:
        if learner_order >= order:
            break
        template.learned(blocks, page)
    return template


def read_record(
    analysis: Analysis, key: str, order: int, sites: Sites, params: AnalysisParams
) -> Analysis:
    """*analysis* of the record under *key* (of *order*) read with its site's template, as
    :meth:`~scrapy_simhash.dedup.Deduplicator.check` reads a page; then it teaches the
    template."""
    site = site_read(analysis, key)
    if site is None:
        return analysis
    template = sites.template(site, order)
    page = sighting(key)
    read = read_with(template, page, analysis, params.seed, params.anchors)
    sites.learn(template, read.blocks, page)
    return replace(analysis, anchors=read.anchors, sketch=read.sketch, text="")


def learners_of(
    records: Iterable[tuple[int, str, Analysis]],
    seed: bytes | int | None,
    found: dict[str, list[Learner]] | None = None,
) -> dict[str, list[Learner]]:
    """The first :data:`~scrapy_simhash.template.LEARN_PAGES` learners of each site among
    *records* (``(order, key, analysis)``, in order), added to *found* as they come."""
    found = {} if found is None else found
    for order, key, analysis in records:
        site = site_read(analysis, key)
        if site is not None and len(found.setdefault(site, [])) < LEARN_PAGES:
            found[site].append((order, sighting(key), text_blocks(analysis.text, seed)))
    return found


def learnt(key: str, found: dict[str, list[Learner]]) -> bool:
    """Whether no record under *key* can be a learner beyond those *found*: it names no
    site, or its site's first learners are all found."""
    site = site_of(key)
    return site is None or len(found.get(site, ())) >= LEARN_PAGES


def first_learners(parts: Iterable[dict[str, list[Learner]]]) -> dict[str, list[Learner]]:
    """Each site's first learners over all the partitions' (see :func:`learners_of`)."""
    merged: dict[str, list[Learner]] = {}
    for found in parts:
        for site, learners in found.items():
            merged.setdefault(site, []).extend(learners)
    return {
        site: sorted(learners, key=lambda learner: learner[0])[:LEARN_PAGES]
        for site, learners in merged.items()
    }
