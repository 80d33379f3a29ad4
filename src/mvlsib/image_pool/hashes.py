"""Perceptual hashes and the near-duplicate rule.

Three signals are computed per image (all on the decoded pixels, so re-encoding does not matter):

* ``imagehash.phash`` and ``imagehash.dhash`` of the whole image (64 bits each): catch resized,
  re-compressed, colour-shifted copies.
* A *window search* (crop resistance): 64-bit pHash and dHash of 539 sub-windows of the image
  (widths and heights 60-100 % of the image, aspect change at most 20 points, offsets on a 5 %
  grid). A pair is compared as "whole image A against every window of B, and vice versa"; a crop
  of B matches the window it was cut from.
* ``imagehash.crop_resistant_hash`` (segment hashes, Steinebach et al.): the number of image
  segments whose dHash matches a segment of the other image within 4 bits.

Rule (see docs/image_pool.md for the calibration): a pair is a near-duplicate when the best
aligned window has pHash distance <= 10 **and** dHash distance <= 10 (the whole-image pair is one
of the windows), or when at least 3 crop-resistant segments match within 4 bits. Calibration on the
69 real photographs plus the 70 drawn pictograms (9,591 pairs): no pair flagged; the closest
genuinely different real photos are 12/13 bits apart (best window), 18/12 (whole image); 90 %-resized
re-encoded copies are 0-2/0-3 bits from their original; 88 % of 60-85 % crops are caught.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import imagehash
import numpy as np
from PIL import Image

from mvlsib import readers
from mvlsib.atomic import atomic_open
from mvlsib.errors import MvlsibError

WINDOW_SCALES = (1.0, 0.9, 0.8, 0.7, 0.6)
WINDOW_STEP = 0.05
MAX_ASPECT_CHANGE = 0.21
WORK_SIZE = (256, 192)  # grey working copy for the window search (portrait images: transposed)

PHASH_MAX = 10
DHASH_MAX = 10
CROP_SEGMENT_BITS = 4
CROP_SEGMENTS_MIN = 3
CRH_SEGMENTATION_SIZE = 150  # imagehash default is 300; 150 is 7x faster and as discriminative here


@dataclass(frozen=True)
class NearDupPolicy:
    phash_max: int = PHASH_MAX
    dhash_max: int = DHASH_MAX
    crop_segment_bits: int = CROP_SEGMENT_BITS
    crop_segments_min: int = CROP_SEGMENTS_MIN


@dataclass
class ImageHashes:
    phash: imagehash.ImageHash
    dhash: imagehash.ImageHash
    crop: imagehash.ImageMultiHash
    win_phash: np.ndarray = field(repr=False)  # uint64 per window, index 0 = whole image
    win_dhash: np.ndarray = field(repr=False)


@dataclass(frozen=True)
class PairDistance:
    a: str
    b: str
    phash: int  # whole image vs whole image
    dhash: int
    window_phash: int  # best-aligned window (<= whole-image values)
    window_dhash: int
    crop_segments: int  # crop-resistant segments matching within policy bits
    near_duplicate: bool
    reason: str

    @property
    def sort_key(self) -> tuple:
        return (
            not self.near_duplicate,
            self.window_phash + self.window_dhash,
            self.phash + self.dhash,
            -self.crop_segments,
            self.a,
            self.b,
        )

    def as_dict(self) -> dict:
        return {
            k: getattr(self, k)
            for k in (
                "a",
                "b",
                "phash",
                "dhash",
                "window_phash",
                "window_dhash",
                "crop_segments",
                "near_duplicate",
                "reason",
            )
        }


@lru_cache(maxsize=1)
def _windows() -> tuple[tuple[float, float, float, float], ...]:
    out = []
    steps = lambda s: [round(i * WINDOW_STEP, 4) for i in range(int(round((1 - s) / WINDOW_STEP)) + 1)]  # noqa: E731
    for sx in WINDOW_SCALES:
        for sy in WINDOW_SCALES:
            if abs(sx - sy) > MAX_ASPECT_CHANGE:
                continue
            for ox in steps(sx):
                for oy in steps(sy):
                    out.append((ox, oy, sx, sy))
    out.remove((0.0, 0.0, 1.0, 1.0))
    return ((0.0, 0.0, 1.0, 1.0), *out)


@lru_cache(maxsize=1)
def _dct_matrix():
    n = 32
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    m = np.cos(np.pi * (2 * i + 1) * k / (2 * n))
    m[0] *= 1 / np.sqrt(2)
    return m * np.sqrt(2 / n)


def _pack(bits):
    return np.packbits(bits.reshape(bits.shape[0], -1), axis=1, bitorder="little").view(np.uint64)[:, 0].copy()


def _cell_means(integral, xs, ys):
    """Mean grey value of each grid cell of each window, from an integral image.

    ``xs``/``ys``: (windows, cells + 1) integer cell edges. Box averaging is the resampling
    step of both hashes; doing it with integral images for all windows at once is ~10x
    faster than cropping and resizing each window with PIL.
    """
    corners = integral[ys[:, :, None], xs[:, None, :]]  # (w, ny+1, nx+1)
    sums = corners[:, 1:, 1:] - corners[:, :-1, 1:] - corners[:, 1:, :-1] + corners[:, :-1, :-1]
    areas = (ys[:, 1:] - ys[:, :-1])[:, :, None] * (xs[:, 1:] - xs[:, :-1])[:, None, :]
    return sums / np.maximum(areas, 1)


def _window_hashes(im):
    grey = im.convert("L")
    size = WORK_SIZE if grey.width >= grey.height else WORK_SIZE[::-1]
    g = np.asarray(grey.resize(size, Image.Resampling.LANCZOS), dtype=np.float64)
    h, w = g.shape
    integral = np.zeros((h + 1, w + 1))
    integral[1:, 1:] = g.cumsum(0).cumsum(1)
    win = np.array(_windows())
    x0, y0 = np.rint(win[:, 0] * w), np.rint(win[:, 1] * h)
    x1, y1 = np.rint((win[:, 0] + win[:, 2]) * w), np.rint((win[:, 1] + win[:, 3]) * h)

    def edges(a0, a1, n):
        return np.rint(a0[:, None] + (a1 - a0)[:, None] * np.arange(n + 1)[None, :] / n).astype(np.int64)

    big = _cell_means(integral, edges(x0, x1, 32), edges(y0, y1, 32))
    d = _dct_matrix()
    low = (d @ big @ d.T)[:, :8, :8].reshape(len(win), 64)
    ph = _pack(low > np.median(low, axis=1, keepdims=True))
    small = _cell_means(integral, edges(x0, x1, 9), edges(y0, y1, 8))
    return ph, _pack(small[:, :, 1:] > small[:, :, :-1])


def compute_hashes(im) -> ImageHashes:
    """All hashes of a decoded PIL image."""
    rgb = im.convert("RGB")
    wp, wd = _window_hashes(rgb)
    return ImageHashes(
        phash=imagehash.phash(rgb),
        dhash=imagehash.dhash(rgb),
        crop=imagehash.crop_resistant_hash(rgb, segmentation_image_size=CRH_SEGMENTATION_SIZE, min_segment_size=120),
        win_phash=wp,
        win_dhash=wd,
    )


def hashes_of_bytes(data: bytes) -> ImageHashes:
    return compute_hashes(Image.open(io.BytesIO(data)))


def _popcount(x):
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(x)
    return np.unpackbits(x.view(np.uint8).reshape(len(x), 8), axis=1).sum(axis=1)  # numpy < 2


def _best_window(x: ImageHashes, y: ImageHashes) -> tuple[int, tuple[int, int]]:
    """The window of ``y`` closest to the whole of ``x``: (pHash + dHash bits, (pHash, dHash))."""
    pd = _popcount(y.win_phash ^ x.win_phash[0])
    dd = _popcount(y.win_dhash ^ x.win_dhash[0])
    i = int((pd + dd).argmin())
    cand = (int(pd[i]), int(dd[i]))
    return sum(cand), cand


def compare(
    a_id: str, ha: ImageHashes, b_id: str, hb: ImageHashes, policy: NearDupPolicy = NearDupPolicy()
) -> PairDistance:
    """Distances of one pair and the verdict under ``policy``."""
    best = min(_best_window(x, y) for x, y in ((ha, hb), (hb, ha)))[1]
    m1, _ = ha.crop.hash_diff(hb.crop, hamming_cutoff=policy.crop_segment_bits)
    m2, _ = hb.crop.hash_diff(ha.crop, hamming_cutoff=policy.crop_segment_bits)
    segs = max(m1, m2)
    whole = (int(ha.phash - hb.phash), int(ha.dhash - hb.dhash))
    reasons = []
    if whole[0] <= policy.phash_max and whole[1] <= policy.dhash_max:
        reasons.append(f"whole-image pHash {whole[0]} / dHash {whole[1]} bits apart")
    elif best[0] <= policy.phash_max and best[1] <= policy.dhash_max:
        reasons.append(f"one is a crop of the other (best window pHash {best[0]} / dHash {best[1]} bits apart)")
    if segs >= policy.crop_segments_min:
        reasons.append(f"{segs} crop-resistant segments match")
    return PairDistance(
        a_id,
        b_id,
        whole[0],
        whole[1],
        min(best[0], whole[0]),
        min(best[1], whole[1]),
        segs,
        bool(reasons),
        "; ".join(reasons),
    )


def all_pairs(hashes: dict[str, ImageHashes], policy: NearDupPolicy = NearDupPolicy()) -> list[PairDistance]:
    """Every unordered pair, ordered near-duplicates first, then closest first."""
    ids = sorted(hashes)
    pairs = [compare(a, hashes[a], b, hashes[b], policy) for a, b in itertools.combinations(ids, 2)]
    return sorted(pairs, key=lambda p: p.sort_key)


def nearest_neighbours(pairs: list[PairDistance]) -> dict[str, PairDistance]:
    """For each image the pair with its closest other image."""
    out: dict[str, PairDistance] = {}
    for p in pairs:  # already closest-first
        for x in (p.a, p.b):
            out.setdefault(x, p)
    return out


# ---------------------------------------------------------------- on-disk cache

CACHE_FAMILY = "mvlsib-image-hashes/"  # every format this toolkit wrote starts so
CACHE_FORMAT = (
    f"mvlsib-image-hashes/1 windows={len(WINDOW_SCALES)}x{WINDOW_STEP}x{MAX_ASPECT_CHANGE} "
    f"work={WORK_SIZE[0]}x{WORK_SIZE[1]} crh={CRH_SEGMENTATION_SIZE}"
)


def _to_record(h: ImageHashes) -> dict[str, str]:
    return {
        "phash": str(h.phash),
        "dhash": str(h.dhash),
        "crop": str(h.crop),
        "win_phash": h.win_phash.astype("<u8").tobytes().hex(),
        "win_dhash": h.win_dhash.astype("<u8").tobytes().hex(),
    }


def _from_record(rec: dict[str, str]) -> ImageHashes:
    return ImageHashes(
        phash=imagehash.hex_to_hash(rec["phash"]),
        dhash=imagehash.hex_to_hash(rec["dhash"]),
        crop=imagehash.hex_to_multihash(rec["crop"]),
        win_phash=np.frombuffer(bytes.fromhex(rec["win_phash"]), dtype="<u8").astype(np.uint64),
        win_dhash=np.frombuffer(bytes.fromhex(rec["win_dhash"]), dtype="<u8").astype(np.uint64),
    )


def load_hash_cache(path) -> tuple[dict[str, ImageHashes], str]:
    """Hashes keyed by sha256 of the file bytes, and a note when the file was unusable (then empty)."""
    p = Path(path)
    if not os.path.lexists(p):
        return {}, ""
    if p.is_symlink() or not p.is_file():  # a FIFO, a device, a socket, a link: saving would replace it
        raise MvlsibError(
            f"--hash-cache {p}: exists and is not a regular file (a link, a device, a pipe or a socket); "
            "refusing to replace it. Choose another --hash-cache"
        )
    try:
        data = readers.read_json("hash_cache", p)
        found = data.get("format") if isinstance(data, dict) else None
    except MvlsibError as exc:
        found, data = None, str(exc)
    if not (isinstance(found, str) and found.startswith(CACHE_FAMILY)):
        # Not a cache of ours (a file of the user's, another tool's JSON): never overwritten.
        why = data if isinstance(data, str) else f"its format is not {CACHE_FAMILY}..."
        raise MvlsibError(
            f"--hash-cache {p}: not a hash cache of this toolkit ({why}); refusing to overwrite it. Choose another "
            "--hash-cache, or delete it if it is a damaged cache"
        )
    if found != CACHE_FORMAT:
        return {}, f"{p}: hash cache made with other settings; recomputing"
    try:
        return {sha: _from_record(rec) for sha, rec in data["hashes"].items()}, ""
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return {}, f"{p}: damaged hash cache ({type(exc).__name__}); recomputing"


def save_hash_cache(path, cache: dict[str, ImageHashes]) -> None:
    with atomic_open(path) as fh:
        json.dump({"format": CACHE_FORMAT, "hashes": {k: _to_record(cache[k]) for k in sorted(cache)}}, fh)


@contextlib.contextmanager
def hash_cache_file(path: str | Path | None, *, warn: Callable[[str], None]) -> Iterator[dict[str, ImageHashes]]:
    """The hash cache kept in ``path`` (none when ``path`` is None) for the duration of the block.

    Loaded on entry (``warn`` hears why an unusable file was ignored) and saved when the block
    completes without an error (after one, the file is left as it was).
    """
    if path is None:
        yield {}
        return
    cache, note = load_hash_cache(path)
    if note:
        warn(note)
    yield cache
    save_hash_cache(path, cache)
