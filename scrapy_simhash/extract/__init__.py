"""HTML -> the text to fingerprint: what a reader sees (:mod:`.text`), the page's main text
(:mod:`.main_text`, with :mod:`.region`, :mod:`.chrome`, :mod:`.teasers`, :mod:`.marks`,
:mod:`.body` and :mod:`.own_blocks`),
the extractors a setting names (:mod:`.extractors`), and an item's fields (:mod:`.fields`).

No Scrapy import; below it only :mod:`scrapy_simhash.analysis` (character normalisation).
"""
