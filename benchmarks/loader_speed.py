"""``mvl_sib.load_task`` over every language of a full release: images decoded once per
language (as the loader once did) vs once per release (the loader's image cache).

    python benchmarks/loader_speed.py [--release DIR] [--task i2s] [--k 1] [--rounds 3]

Without ``--release`` it builds one (``mvlsib-build build``, all languages of SIB-200) in a
temporary folder. Each round loads every language with the cache emptied before each
language (the old behaviour) and then with the cache kept, side by side; the median of the
rounds is printed, in CPU seconds of this process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", type=Path, default=None)
    ap.add_argument("--sib", type=Path, default=REPO.parent / "shared" / "sib-200")
    ap.add_argument("--pool", type=Path, default=REPO / "src" / "mvlsib" / "data" / "image_pool")
    ap.add_argument("--task", default="i2s")
    ap.add_argument("--k", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from mvlsib.release_format import mvl_sib

    with tempfile.TemporaryDirectory() as tmp:
        release = args.release
        if release is None:
            from mvlsib.pipeline import build

            release = Path(tmp) / "rel"
            build(str(args.sib), release, pool=str(args.pool), progress=False)
        langs = mvl_sib.languages(str(release))
        before, after = [], []
        for _ in range(args.rounds):
            t = time.process_time()
            for lang in langs:
                mvl_sib._IMAGE_CACHE.clear()
                old = mvl_sib.load_task(args.task, lang, k=args.k, source=str(release))
            before.append(time.process_time() - t)
            mvl_sib._IMAGE_CACHE.clear()
            t = time.process_time()
            for lang in langs:
                new = mvl_sib.load_task(args.task, lang, k=args.k, source=str(release))
            after.append(time.process_time() - t)
            assert [(e["instance_id"], e["image_ids"], e["options"]) for e in old] == [
                (e["instance_id"], e["image_ids"], e["options"]) for e in new
            ]
        b, a = statistics.median(before), statistics.median(after)
        print(
            f"load_task({args.task!r}, k={args.k}) over {len(langs)} languages, median of {args.rounds} "
            f"(CPU s): decoded per language {b:.2f} s, once per release {a:.2f} s: {b / a:.1f}x"
        )


if __name__ == "__main__":
    main()
