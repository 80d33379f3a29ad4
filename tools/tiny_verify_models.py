"""Write a tiny random-weight model for trying `mvlsib-build verify-images` offline.

Run from a checkout (needs the eval extra: torch, transformers):

    python tools/tiny_verify_models.py llava --out /tmp/tiny-llava
    python tools/tiny_verify_models.py clip --out /tmp/tiny-clip --fit-pool src/mvlsib/data/image_pool

The LLaVA has random weights: it fails almost every image. The CLIP fitted to a pool passes
every image of it and fails one whose manifest topic is wrong. The builders live with the
tests (tests/tiny_models/).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO / "tests", REPO / "src"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/tiny_verify_models.py",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument("kind", choices=("llava", "clip"), help="llava: random LLaVA (generative); clip: dual encoder")
    parser.add_argument("--out", required=True, type=Path, help="Folder to write the model into.")
    parser.add_argument(
        "--fit-pool",
        type=Path,
        default=None,
        help="clip only: fit the CLIP to this pool's manifest topics (e.g. src/mvlsib/data/image_pool).",
    )
    parser.add_argument("--steps", type=int, default=150, help="clip --fit-pool: optimiser steps (default 150).")
    parser.add_argument("--seed", type=int, default=0, help="Weight seed (default 0).")
    args = parser.parse_args(argv)

    # Imported after parsing: --help needs neither torch nor transformers.
    from tiny_models.clip import _tokenizer_texts, build_tiny_clip, fit_tiny_clip
    from tiny_models.llava import build_tiny_llava

    if args.kind == "llava":
        build_tiny_llava(args.out, _tokenizer_texts(), seed=args.seed, letter_scale=3.0)
        print(f"wrote a random-weight LLaVA to {args.out}")
        return 0
    build_tiny_clip(args.out, seed=args.seed)
    print(f"wrote a random-weight CLIP to {args.out}")
    if args.fit_pool is not None:
        stats = fit_tiny_clip(args.out, args.fit_pool, steps=args.steps, seed=args.seed)
        print(
            f"fitted to {args.fit_pool}: {stats['steps']} steps, loss {stats['loss']:.4f}, "
            f"train accuracy {stats['train_accuracy']:.3f} over {stats['images']} images"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
