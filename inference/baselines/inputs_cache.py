"""Decoded, resized images kept on disk, once per list of image files and size (pure: numpy, no Django).

An image model spends most of its CPU time on a small device decoding and resizing its inputs,
not in the forward pass. `ImageCache` keeps a list of images decoded and resized to one size as
a uint8 array ``[N, H, W, C]`` in one file, read back by memory map: a second run over the same
images (another checkpoint of the same input size, the same run again) reads them at memory speed.

* **Key.** A cache file is named by what it holds: the image paths in order, the size, the
  channels and `method` (a string naming everything else that shapes the pixels: the decoder,
  the resize filter, the library version). Its header holds the files' state too (size and
  mtime_ns of each): when any file changed, was replaced or is gone, the cache is stale and is
  not used; the next build replaces it under the same name.
* **Atomic.** A writer fills a temporary file beside the cache and renames it over the cache's
  name when every image is in, so a reader finds the old file, the new one or none, never a half
  written one; two writers of the same cache each rename a complete file (the last one stays).
  A reader maps the file it checked, so a rename after that does not change what it reads.
* **Checked.** The header holds a checksum of the pixels (as well as the shape and the key); a
  file that is too short or too long, holds another shape or fails its checksum is corrupt, not
  used, and rebuilt. The checksum (`checksum`: 64-bit sums of each 4 KiB page's words, summed
  plain and weighted by the page's place) catches a torn or truncated write, zeroed or foreign
  pages, pages out of place and any one flipped bit, and reads at memory speed (about 13 ms for
  236 MB here, against 60 ms for a CRC-32): every open checks it. It is a guard against damage,
  not against tampering. It is also why the writer does not fsync: a file torn by a power cut
  fails it and is rebuilt.

Typical use, decoding every image once (see `cached_images`); a model that decodes in its own
DataLoader can instead fill a `CacheWriter` with each batch it decodes while answering.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

MAGIC = b"YSIMGC\x00\x01"
FORMAT = 1
SUFFIX = ".imgcache"
#: Pixels start at a multiple of this many bytes from the file's start.
ALIGN = 64
#: Checksummed in pages of this many bytes, this many pages at a time.
PAGE = 4096
PAGES_AT_ONCE = 4096


class CacheUnusable(ValueError):
    """A cache file exists but cannot be used (stale or corrupt); the message says why."""


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, separators=(",", ":")).encode()).hexdigest()


class ImageCache:
    """The cache of `paths` (rows in this order) decoded to ``height x width x channels`` uint8.

    `method` names how the pixels are made beyond the size (decoder, resize filter, library
    version): two models that decode differently must give different methods. `folder` is made
    when a writer first needs it.
    """

    def __init__(
        self,
        folder: Path | str,
        paths: Sequence[str],
        *,
        height: int,
        width: int,
        channels: int = 3,
        method: str,
    ):
        if min(height, width, channels) < 1:
            raise ValueError(f"a cached image needs a positive size, got {height}x{width}x{channels}")
        self.folder = Path(folder)
        self.paths = tuple(str(path) for path in paths)
        self.shape = (len(self.paths), height, width, channels)
        self.method = method
        #: Each path's rows (a path listed twice fills two rows).
        self.rows: dict[str, list[int]] = {}
        for row, path in enumerate(self.paths):
            self.rows.setdefault(path, []).append(row)
        identity = {"paths": self.paths, "shape": self.shape[1:], "method": method, "format": FORMAT}
        self.name = _digest(identity)[:40]
        self.file = self.folder / f"{self.name}{SUFFIX}"
        #: Why the last `open` found no usable cache (None: it found one, or none was there).
        self.problem: str | None = None

    @property
    def image_bytes(self) -> int:
        return self.shape[1] * self.shape[2] * self.shape[3]

    def files_key(self) -> str:
        """A digest of every file's (path, size, mtime_ns), read now; OSError names a missing file."""
        states = []
        for path in self.paths:
            state = os.stat(path)
            states.append((path, state.st_size, state.st_mtime_ns))
        return _digest({"name": self.name, "files": states})

    # --- reading --------------------------------------------------------------------------------

    def open(self, *, key: str | None = None) -> np.ndarray | None:
        """The cached images, an ``[N, H, W, C]`` uint8 read-only array mapped from the file; None
        when there is no cache file, or it is stale or corrupt (`problem` then says which)."""
        self.problem = None
        try:
            handle = self.file.open("rb")
        except FileNotFoundError:
            return None
        except OSError as error:  # the folder is not one, or not readable
            self.problem = f"unreadable: {error}"
            return None
        with handle:
            try:
                offset, stored = self._check(handle, self.files_key() if key is None else key)
            except CacheUnusable as error:
                self.problem = str(error)
                return None
            except OSError as error:  # an image file is gone
                self.problem = f"stale: {error}"
                return None
            try:
                # Mapped from the handle that was checked: a writer renaming a new file over the
                # name since then does not change what this array reads.
                pixels = _mapped(handle.fileno(), offset, self.shape[0] * self.image_bytes)
            except (OSError, ValueError) as error:
                self.problem = f"unreadable: {self.file} cannot be mapped ({error})"
                return None
        if checksum(pixels) != stored:
            self.problem = f"corrupt: {self.file} fails its checksum"
            return None
        # Its time says when it was last used: `manage.py prune_caches --older-than` goes by it.
        with contextlib.suppress(OSError):
            os.utime(self.file)
        return pixels.reshape(self.shape)

    def _check(self, handle: Any, key: str) -> tuple[int, str]:
        """The pixels' offset in the open cache file and their stored checksum, once the header,
        the key and the size are right; CacheUnusable says what is wrong."""
        start = handle.read(len(MAGIC) + 4)
        if len(start) < len(MAGIC) + 4 or start[: len(MAGIC)] != MAGIC:
            raise CacheUnusable(f"corrupt: {self.file} is not an image cache file")
        length = int.from_bytes(start[len(MAGIC) :], "little")
        if length > 1 << 20:
            raise CacheUnusable(f"corrupt: {self.file} has an unreadable header")
        try:
            header = json.loads(handle.read(length))
            shape, stored_key, stored = tuple(header["shape"]), header["key"], str(header["checksum"])
        except (ValueError, KeyError, TypeError) as error:
            raise CacheUnusable(f"corrupt: {self.file} has an unreadable header ({error})") from None
        if header.get("format") != FORMAT or shape != self.shape or header.get("method") != self.method:
            raise CacheUnusable(f"corrupt: {self.file} holds other images ({shape}, {header.get('method')})")
        if stored_key != key:
            raise CacheUnusable(f"stale: an image file changed since {self.file} was written")
        offset = _aligned(len(MAGIC) + 4 + length)
        size = os.fstat(handle.fileno()).st_size
        if size != offset + self.shape[0] * self.image_bytes:
            raise CacheUnusable(
                f"corrupt: {self.file} has {size} bytes, not {offset + self.shape[0] * self.image_bytes}"
            )
        return offset, stored

    # --- writing --------------------------------------------------------------------------------

    def writer(self) -> CacheWriter:
        """A new temporary cache file to fill (see CacheWriter); OSError when the folder is not writable."""
        return CacheWriter(self)

    def build(
        self, decode: Callable[[str], np.ndarray], *, map_rows: Callable[..., Iterable[Any]] = map
    ) -> np.ndarray:
        """Decode every image (`decode(path) -> [H, W, C] uint8`), write the cache, return it mapped.

        `map_rows` runs the decoding: a pool's ``map`` (threads or processes) decodes in parallel;
        the results are written in order as they come.
        """
        unique = list(self.rows)
        with self.writer() as writer:
            for path, image in zip(unique, map_rows(decode, unique), strict=True):
                writer.put(self.rows[path], np.broadcast_to(image, (len(self.rows[path]), *np.shape(image))))
            if not writer.commit():
                raise CacheUnusable(f"stale: an image file changed while {self.file} was being written")
        images = self.open()
        if images is None:  # another writer's file replaced this one and is stale already
            raise CacheUnusable(self.problem or f"{self.file} vanished after writing")
        return images


