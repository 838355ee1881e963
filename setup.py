"""The optional C accelerator (everything else is in pyproject.toml).

Built from csrc/ into the module ``scrapy_simhash._speedups`` where a C compiler is present;
where it fails to build, the package installs without it and runs the same analysis in pure
Python (see scrapy_simhash/analysis/speedups.py). The C sources are not installed.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "scrapy_simhash._speedups",
            [
                f"csrc/_speedups{part}.c"
                for part in (
                    "",
                    "_words",
                    "_runs",
                    "_weights",
                    "_combine",
                    "_attribution",
                    "_stop_words",
                    "_case",
                    "_anchors",
                    "_shingles",
                )
            ],
            depends=["csrc/_speedups.h"],
            optional=True,
        )
    ]
)
