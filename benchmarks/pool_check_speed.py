"""How fast `images check` is, and what its two speed-ups buy.

Run from the repository root:  python3 benchmarks/pool_check_speed.py [--pool src/mvlsib/data/image_pool]

Compares in one run:
  * window hashes (539 crop windows per image): integral-image box averaging for all windows at
    once (ours) vs. cropping and resizing every window with PIL (the naive way);
  * a whole `images check`: cold (every image hashed) vs. warm (`--hash-cache` file from the cold run);
  * scaling in manifest rows (--rows): manifests of 1,000 to 100,000 rows naming the pool's images
    (each file read and decoded once, pairs compared once per distinct content): linear.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def naive_window_hashes(im):
    """The straightforward version: PIL crop + resize per window, then the same hash maths."""
    import numpy as np
    from PIL import Image

    from mvlsib.image_pool import hashes as H

    grey = im.convert("L")
    size = H.WORK_SIZE if grey.width >= grey.height else H.WORK_SIZE[::-1]
    g = grey.resize(size, Image.Resampling.LANCZOS)
    w, h = g.size
    big, small = [], []
    for ox, oy, sx, sy in H._windows():
        c = g.crop((round(ox * w), round(oy * h), round((ox + sx) * w), round((oy + sy) * h)))
        big.append(np.asarray(c.resize((32, 32), Image.Resampling.BOX), dtype=np.float64))
        small.append(np.asarray(c.resize((9, 8), Image.Resampling.BOX), dtype=np.float64))
    d = H._dct_matrix()
    low = (d @ np.stack(big) @ d.T)[:, :8, :8].reshape(len(big), 64)
    ph = H._pack(low > np.median(low, axis=1, keepdims=True))
    s = np.stack(small)
    return ph, H._pack(s[:, :, 1:] > s[:, :, :-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", default="src/mvlsib/data/image_pool", help="pool to check (default: the bundled one)")
    ap.add_argument("--images", type=int, default=20, help="images used for the per-image window timing")
    ap.add_argument(
        "--rows",
        default="1000,10000,100000",
        help="comma-separated manifest sizes for the scaling rows (default: 1000,10000,100000; empty: skip)",
    )
    args = ap.parse_args()

    from PIL import Image

    from mvlsib.image_pool import hashes as H
    from mvlsib.image_pool.check import check_pool, pool_root
    from mvlsib.workdir.pool_manifest import read_manifest

    root = pool_root(args.pool)
    rows = read_manifest(args.pool)[: args.images]
    ims = []
    for r in rows:
        im = Image.open(root / r.file).convert("RGB")
        im.load()
        ims.append(im)

    t = time.perf_counter()
    for im in ims:
        H._window_hashes(im)
    ours = (time.perf_counter() - t) / len(ims)
    t = time.perf_counter()
    for im in ims:
        naive_window_hashes(im)
    naive = (time.perf_counter() - t) / len(ims)

    with tempfile.TemporaryDirectory() as tmp:
        cache_file = Path(tmp) / "hashes.json"
        t = time.perf_counter()
        cache: dict = {}
        report = check_pool(args.pool, hash_cache=cache)
        cold = time.perf_counter() - t
        H.save_hash_cache(cache_file, cache)
        t = time.perf_counter()
        warm_cache, _ = H.load_hash_cache(cache_file)
        check_pool(args.pool, hash_cache=warm_cache)
        warm = time.perf_counter() - t

    n = report.n_images
    print(f"pool: {root} ({n} images, {n * (n - 1) // 2} pairs), {len(H._windows())} windows per image")
    print(f"{'measurement':<44} {'ours':>10} {'naive':>10} {'speed-up':>9}")
    print(f"{'window hashes per image (s)':<44} {ours:>10.4f} {naive:>10.4f} {naive / ours:>8.1f}x")
    print(f"{'images check, whole pool (s): warm vs cold':<44} {warm:>10.2f} {cold:>10.2f} {cold / warm:>8.1f}x")
    sizes = [int(x) for x in args.rows.split(",") if x.strip()]
    if sizes:
        print(f"{'manifest rows':>14} {'images check (s)':>17} {'per 1,000 rows (s)':>19} {'findings':>9}")
    for n, seconds, findings in scaling(args.pool, sizes, warm_cache):
        print(f"{n:>14,} {seconds:>17.2f} {1000 * seconds / n:>19.3f} {findings:>9,}")


def scaling(pool: str, sizes: list[int], cache: dict):
    """``images check`` (warm hash cache) on manifests of ``sizes`` rows that name the pool's images in turn."""
    from mvlsib.image_pool.check import CheckOptions, check_pool
    from mvlsib.workdir.pool_manifest import read_manifest, write_manifest

    base = read_manifest(pool)
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / "pool"
            shutil.copytree(Path(pool), copy)
            rows = [
                dataclasses.replace(base[i % len(base)], image_id=f"{base[i % len(base)].image_id}_{i}")
                for i in range(n)
            ]
            write_manifest(copy, rows)
            t = time.perf_counter()
            report = check_pool(copy, CheckOptions(expected_per_topic=None), hash_cache=cache)
            yield n, time.perf_counter() - t, len(report.findings)


if __name__ == "__main__":
    main()