class CacheWriter:
    """A temporary cache file being filled: `put` images by row, then `commit` renames it over the
    cache's name. Used as a context manager, an uncommitted file is removed on the way out (an
    error, a cancelled run): nothing half written is ever under the cache's name."""

    def __init__(self, cache: ImageCache):
        self.cache = cache
        self.filled = np.zeros(cache.shape[0], dtype=bool)
        cache.folder.mkdir(parents=True, exist_ok=True)
        self.key = cache.files_key()
        header_room = len(MAGIC) + 4 + len(self._header(self.key, checksum(np.zeros(0, np.uint8))))
        self.offset = _aligned(header_room)
        descriptor, name = tempfile.mkstemp(prefix=f"{cache.name}.", suffix=".tmp", dir=cache.folder)
        self.temp: Path | None = Path(name)
        self.fd: int | None = descriptor
        try:
            # Readable by the other workers sharing the folder, as the files beside it are.
            os.fchmod(descriptor, 0o644)
            size = self.offset + cache.shape[0] * cache.image_bytes
            # Room taken now: a full disk fails here with OSError, not halfway through.
            if hasattr(os, "posix_fallocate") and size:
                os.posix_fallocate(descriptor, 0, size)
            else:
                os.ftruncate(descriptor, size)
        except BaseException:
            self.abort()
            raise

    def _header(self, key: str, sums: str) -> bytes:
        return json.dumps(
            {
                "format": FORMAT,
                "shape": list(self.cache.shape),
                "method": self.cache.method,
                "key": key,
                "checksum": sums,
            },
            separators=(",", ":"),
        ).encode()

    def put(self, rows: int | Sequence[int] | np.ndarray, images: Any) -> None:
        """Write `images` (``[H, W, C]`` for one row, ``[k, H, W, C]`` for k rows) at `rows`."""
        if self.fd is None:
            raise ValueError("this cache writer is closed")
        many = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        pixels = np.asarray(images)
        if pixels.ndim == 3:
            pixels = pixels[np.newaxis]
        if pixels.dtype != np.uint8 or pixels.shape != (len(many), *self.cache.shape[1:]):
            raise ValueError(
                f"expected {len(many)} uint8 images of {self.cache.shape[1:]}, got {pixels.dtype} {pixels.shape}"
            )
        row_bytes = self.cache.image_bytes
        for row, image in zip(many.tolist(), pixels, strict=True):
            if not 0 <= row < self.cache.shape[0]:
                raise IndexError(f"row {row} outside the cache's {self.cache.shape[0]} images")
            os.pwrite(self.fd, np.ascontiguousarray(image).data, self.offset + row * row_bytes)
            self.filled[row] = True

    def commit(self, *, key: str | None = None) -> bool:
        """Rename the filled file over the cache's name; False (and nothing renamed) when an image
        file changed since the writer began (or since `key` was read), so the pixels may be stale.

        ValueError when a row was never written.
        """
        if self.fd is None:
            raise ValueError("this cache writer is closed")
        if not self.filled.all():
            missing = int((~self.filled).sum())
            raise ValueError(f"{missing} of the cache's {self.cache.shape[0]} images were never written")
        try:
            now = self.cache.files_key()
        except OSError:
            now = None
        if now != (key or self.key):
            self.abort()
            return False
        header = self._header(
            now, checksum(_mapped(self.fd, self.offset, self.cache.shape[0] * self.cache.image_bytes))
        )
        start = MAGIC + len(header).to_bytes(4, "little") + header
        if _aligned(len(start)) != self.offset:  # the header's fields have fixed widths
            raise RuntimeError(f"the cache header grew to {len(start)} bytes, past {self.offset}")
        os.pwrite(self.fd, start.ljust(self.offset, b" "), 0)
        os.close(self.fd)
        self.fd = None
        temp, self.temp = self.temp, None
        try:
            os.replace(temp, self.cache.file)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        return True

    def abort(self) -> None:
        """Remove the temporary file (nothing happens to the cache's name)."""
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
        if self.temp is not None:
            self.temp.unlink(missing_ok=True)
            self.temp = None

    def __enter__(self) -> CacheWriter:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.abort()


