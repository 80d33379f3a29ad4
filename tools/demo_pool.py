"""Draw the demo image pool: 10 CC0 pictograms per topic and their manifest.csv.

Run from a checkout:  python tools/demo_pool.py --out DIR

Deterministic: the same code and Pillow version give byte-identical files, so
``--out src/mvlsib/data/image_pool`` redraws the pool the package ships (the pictograms
themselves live in tools/pictograms/).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python tools/demo_pool.py",
        description=__doc__.split("\n\n")[0],
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("image_pool"),
        help="Folder to write the PNGs and manifest.csv into: new, empty, or an earlier demo draw "
        "(a folder holding anything else, such as a curated pool, is refused).",
    )
    parser.add_argument("--no-progress", action="store_true", help="Do not show a progress bar.")
    args = parser.parse_args(argv)
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out}: exists and is not a folder")

    # Imported after parsing so that --help needs neither Pillow nor the package.
    from pictograms import write_demo_pool

    from mvlsib.errors import MvlsibError
    from mvlsib.oserrors import message

    try:
        # Refused when --out holds anything but an earlier demo draw (a curated pool's manifest.csv).
        path = write_demo_pool(args.out, progress=not args.no_progress)
    except MvlsibError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {message(exc)}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
