"""Export/import: a round trip between backends, and clear errors for bad files."""

from __future__ import annotations

import functools
import io
import json
import random
import tracemalloc
import zlib
from dataclasses import replace

import pytest

from scrapy_simhash import open_index
from scrapy_simhash.anchors import Anchors
from scrapy_simhash.exceptions import IndexParameterMismatch
from scrapy_simhash.index.analysed import Analysed
from scrapy_simhash.index.base import StoredPage
from scrapy_simhash.index.memory import MemoryIndex
from scrapy_simhash.tools.transfer import (
    MAGIC,
    MAX_KEY_BYTES,
    ExportFormatError,
    export_index,
    import_index,
    read_header,
    read_pages,
)


def sample_pages(n: int = 500, seed: int = 3) -> list[StoredPage]:
    rng = random.Random(seed)
    pages = [
        StoredPage(f"https://news.example/{i}", rng.getrandbits(64), 1.7e9 + rng.random() * 1e6)
        for i in range(n)
    ]
    pages += [
        StoredPage("https://news.example/top", (1 << 64) - 1, 1.7e9),
        StoredPage("https://news.example/zero", 0, 1.7e9 + 5),
        StoredPage("https://新闻.example/短", 12345, 1.7e9 + 7, exact=True),
    ]
    return pages


def same_pages(a, b) -> bool:
    """Equal pages, times to the microsecond (what an export keeps)."""
    times_a = {(p.key, p.fingerprint, p.exact): p.added_at for p in a}
    times_b = {(p.key, p.fingerprint, p.exact): p.added_at for p in b}
    return times_a.keys() == times_b.keys() and all(
        abs(times_a[k] - times_b[k]) < 1e-5 for k in times_a
    )


@pytest.fixture
def memory_index():
    with open_index("memory:") as index:
        index.add_pages(sample_pages())
        yield index


def test_round_trip_memory_to_sqlite(memory_index, tmp_path):
    path = tmp_path / "export.simhash"
    assert export_index(memory_index, path) == len(memory_index)
    header = read_header(path)
    assert header.pages == len(memory_index)
    assert header.parameters == memory_index.parameters
    with open_index(f"sqlite:///{tmp_path / 'copy.db'}") as target:
        assert import_index(target, path) == len(memory_index)
        assert same_pages(target.pages(), memory_index.pages())
        some = sample_pages()[7]
        assert target.query(some.fingerprint ^ 0b101)[0].key == some.key
        assert import_index(target, path) == 0, "pages already stored are skipped"


def test_into_an_index_with_another_max_distance(memory_index, tmp_path):
    buffer = io.BytesIO()
    export_index(memory_index, buffer)
    buffer.seek(0)
    with open_index("memory:", max_distance=2, blocks=4) as target:
        assert import_index(target, buffer) == len(memory_index)
        some = sample_pages()[9]
        assert target.query(some.fingerprint ^ 0b11)[0].key == some.key


def test_empty_index(tmp_path):
    path = tmp_path / "empty.simhash"
    with open_index("memory:") as index:
        assert export_index(index, path) == 0
    with open_index("memory:") as index:
        assert import_index(index, path) == 0


def test_compact(memory_index):
    buffer = io.BytesIO()
    export_index(memory_index, buffer)
    keys = sum(len(p.key) for p in memory_index.pages())
    # Raw: 8 bytes of fingerprint + 8 of time per page, plus the keys.
    assert len(buffer.getvalue()) < 0.6 * (16 * len(memory_index) + keys)


def test_refuses_other_features(memory_index, tmp_path):
    path = tmp_path / "export.simhash"
    export_index(memory_index, path)
    with (
        open_index("memory:", features="simhash64/other") as target,
        pytest.raises(IndexParameterMismatch) as excinfo,
    ):
        import_index(target, path)
    message = str(excinfo.value)
    assert "'simhash64/other'" in message
    assert repr(memory_index.parameters.features) in message
    assert len(target) == 0


