"""How large a full run's batch request files are, with images inline (base64 in every request: hosted batch
APIs) and as ``file://`` references (each image once under OUT/images/: vLLM's run-batch).

    PYTHONPATH=src python benchmarks/batch_files.py --release DIR [--limit 2] [--model NAME]

Writes both forms with ``mvlsib-eval batch prepare`` for every language of the release and every task x k
of a default run, ``--limit`` instances a language (the same instances in every language), measures the
bytes per request of each task x k, and scales each by the full run's number of prompts of that task x k
(every instance of every language). The ``files`` form of the full run writes every release image once:
their bytes are the release's image bytes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def prepare(release: Path, out: Path, refs: str, args) -> None:
    cmd = [
        str(Path(sys.executable).parent / "mvlsib-eval"), "batch", "prepare", "--release", str(release),
        "--model", args.model, "--limit", str(args.limit), "--image-refs", refs, "--out", str(out), "--no-progress",
    ]  # fmt: skip
    subprocess.run(cmd, check=True, env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"})


def per_cell(folder: Path) -> dict[tuple[str, int], list[int]]:
    """Bytes of each request line (newline included), by task x k."""
    cells: dict[tuple[str, int], list[int]] = defaultdict(list)
    for path in sorted(folder.glob("requests-*.jsonl")):
        with open(path, "rb") as fh:
            for line in fh:
                meta = json.loads(line)["custom_id"].split("|")
                cells[(meta[0], int(meta[1].removeprefix("k")))].append(len(line))
    return cells


def release_image_bytes(release: Path) -> int:
    import pyarrow.parquet as pq

    column = pq.read_table(release / "data" / "images" / "test.parquet", columns=["image"]).column("image")
    return sum(len(cell["bytes"]) for cell in column.to_pylist())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--release", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=2, help="instances per language in the measured selection")
    ap.add_argument("--model", default="served-model")
    args = ap.parse_args(argv)
    manifest = json.loads((args.release / "manifest.json").read_text("utf-8"))
    languages = len(manifest["build"]["languages"])
    instances = int(manifest["build"]["num_instances"])
    with tempfile.TemporaryDirectory(prefix="batch-files-") as tmp:
        sizes = {}
        for refs in ("inline", "files"):
            prepare(args.release, Path(tmp) / refs, refs, args)
            sizes[refs] = per_cell(Path(tmp) / refs)
    full_prompts = instances * languages
    images = release_image_bytes(args.release)
    print(
        f"\n{languages} languages x {args.limit} instances measured; the full run: {instances:,} instances a language\n"
    )
    print("| task | k | inline, bytes a request | file://, bytes a request | prompts in the full run |")
    print("|---|---|---|---|---|")
    totals = {"inline": 0.0, "files": 0.0}
    prompts = 0
    for cell in sorted(sizes["inline"]):
        mean = {refs: sum(sizes[refs][cell]) / len(sizes[refs][cell]) for refs in sizes}
        for refs in totals:
            totals[refs] += mean[refs] * full_prompts
        prompts += full_prompts
        print(f"| {cell[0]} | {cell[1]} | {mean['inline']:,.0f} | {mean['files']:,.0f} | {full_prompts:,} |")
    print(
        f"\nfull run, {prompts:,} requests: inline {totals['inline'] / 1e9:,.1f} GB; "
        f"file:// {totals['files'] / 1e9:,.2f} GB + {images / 1e6:.1f} MB of images written once "
        f"({totals['inline'] / (totals['files'] + images):,.0f}x smaller)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
