"""How fast one core tests passphrase guesses against the key id an index stores (one
scrypt per guess, as SIMHASH_SECRET derives its key), to set the least strength of a
passphrase (MIN_PASSPHRASE_BITS in scrapy_simhash/fingerprint.py).

    python benchmarks/secret_guesses.py
"""

import time

from scrapy_simhash.analysis.fingerprint import MIN_PASSPHRASE_BITS, Fingerprinter, seed_from_secret

target = Fingerprinter(seed=seed_from_secret("correct horse battery staple")).signature
guesses, start = 0, time.perf_counter()
while time.perf_counter() - start < 5:
    guess = f"correct horse battery {guesses:06d}"
    Fingerprinter(seed=seed_from_secret(guess)).signature == target  # noqa: B015
    guesses += 1
rate = guesses / (time.perf_counter() - start)
years = 2**MIN_PASSPHRASE_BITS / rate / 3600 / 24 / 365
print(
    f"{rate:.1f} guesses per second on one core; 2**{MIN_PASSPHRASE_BITS} guesses: "
    f"{years:,.0f} core-years"
)
