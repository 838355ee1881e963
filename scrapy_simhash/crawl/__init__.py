"""The Scrapy components: the add-on, the item pipeline, the spider middleware, the log
formatter, and what they share (:mod:`.setup`, :mod:`.deduplicator`, :mod:`.analyser`,
:mod:`.outcomes`, :mod:`.indexthread`, :mod:`.workers`).

Nothing is imported here: a worker process imports :mod:`.workers` without Scrapy.
"""