def cached_images(
    folder: Path | str,
    paths: Sequence[str],
    decode: Callable[[str], np.ndarray],
    *,
    height: int,
    width: int,
    channels: int = 3,
    method: str,
    map_rows: Callable[..., Iterable[Any]] = map,
) -> np.ndarray:
    """`paths` decoded and resized, ``[N, H, W, C]`` uint8: read from the cache in `folder` when it
    holds them as the files are now, else decoded by `decode` (see ImageCache.build) and kept."""
    cache = ImageCache(folder, paths, height=height, width=width, channels=channels, method=method)
    images = cache.open()
    return images if images is not None else cache.build(decode, map_rows=map_rows)


def _aligned(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def checksum(pixels: np.ndarray) -> str:
    """The checksum of a uint8 array's bytes: the 64-bit (wrapping) sum of each 4 KiB page's
    64-bit words, added up plain and weighted by the page's number (from 1), as hex.

    The plain sum changes with any one flipped bit; the weighted one when pages are swapped or
    moved; both when a page is zeroed or replaced. A last, partial page counts as if padded with
    zeros. Reads at memory speed with numpy, in slices of PAGES_AT_ONCE pages.
    """
    data = np.ascontiguousarray(pixels).reshape(-1).view(np.uint8)
    whole = len(data) // PAGE * PAGE
    page_sums = [
        np.add.reduce(
            data[start : min(start + PAGE * PAGES_AT_ONCE, whole)].view(np.uint64).reshape(-1, PAGE // 8),
            axis=1,
        )
        for start in range(0, whole, PAGE * PAGES_AT_ONCE)
    ]
    if whole < len(data):
        last = np.zeros(PAGE, dtype=np.uint8)
        last[: len(data) - whole] = data[whole:]
        page_sums.append(last.view(np.uint64).sum(keepdims=True, dtype=np.uint64))
    plain = weighted = 0
    number = 1
    with np.errstate(over="ignore"):
        for sums in page_sums:
            sums = sums.astype(np.uint64, copy=False)
            plain += int(np.add.reduce(sums, dtype=np.uint64))
            weighted += int(np.add.reduce(sums * np.arange(number, number + len(sums), dtype=np.uint64)))
            number += len(sums)
    return f"pagesum64:{plain % 2**64:016x}:{weighted % 2**64:016x}"


def _mapped(descriptor: int, offset: int, length: int) -> np.ndarray:
    """`length` bytes of the open file from `offset`, as a read-only uint8 array mapped from it
    (pages mapped in one go where the system allows: fewer page faults than touching them one by
    one). The array keeps the mapping alive."""
    if length == 0:
        return np.zeros(0, dtype=np.uint8)
    flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
    mapping = mmap.mmap(descriptor, offset + length, flags=flags, prot=mmap.PROT_READ)
    return np.frombuffer(mapping, dtype=np.uint8, count=length, offset=offset)
