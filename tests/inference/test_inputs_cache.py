"""The decoded-inputs cache (inference.baselines.inputs_cache): built once, read after, never stale,
never half written, rebuilt when damaged."""

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from inference.baselines.inputs_cache import SUFFIX, ImageCache, cached_images

SIZE = {"height": 4, "width": 6, "channels": 3}


class Decoder:
    """A stand-in decoder: an image file's first byte, as a 4x6 RGB image of that value; counts calls."""

    def __init__(self):
        self.calls = []

    def __call__(self, path):
        self.calls.append(path)
        return np.full((4, 6, 3), Path(path).read_bytes()[0], dtype=np.uint8)


@pytest.fixture
def images(tmp_path):
    folder = tmp_path / "images"
    folder.mkdir()
    paths = []
    for number in range(5):
        path = folder / f"image{number}.png"
        path.write_bytes(bytes([10 * number + 1]) * 32)
        paths.append(str(path))
    return paths


def values(array):
    return [int(image[0, 0, 0]) for image in array]


def only_cache_file(folder):
    files = sorted(Path(folder).iterdir())
    assert [file.suffix for file in files] == [SUFFIX], files  # no temporary file left behind
    return files[0]


def test_images_are_decoded_once_and_read_from_the_cache_after(tmp_path, images):
    decode = Decoder()
    first = cached_images(tmp_path / "cache", images, decode, method="test", **SIZE)
    assert first.shape == (5, 4, 6, 3) and first.dtype == np.uint8
    assert values(first) == [1, 11, 21, 31, 41]
    assert len(decode.calls) == 5
    (cache_file,) = (tmp_path / "cache").glob(f"*{SUFFIX}")
    os.utime(cache_file, (1_000_000_000, 1_000_000_000))  # as if last read in 2001
    again = Decoder()
    second = cached_images(tmp_path / "cache", images, again, method="test", **SIZE)
    # A read sets the file's time: prune_caches --older-than goes by it.
    assert cache_file.stat().st_mtime > 1_000_000_000
    assert again.calls == []  # the second run decodes nothing
    assert np.array_equal(first, second)
    assert not second.flags.writeable
    only_cache_file(tmp_path / "cache")


def test_a_path_listed_twice_is_decoded_once_and_fills_both_rows(tmp_path, images):
    decode = Decoder()
    array = cached_images(
        tmp_path / "cache", [images[2], images[0], images[2]], decode, method="test", **SIZE
    )
    assert values(array) == [21, 1, 21]
    assert sorted(decode.calls) == sorted([images[2], images[0]])


def test_each_size_and_method_has_its_own_cache(tmp_path, images):
    cached_images(tmp_path / "cache", images, Decoder(), method="test", **SIZE)
    for other in ({"method": "other", **SIZE}, {"method": "test", **SIZE, "width": 8}):
        decode = Decoder()

        def sized(path, decode=decode, width=other["width"]):
            return np.resize(decode(path), (4, width, 3))

        cached_images(tmp_path / "cache", images, sized, **other)
        assert len(decode.calls) == 5
    assert len(list((tmp_path / "cache").glob(f"*{SUFFIX}"))) == 3


def test_a_changed_file_makes_the_cache_stale_and_it_is_rebuilt(tmp_path, images):
    cached_images(tmp_path / "cache", images, Decoder(), method="test", **SIZE)
    Path(images[3]).write_bytes(bytes([99]) * 40)
    cache = ImageCache(tmp_path / "cache", images, method="test", **SIZE)
    assert cache.open() is None
    assert cache.problem.startswith("stale")
    decode = Decoder()
    array = cached_images(tmp_path / "cache", images, decode, method="test", **SIZE)
    assert values(array) == [1, 11, 21, 99, 41]
    assert len(decode.calls) == 5
    only_cache_file(tmp_path / "cache")  # replaced under the same name, not kept beside it


def test_a_file_rewritten_with_the_same_size_is_seen_by_its_time(tmp_path, images):
    cached_images(tmp_path / "cache", images, Decoder(), method="test", **SIZE)
    path = Path(images[0])
    path.write_bytes(bytes([7]) * 32)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert values(cached_images(tmp_path / "cache", images, Decoder(), method="test", **SIZE))[0] == 7


def test_a_missing_file_makes_the_cache_stale(tmp_path, images):
    cached_images(tmp_path / "cache", images, Decoder(), method="test", **SIZE)
    Path(images[1]).unlink()
    cache = ImageCache(tmp_path / "cache", images, method="test", **SIZE)
    assert cache.open() is None and cache.problem.startswith("stale")
    with pytest.raises(FileNotFoundError):
        cached_images(tmp_path / "cache", images, Decoder(), method="test", **SIZE)


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: data[: len(data) // 2], id="truncated"),
        pytest.param(lambda data: b"", id="empty"),
        pytest.param(lambda data: b"junk" * 100, id="not-a-cache"),
        pytest.param(lambda data: data[:12] + b"{not json" + data[21:], id="header"),
        pytest.param(lambda data: data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:], id="one-pixel-flipped"),
        pytest.param(lambda data: data + b"\0" * 10, id="too-long"),
    ],
)
def test_a_corrupt_cache_file_is_not_used_and_is_rebuilt(tmp_path, images, damage):
    right = cached_images(tmp_path / "cache", images, Decoder(), method="test", **SIZE).copy()
    file = only_cache_file(tmp_path / "cache")
    file.write_bytes(damage(file.read_bytes()))
    cache = ImageCache(tmp_path / "cache", images, method="test", **SIZE)
    assert cache.open() is None
    assert cache.problem.startswith("corrupt")
    decode = Decoder()
    assert np.array_equal(cached_images(tmp_path / "cache", images, decode, method="test", **SIZE), right)
    assert len(decode.calls) == 5
    assert ImageCache(tmp_path / "cache", images, method="test", **SIZE).open() is not None


