"""Where a build's CPU time goes, part by part, beside the floor's phases.

    python benchmarks/build_ledger.py [--sib ../shared/sib-200] [--pool src/mvlsib/data/image_pool] [--runs 3]

``build_speed.py`` gives one number, build / floor. This script says what makes up the
difference. Each run starts two fresh processes, in turn:

- ``mvlsib-build build`` (the library's ``pipeline.build``, as the CLI calls it) with a timer
  around each named step below. Each step's CPU time is its own, without the named steps it
  calls (``key_bytes`` is not inside ``sample: other``). "start-up" is everything before the
  build (interpreter, imports of the CLI); "other" is the rest of a stage.
- ``benchmarks/build_floor.py`` with ``--phases``: its parse, corpus write, tables and images.

It prints the median CPU seconds of each part over ``--runs`` runs, which parts the floor has
too, the build's time above the floor, and the budget that build / (floor + the sampler's keys)
<= 1.35 leaves. The timers cost about a microsecond a call (33,000 calls of ``key_bytes``), a few
hundredths of a second in all, so the timed build is that much slower than an untimed one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (module, function, ledger part, what the floor does for it or "" when the floor has no such work)
STEPS = [
    ("mvlsib.builder.ingest", "read_language_columns", "ingest: read and parse the TSV files", "parse"),
    ("mvlsib.builder.ingest", "normalize_many", "ingest: text normalisation (NFC, spaces)", ""),
    ("mvlsib.builder.ingest", "duplicate_groups", "ingest: duplicate texts", ""),
    ("mvlsib.builder.ingest", "corpus_table", "ingest: arrow columns", "corpus"),
    ("mvlsib.workdir.corpus", "encode_corpus", "ingest: encode corpus.parquet", "corpus"),
    ("mvlsib.builder.ingest", "ingest", "ingest: other (checks, sort, report)", ""),
    ("mvlsib.builder.hashing", "key_bytes", "sample: SHA-256 keys (the documented sampler's)", ""),
    ("mvlsib.builder.sampler", "key_bytes", "sample: SHA-256 keys (the documented sampler's)", ""),
    ("mvlsib.workdir.instances", "save_instances", "sample: write instances.jsonl", "instances"),
    ("mvlsib.builder.sample", "sample", "sample: other (picks, balance)", ""),
    ("mvlsib.builder.sample", "sample_report", "sample: report", ""),
    ("mvlsib.validation.invariants", "check_schemas", "validate: schemas (corpus, manifest)", ""),
    ("mvlsib.validation.invariants", "_well_formed", "validate: instance schema", ""),
    ("mvlsib.validation.invariants", "check_answerable", "validate: answerable in every language", ""),
    ("mvlsib.validation.invariants", "validate", "validate: other invariants", ""),
    ("mvlsib.release.tables", "language_table", "publish: language tables (take)", "tables"),
    ("mvlsib.release.tables", "check_language_table", "publish: release-row checks", ""),
    ("mvlsib.release.tables", "write_table", "publish: write parquet (whole files)", "tables"),
    ("mvlsib.release.tables", "read_image_record", "publish: read, hash and decode pool images", "images"),
    ("mvlsib.release.manifest", "write_release_manifest", "publish: manifest (sha256 of every file)", ""),
    ("mvlsib.release.card.render", "render_card", "publish: dataset card", ""),
    ("mvlsib.release.preview", "write_preview", "publish: preview config", ""),
    ("mvlsib.release.publish", "publish", "publish: other (plan, stats, loader, bundle)", ""),
]

BUILD = r"""
import importlib, json, sys, time

cpu = time.process_time  # user + system CPU of this process; the cheapest clock to read

start_up = cpu()
from mvlsib.cli import build_cli
steps, out = json.loads(sys.argv[1]), sys.argv[2]
ledger = {"start-up": 0.0}
stack = []  # [part, started, time of timed callees]

def timed(fn, part):
    def wrapper(*args, **kwargs):
        stack.append([part, cpu(), 0.0])
        try:
            return fn(*args, **kwargs)
        finally:
            name, began, inner = stack.pop()
            spent = cpu() - began
            ledger[name] = ledger.get(name, 0.0) + spent - inner
            if stack:
                stack[-1][2] += spent
    return wrapper

