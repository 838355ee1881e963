"""Text -> terms -> a 64-bit SimHash: character normalisation (:mod:`.nfkc`), words
(:mod:`.words`), attribution lines (:mod:`.attribution`), stop words
(:mod:`.function_words`), term weights (:mod:`.heaviest`, :mod:`.terms`) and the
fingerprint itself (:mod:`.fingerprint`). :mod:`.speedups` decides C or Python.

Knows nothing of HTML, of indexes or of Scrapy.
"""
