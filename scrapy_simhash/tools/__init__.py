"""The offline functions behind the command line (feeds, export and import, rebuild,
calibration, reports, explanations, sources, archives): plain functions on an open index and a
:class:`~scrapy_simhash.dedup.Deduplicator`, without click or Scrapy.
"""