def test_a_build_that_fails_midway_leaves_nothing_behind(tmp_path, images):
    def failing(path):
        if path == images[3]:
            raise OSError(f"cannot read {path}")
        return Decoder()(path)

    with pytest.raises(OSError, match="cannot read"):
        cached_images(tmp_path / "cache", images, failing, method="test", **SIZE)
    assert list((tmp_path / "cache").iterdir()) == []
    decode = Decoder()
    cached_images(tmp_path / "cache", images, decode, method="test", **SIZE)
    assert len(decode.calls) == 5


def test_a_file_changed_while_building_is_not_kept(tmp_path, images):
    def changing(path):
        if path == images[4]:
            Path(images[0]).write_bytes(bytes([77]) * 64)
        return Decoder()(path)

    cache = ImageCache(tmp_path / "cache", images, method="test", **SIZE)
    with pytest.raises(ValueError, match="stale"):
        cache.build(changing)
    assert list((tmp_path / "cache").iterdir()) == []


def test_a_writer_refuses_images_of_another_size_and_an_unfilled_cache(tmp_path, images):
    cache = ImageCache(tmp_path / "cache", images, method="test", **SIZE)
    with cache.writer() as writer:
        with pytest.raises(ValueError, match="uint8 images"):
            writer.put(0, np.zeros((4, 5, 3), dtype=np.uint8))
        with pytest.raises(ValueError, match="uint8 images"):
            writer.put(0, np.zeros((4, 6, 3), dtype=np.float32))
        writer.put([0, 1], np.zeros((2, 4, 6, 3), dtype=np.uint8))
        with pytest.raises(ValueError, match="3 of the cache's 5 images were never written"):
            writer.commit()
    assert list((tmp_path / "cache").iterdir()) == []


def test_two_writers_at_once_leave_one_whole_cache(tmp_path, images):
    """Two workers build the same cache at the same time (each half-way when the other starts,
    then both finish); a reader that opened the first one's file keeps reading it whole."""
    halfway = threading.Barrier(2, timeout=10)
    opened = threading.Event()
    readers = []
    errors = []

    def build(name):
        def decode(path):
            if path == images[2]:
                halfway.wait()
            if name == "second" and path == images[4]:
                opened.wait(10)  # the second renames its file only after a reader opened the first's
            return Decoder()(path)

        try:
            array = cached_images(tmp_path / "cache", images, decode, method="test", **SIZE)
            if name == "first":
                readers.append(array)
                opened.set()
        except Exception as error:  # reported below
            errors.append(error)
            opened.set()

    threads = [threading.Thread(target=build, args=(name,)) for name in ("first", "second")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert errors == []
    file = only_cache_file(tmp_path / "cache")
    assert file.name.endswith(SUFFIX)
    decode = Decoder()
    final = cached_images(tmp_path / "cache", images, decode, method="test", **SIZE)
    assert decode.calls == [] and values(final) == [1, 11, 21, 31, 41]
    assert values(readers[0]) == [1, 11, 21, 31, 41]


def test_two_processes_building_the_same_cache_leave_one_whole_cache(tmp_path, images):
    """Two worker processes build the same cache at once (both half-way before either goes on):
    one whole cache file remains, and no temporary one."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    halfway = context.Barrier(2, timeout=30)
    workers = [
        context.Process(target=build_in_a_process, args=(str(tmp_path / "cache"), images, halfway))
        for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0, 0]
    only_cache_file(tmp_path / "cache")
    decode = Decoder()
    assert values(cached_images(tmp_path / "cache", images, decode, method="test", **SIZE)) == [
        1,
        11,
        21,
        31,
        41,
    ]
    assert decode.calls == []


def build_in_a_process(folder, images, halfway):
    decoder = Decoder()

    def decode(path):
        if path == images[2]:
            halfway.wait()
        return decoder(path)

    ImageCache(folder, images, method="test", **SIZE).build(decode)


def test_an_empty_list_of_images_is_an_empty_array(tmp_path):
    array = cached_images(tmp_path / "cache", [], Decoder(), method="test", **SIZE)
    assert array.shape == (0, 4, 6, 3)
    assert cached_images(tmp_path / "cache", [], Decoder(), method="test", **SIZE).shape == (0, 4, 6, 3)


def test_the_checksum_sees_a_flipped_bit_a_zeroed_page_and_pages_out_of_place(monkeypatch):
    from inference.baselines import inputs_cache
    from inference.baselines.inputs_cache import PAGE, checksum

    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, size=5 * PAGE + 123, dtype=np.uint8)
    right = checksum(data)
    assert checksum(data.copy()) == right
    monkeypatch.setattr(inputs_cache, "PAGES_AT_ONCE", 2)  # read in slices: the same sums
    assert checksum(data) == right
    for position in (0, 7, PAGE - 1, 3 * PAGE + 8, len(data) - 1):
        for bit in (0, 7):
            flipped = data.copy()
            flipped[position] ^= 1 << bit
            assert checksum(flipped) != right, (position, bit)
    zeroed = data.copy()
    zeroed[2 * PAGE : 3 * PAGE] = 0
    assert checksum(zeroed) != right
    swapped = data.copy()
    swapped[:PAGE], swapped[PAGE : 2 * PAGE] = data[PAGE : 2 * PAGE], data[:PAGE]
    assert checksum(swapped) != right
    assert checksum(data[:-1]) != right
