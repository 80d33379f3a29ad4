"""Wall time and peak memory of ingest, sample and validate on all languages of SIB-200.

    python benchmarks/build_speed.py [--sib ../shared/sib-200] [--pool src/mvlsib/data/image_pool]

Each stage runs in its own fresh Python process (imports included, as a user would
run the command), which reports its own wall time and peak RSS. A last row compares
the corpus schema check done per row (the naive way) with the column-wise check that
`validate` uses, in one process.

Targets on the 2-core reference machine: ingest <= 10 s, sample <= 10 s,
validate <= 20 s, peak RSS <= 1.5 GB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

STAGE = r"""
import json, resource, sys, time
t0 = time.perf_counter()
stage, work, sib, pool = sys.argv[1:5]
if stage == "ingest":
    from mvlsib.builder.ingest import ingest
    ingest(work, sib=sib, progress=False)
elif stage == "sample":
    from mvlsib.builder.sample import sample
    sample(work, seed=0, pool=pool)
elif stage == "validate":
    from mvlsib.validation.invariants import validate_workdir
    assert validate_workdir(work, pool=pool).ok
elif stage == "schema":
    from mvlsib.workdir.corpus import read_corpus
    from mvlsib.schema.validators import frame_errors, validator
    corpus = read_corpus(work)
    t1 = time.perf_counter()
    v = validator("corpus_row")
    naive_bad = sum(not v.is_valid(r) for r in corpus.to_dict("records"))
    t2 = time.perf_counter()
    ours_bad = len(frame_errors("corpus_row", corpus))
    t3 = time.perf_counter()
    assert naive_bad == ours_bad == 0
    print(json.dumps({"naive": t2 - t1, "ours": t3 - t2}))
    raise SystemExit
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
print(json.dumps({"seconds": time.perf_counter() - t0, "peak_mb": peak}))
"""


def run_stage(stage: str, work: Path, sib: Path, pool: Path) -> dict:
    env = {"PYTHONPATH": str(REPO / "src")}
    import os

    env = {**os.environ, **env}
    out = subprocess.run([sys.executable, "-c", STAGE, stage, str(work), str(sib), str(pool)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sib", type=Path, default=REPO.parent / "shared" / "sib-200")
    parser.add_argument("--pool", type=Path, default=REPO / "src/mvlsib/data/image_pool")
    args = parser.parse_args()
    targets = {"ingest": 10, "sample": 10, "validate": 20}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"{'stage':<10} {'wall s':>8} {'target s':>9} {'peak RSS MB':>12}")
        for stage in ("ingest", "sample", "validate"):
            r = run_stage(stage, work, args.sib, args.pool)
            print(f"{stage:<10} {r['seconds']:>8.2f} {targets[stage]:>9} {r['peak_mb']:>12.0f}")
        r = run_stage("schema", work, args.sib, args.pool)
        print()
        print("corpus schema check (199,796 rows)")
        print(f"{'per row (naive)':<22} {r['naive']:>7.2f} s")
        print(f"{'column-wise (ours)':<22} {r['ours']:>7.2f} s   ratio {r['naive'] / r['ours']:.1f}x")


if __name__ == "__main__":
    main()
