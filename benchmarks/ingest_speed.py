"""Ingest speed: mvlsib's ingest vs. the naive pandas way, all languages of SIB-200.

Each run is a fresh child process, so wall time includes imports and peak RSS is the child's own.

    python3 benchmarks/ingest_speed.py [--sib ../shared/sib-200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

OURS = """
import sys
from mvlsib.builder.ingest import ingest
from mvlsib.workdir.corpus import save_corpus
corpus = ingest(sys.argv[1], progress=False)
save_corpus(sys.argv[2], corpus)
print(corpus.report["n_rows"])
"""

# What one would write without the toolkit: pandas with default parsing (NaN conversion, no checks).
NAIVE = """
import sys
from pathlib import Path
import pandas as pd
root = Path(sys.argv[1]) / "data" / "annotated"
frames = []
for lang in sorted(p.name for p in root.iterdir()):
    for split in ("train", "dev", "test"):
        df = pd.read_csv(root / lang / f"{split}.tsv", sep="\\t")
        df["language"], df["split"] = lang, split
        frames.append(df)
df = pd.concat(frames).rename(columns={"category": "topic"}).sort_values(["language", "index_id"])
Path(sys.argv[2]).mkdir(parents=True, exist_ok=True)
df[["language", "index_id", "split", "topic", "text"]].to_parquet(Path(sys.argv[2]) / "corpus.parquet", index=False)
print(len(df))
"""


def run_child(code: str, sib: Path, work: Path) -> tuple[float, float, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(sib), str(work)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{err}")
    return wall, usage.ru_maxrss / 1024, out.strip()  # ru_maxrss is in KiB on Linux


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sib", type=Path, default=REPO.parent / "shared" / "sib-200")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, code in (("mvlsib ingest (csv, checks, duplicates)", OURS), ("naive pandas read_csv", NAIVE)):
            walls, rss = [], []
            for i in range(args.repeat):
                wall, mib, out = run_child(code, args.sib, Path(tmp) / f"{len(rows)}-{i}")
                walls.append(wall)
                rss.append(mib)
            rows.append((name, statistics.median(walls), min(walls), max(rss), out))
    print(f"SIB-200 at {args.sib}; {os.cpu_count()} CPUs; median of {args.repeat} fresh processes")
    print(f"{'method':42s} {'wall s (median)':>16s} {'wall s (best)':>14s} {'peak RSS MiB':>13s} {'rows':>8s}")
    for name, med, best, mib, out in rows:
        print(f"{name:42s} {med:16.2f} {best:14.2f} {mib:13.0f} {out:>8s}")


if __name__ == "__main__":
    main()