def test_not_an_export(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    with open_index("memory:") as index, pytest.raises(ExportFormatError, match="not a scrapy"):
        import_index(index, path)


def test_missing_file(tmp_path):
    with open_index("memory:") as index, pytest.raises(ExportFormatError, match="Cannot open"):
        import_index(index, tmp_path / "nope.simhash")


@pytest.mark.parametrize("cut", [len(MAGIC) + 3, 30, -1, -40])
def test_truncated_export(memory_index, tmp_path, cut):
    data = io.BytesIO()
    export_index(memory_index, data)
    path = tmp_path / "cut.simhash"
    path.write_bytes(data.getvalue()[:cut])
    with open_index("memory:") as index:
        with pytest.raises(ExportFormatError, match=r"truncated|damaged"):
            import_index(index, path)
        assert len(index) == 0, "nothing is imported from a damaged file"


def test_corrupt_body(memory_index, tmp_path):
    data = io.BytesIO()
    export_index(memory_index, data)
    raw = bytearray(data.getvalue())
    raw[-100] ^= 0xFF
    path = tmp_path / "bad.simhash"
    path.write_bytes(bytes(raw))
    with open_index("memory:") as index, pytest.raises(ExportFormatError, match="damaged"):
        import_index(index, path)


def test_import_a_key_with_a_lone_surrogate(tmp_path):
    # Export files keep keys byte for byte ("surrogatepass"): one written before keys were
    # escaped can hold a lone surrogate, which SQLite cannot store as is.
    with open_index("memory:") as source:
        source.add_pages([StoredPage("https://news.example/AAA", 99, 1.7e9)])
        data = io.BytesIO()
        export_index(source, data)
    raw = data.getvalue()
    body_at = len(MAGIC) + 5 + int.from_bytes(raw[len(MAGIC) + 1 : len(MAGIC) + 5], "big")
    body = zlib.decompress(raw[body_at:]).replace(b"AAA", "\ud800".encode("utf-8", "surrogatepass"))
    path = tmp_path / "old.simhash"
    path.write_bytes(raw[:body_at] + zlib.compress(body))
    with open_index(f"sqlite:///{tmp_path / 'index.db'}") as target:
        assert import_index(target, path) == 1
        assert [p.key for p in target.pages()] == ["https://news.example/\\ud800"]


def crafted_export(path, pages: int, body_parts) -> None:
    """An export file with a valid header declaring *pages* and a body of *body_parts*."""
    head = json.dumps(
        {"format": 1, "max_distance": 3, "blocks": 5, "features": "f", "pages": pages}
        | {"exported_at": 0}
    ).encode()
    with open(path, "wb") as f:
        f.write(MAGIC + bytes([1]) + len(head).to_bytes(4, "big") + head)
        f.write(compressed(tuple(body_parts)))


@functools.lru_cache(maxsize=4)
def compressed(parts: tuple) -> bytes:
    compressor = zlib.compressobj(9)
    out = [compressor.compress(part) for part in parts]
    return b"".join([*out, compressor.flush()])


def zeros(total: int, chunk: int = 1 << 22):
    return (bytes(chunk),) * (total // chunk)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pages", "error"),
    [
        (1, "unexpected bytes after the last key"),
        (100_000, "unexpected bytes after the last key"),
        (10**9, "declares 1000000000 pages"),
    ],
)
def test_zlib_bomb_is_refused_without_inflating_it(tmp_path, pages, error):
    # 256 MB of zeros in a 250 KB file: before decompression was bounded, an import held
    # all of it, and numpy arrays of 8 bytes per byte of it on top.
    path = tmp_path / "bomb.simhash"
    crafted_export(path, pages, zeros(256 << 20))
    assert path.stat().st_size < 300_000
    tracemalloc.start()
    try:
        with pytest.raises(ExportFormatError, match=error):
            read_pages(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 << 20, f"{peak >> 20} MB held to refuse a {path.stat().st_size} byte file"


def test_key_longer_than_the_cap_is_refused(tmp_path):
    # One page whose key length says 1 GiB: refused before the key is decompressed.
    columns = b"\x05" + b"\x00" + bytes(8) + b"\x00" + bytes([0x80, 0x80, 0x80, 0x80, 0x04])
    path = tmp_path / "long.simhash"
    crafted_export(path, 1, [columns, *zeros(32 << 20)])
    with pytest.raises(ExportFormatError, match=f"a key is longer than {MAX_KEY_BYTES} bytes"):
        read_pages(path)


def anchored_pages() -> list[StoredPage]:
    rng = random.Random(5)
    pages = []
    for i in range(200):
        count = rng.randrange(0, 9)
        anchors = Anchors(
            tuple(rng.randrange(-(1 << 31), 1 << 31) for _ in range(count)),
            (),
            rng.randrange(80 * count + 1) if count else 0,
            rng.randrange(1001) if count else 0,
        )
        pages.append(
            StoredPage(
                f"https://a.example/{i}", rng.getrandbits(64), 1.7e9 + i, False, anchors or None
            )
        )
    return pages


def test_anchors_survive_the_round_trip_between_backends(tmp_path):
    path = tmp_path / "export.simhash"
    with open_index("memory:") as source:
        source.add_pages(anchored_pages())
        export_index(source, path)
        expected = {p.key: p.anchors for p in source.pages()}
    assert read_header(path).format == 3
    with open_index(f"sqlite:///{tmp_path / 'copy.db'}") as target:
        assert import_index(target, path) == 200
        assert {p.key: p.anchors for p in target.pages()} == expected
    assert sum(1 for a in expected.values() if a) > 150


def as_format(data: bytes, version: int) -> bytes:
    """An export of pages without anchors or records as format *version* (1 or 2) wrote
    it: the header without the hows (and the anchors' format), the body without their
    columns (a zero a page for each)."""
    size = int.from_bytes(data[len(MAGIC) + 1 : len(MAGIC) + 5], "big")
    header = json.loads(data[len(MAGIC) + 5 : len(MAGIC) + 5 + size])
    body = zlib.decompress(data[len(MAGIC) + 5 + size :])
    columns = 3 - version
    assert body.endswith(b"\x00" * header["pages"] * columns)
    del header["hows"]
    if version == 1:
        del header["anchors"]
    header["format"] = version
    head = json.dumps(header).encode()
    return (
        MAGIC + bytes([version]) + len(head).to_bytes(4, "big") + head
        + zlib.compress(body[: -header["pages"] * columns])
    )  # fmt: skip


def test_how_pages_were_analysed_survives_the_round_trip_between_backends(tmp_path):
    path = tmp_path / "export.simhash"
    hows = [
        Analysed(("title", "content"), "builtin", "terms-v13", 2**64 - 1),
        Analysed(("-title", "content"), "builtin", "terms-v13", 0),
        None,
    ]
    pages = [replace(p, analysed=hows[i % 3]) for i, p in enumerate(sample_pages(60))]
    with open_index("memory:") as source:
        source.add_pages(pages)
        export_index(source, path)
        expected = {p.key: p.analysed for p in source.pages()}
    assert sorted(read_header(path).hows) == sorted([hows[0].how, hows[1].how])
    with open_index(f"sqlite:///{tmp_path / 'copy.db'}") as target:
        assert import_index(target, path) == len(pages)
        assert {p.key: p.analysed for p in target.pages()} == expected
    assert sum(1 for a in expected.values() if a) == 42


def imported_from_format(memory_index, tmp_path, version: int) -> list:
    """The pages of *memory_index* exported, rewritten as a file of format *version*,
    and imported into a new index (checked to be the same pages)."""
    data = io.BytesIO()
    export_index(memory_index, data)
    path = tmp_path / "old.simhash"
    path.write_bytes(as_format(data.getvalue(), version))
    assert read_header(path).format == version
    with open_index("memory:") as target:
        assert import_index(target, path) == len(memory_index)
        assert same_pages(target.pages(), memory_index.pages())
        return list(target.pages())


def test_a_format_2_file_still_imports(memory_index, tmp_path):
    pages = imported_from_format(memory_index, tmp_path, 2)
    assert all(page.analysed is None for page in pages)


@pytest.mark.slow
def test_a_format_1_file_still_imports(memory_index, tmp_path):
    pages = imported_from_format(memory_index, tmp_path, 1)
    assert all(page.anchors is None for page in pages)


@pytest.mark.slow
def test_import_holds_no_key_while_it_reads_pages(tmp_path):
    # 2,000 keys of 16 KB that compress to a few bytes each: before, an import held every
    # key (and copies of them) at once; now it checks them as they are decompressed and
    # decompresses them again as the pages are read.
    from scrapy_simhash.index.base import MAX_KEY_BYTES

    index = MemoryIndex()
    filler = "a" * (MAX_KEY_BYTES - 40)
    index.add_pages(
        StoredPage(f"https://example.com/{filler}/{n}", n * 7919 + 1, 1.7e9) for n in range(2000)
    )
    path = tmp_path / "long-keys.simhash"
    export_index(index, path)
    assert path.stat().st_size < 300_000
    tracemalloc.start()
    try:
        header, pages = read_pages(path)
        count = sum(len(page.key) for page in pages)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert header.pages == 2000 and count > 2000 * (MAX_KEY_BYTES - 40)
    assert peak < 8 << 20, f"{peak >> 20} MB held to import {count >> 20} MB of keys"