for module, name, part, _ in steps:
    owner = importlib.import_module(module)
    *path, attr = name.split(".")  # "Class.method" times a method
    for step in path:
        owner = getattr(owner, step)
    setattr(owner, attr, timed(getattr(owner, attr), part))
ledger["start-up"] = cpu()
began = cpu()
sys.argv = ["mvlsib-build", "build", *sys.argv[3:]]
try:
    build_cli()
except SystemExit as exc:
    if exc.code:
        raise
ledger["total"] = cpu()
with open(out, "w") as fh:
    json.dump(ledger, fh)
"""


def _median_table(runs: list[dict]) -> dict[str, float]:
    return {key: statistics.median(r.get(key, 0.0) for r in runs) for key in runs[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sib", type=Path, default=REPO.parent / "shared" / "sib-200", help="SIB-200 checkout")
    ap.add_argument("--pool", type=Path, default=REPO / "src" / "mvlsib" / "data" / "image_pool", help="image pool")
    ap.add_argument("--runs", type=int, default=3, help="runs of each program; medians are printed (default 3)")
    args = ap.parse_args()

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])
    builds, floors = [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")  # bytecode as after pip install (build_speed.py)
        for n in range(-1, args.runs):  # run -1 fills the bytecode cache and is not counted
            work, rel, floor_out, ledger = tmp / f"w{n}", tmp / f"r{n}", tmp / f"f{n}", tmp / f"ledger{n}.json"
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    BUILD,
                    json.dumps(STEPS),
                    str(ledger),
                    "--sib",
                    str(args.sib),
                    "--pool",
                    str(args.pool),
                    "--out",
                    str(rel),
                    "--workdir",
                    str(work),
                ],
                env=env,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            floor = subprocess.run(
                [
                    sys.executable,
                    str(REPO / "benchmarks" / "build_floor.py"),
                    "--phases",
                    str(args.sib),
                    str(args.pool),
                    str(work / "instances.jsonl"),
                    str(floor_out),
                ],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            if n >= 0:
                builds.append(json.loads(ledger.read_text()))
                floors.append(json.loads(floor.stdout.strip().splitlines()[-1]))
                print(
                    f"run {n + 1}: build {builds[-1]['total']:.2f} CPU s, floor {floors[-1]['total']:.2f} CPU s",
                    flush=True,
                )

    b, f = _median_table(builds), _median_table(floors)
    parts = list(dict.fromkeys(part for _, _, part, _ in STEPS))
    floor_of = {part: phase for _, _, part, phase in STEPS}
    timed = sum(b.get(p, 0.0) for p in parts) + b["start-up"]
    rows = [("start-up (interpreter, imports)", b["start-up"], "start-up")]
    rows += [(p, b.get(p, 0.0), floor_of[p]) for p in parts]
    rows.append(("untimed rest (the timers' own cost included)", b["total"] - timed, ""))
    print(f"\nmedian CPU seconds of {args.runs} runs (each part without the timed steps it calls)\n")
    print(f"| {'build part':52} | build | floor has it as |")
    print(f"|{'-' * 54}|-------|-----------------|")
    for name, seconds, phase in rows:
        print(f"| {name:52} | {seconds:5.2f} | {phase or '—':15} |")
    print(
        "\nfloor phases: "
        + ", ".join(f"{k} {v:.2f}" for k, v in f.items() if k != "total")
        + f"; total {f['total']:.2f} CPU s"
    )
    not_in_floor = sum(seconds for _, seconds, phase in rows if not phase)
    print(
        f"build {b['total']:.2f} CPU s = floor {f['total']:.2f} + {b['total'] - f['total']:.2f}; "
        f"parts the floor does not have: {not_in_floor:.2f} CPU s, of which the sampler's keys "
        f"{b.get('sample: SHA-256 keys (the documented sampler' + chr(39) + 's)', 0.0):.2f}"
    )
    keys = b.get("sample: SHA-256 keys (the documented sampler" + chr(39) + "s)", 0.0)
    print(
        f"build / (floor + keys) <= 1.35 leaves {0.35 * (f['total'] + keys):.2f} CPU s above floor + keys; "
        f"the build uses {b['total'] - f['total'] - keys:.2f}"
    )


if __name__ == "__main__":
    main()
