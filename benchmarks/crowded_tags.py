"""Time to read the text of a page whose one element has N attributes (libxml2 compares
each attribute with those before it), in the crawl's default mode (the builtin extractor,
in this process).

    python benchmarks/crowded_tags.py 5000 20000 40000 300000
"""

import sys
import time

from scrapy_simhash.extract.extractors import get_extractor
from scrapy_simhash.extract.fields import field_text

extractor = get_extractor("builtin")
for count in [int(arg) for arg in sys.argv[1:]] or [5000, 20000, 40000]:
    attributes = " ".join(f'a{i}="v"' for i in range(count))
    html = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        f"<div {attributes}><p>{'Some words of an article here. ' * 50}</p></div></body></html>"
    )
    start = time.perf_counter()
    text = field_text(html, extractor=extractor)
    print(f"{count:>7} attributes, {len(html):>9,} characters: {time.perf_counter() - start:.2f} s")
