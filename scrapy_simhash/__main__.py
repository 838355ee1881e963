"""``python -m scrapy_simhash``: the same as the ``scrapy-simhash`` command."""

from .cli import main

main(prog_name="scrapy-simhash")
