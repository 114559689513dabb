"""The final camera of the View setting when none was recorded: a deterministic one per sample
idx (`view_cameras`), or computed when asked for any idx (`ViewCameras`, for a stream)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from plugins.trance.formats import FINAL_CAMERAS
from plugins.trance.metric.encoding import Sample


class ViewCameras(Mapping[Any, str]):
    """`view_cameras` for any idx, computed when asked (a stream has no list of samples)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def __getitem__(self, idx: Any) -> str:
        digest = hashlib.blake2b(f"{self.seed}:{idx}".encode(), digest_size=8).digest()
        return FINAL_CAMERAS[int.from_bytes(digest, "big") % len(FINAL_CAMERAS)]

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def get(self, idx: Any, default: Any = None) -> Any:
        return self[idx]


def view_cameras(samples: Iterable[Sample], seed: int = 0) -> dict[int, str]:
    """A deterministic final camera per sample, for View scoring when none was recorded.

    Camera = FINAL_CAMERAS[first 8 bytes of blake2b("{seed}:{idx}") as an integer, mod 3]:
    it depends on the idx and the seed only (not on the order or the subset of samples), is the
    same on every machine and Python version, and spreads the three cameras evenly. Explicit
    cameras (the views a test plan actually showed, or a camera file) always take precedence:
    use this only for answers that were produced without recording their view.
    """
    cameras = ViewCameras(seed)
    return {sample["idx"]: cameras[sample["idx"]] for sample in samples}
