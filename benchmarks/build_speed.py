"""Build / floor (CPU time), and wall time and peak memory per stage, on all languages of SIB-200.

    python benchmarks/build_speed.py [--sib ../shared/sib-200] [--pool src/mvlsib/data/image_pool] [--runs 3] [--stages]

First ``mvlsib-build build`` (``python -m mvlsib build``, a fresh process, imports included),
``benchmarks/build_floor.py`` (only the reading, parsing and whole-file pyarrow writing no build
can avoid) and ``build_floor.py --keys`` (the SHA-256 keys the documented sampler must compute,
1.94 M; the hashing's own CPU, its inputs being read by the floor already) run in turn ``--runs``
times. Each round's CPU seconds (user + sys of the child) give build / (floor + keys), and the
median is printed (target <= 1.35), with build / floor beside it. Side by side in one run, so load
on the shared machine hits all alike. The floor is given the instances file the first build made.
Every process reads compiled bytecode, as after ``pip install`` (``--bytecode none`` keeps the
environment as it is: this machine sets PYTHONDONTWRITEBYTECODE, so the build would compile its
own modules in every run); a first, uncounted pair fills that cache.

With ``--stages``, also the older per-stage table:

Each stage runs in its own fresh Python process (imports included, as a user would
run the command: load -> stage -> save), which reports its own wall time and peak RSS.

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
    from mvlsib.workdir.corpus import save_corpus
    save_corpus(work, ingest(sib, progress=False))
elif stage == "sample":
    from mvlsib.builder.sample import sample
    from mvlsib.workdir.corpus import load_corpus
    from mvlsib.workdir.instances import save_instances
    save_instances(work, [i.as_dict() for i in sample(load_corpus(work), pool, 0)])
elif stage == "validate":
    from mvlsib.validation.invariants import validate
    from mvlsib.workdir.corpus import load_corpus
    from mvlsib.workdir.instances import load_instances
    assert validate(load_corpus(work), load_instances(work), pool).ok
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
print(json.dumps({"seconds": time.perf_counter() - t0, "peak_mb": peak}))
"""


def run_stage(stage: str, work: Path, sib: Path, pool: Path) -> dict:
    env = {"PYTHONPATH": str(REPO / "src")}
    import os

    env = {**os.environ, **env}
    out = subprocess.run(
        [sys.executable, "-c", STAGE, stage, str(work), str(sib), str(pool)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cpu_of(cmd: list[str], env: dict) -> float:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build_vs_floor(sib: Path, pool: Path, runs: int, baseline: Path | None = None, bytecode: str = "cached") -> None:
    import os
    import statistics

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    rows, base_rows, key_ratios = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if bytecode == "cached":
            # As installed: pip compiles a wheel's modules at install time, and a checkout writes
            # __pycache__ on its first run. A machine with PYTHONDONTWRITEBYTECODE set (this one)
            # would otherwise make every build compile its ~60 modules from source (about 0.15 CPU s)
            # while the floor, one small script, barely compiles anything. The cache goes to a
            # temporary folder (not the source tree); run -1 fills it and is not counted.
            env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        for n in range(-1 if bytecode == "cached" else 0, runs):
            work, rel, floor = tmp / f"work{n}", tmp / f"rel{n}", tmp / f"floor{n}"
            build = _cpu_of(
                [
                    sys.executable,
                    "-m",
                    "mvlsib",
                    "build",
                    "--sib",
                    str(sib),
                    "--pool",
                    str(pool),
                    "--out",
                    str(rel),
                    "--workdir",
                    str(work),
                ],
                env,
            )
            low = _cpu_of(
                [
                    sys.executable,
                    str(REPO / "benchmarks" / "build_floor.py"),
                    str(sib),
                    str(pool),
                    str(work / "instances.jsonl"),
                    str(floor),
                ],
                env,
            )
            if n < 0:
                if baseline is not None:
                    _cpu_of(
                        [
                            sys.executable,
                            "-m",
                            "mvlsib",
                            "build",
                            "--sib",
                            str(sib),
                            "--pool",
                            str(pool),
                            "--out",
                            str(tmp / "brel-warm"),
                            "--workdir",
                            str(tmp / "bwork-warm"),
                        ],
                        {**env, "PYTHONPATH": str(baseline)},
                    )
                print(
                    f"warm-up (bytecode compiled and cached, not counted): build {build:.2f} CPU s, floor {low:.2f} CPU s",
                    flush=True,
                )
                continue
            keys = json.loads(
                subprocess.run(
                    [
                        sys.executable,
                        str(REPO / "benchmarks" / "build_floor.py"),
                        "--keys",
                        str(sib),
                        str(pool),
                        str(work / "instances.jsonl"),
                    ],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )["cpu_s"]
            rows.append((build, low, build / low))
            key_ratios.append(build / (low + keys))
            line = (
                f"run {n + 1}: build {build:6.2f} CPU s   floor {low:5.2f} CPU s   build / floor {build / low:.2f}"
                f"   (sampler keys {keys:4.2f} CPU s, build / (floor + keys) {build / (low + keys):.2f})"
            )
            if baseline is not None:
                # The same build from another source tree (e.g. `git archive` of main), in the same pair.
                base_env = {**env, "PYTHONPATH": str(baseline)}
                old = _cpu_of(
                    [
                        sys.executable,
                        "-m",
                        "mvlsib",
                        "build",
                        "--sib",
                        str(sib),
                        "--pool",
                        str(pool),
                        "--out",
                        str(tmp / f"brel{n}"),
                        "--workdir",
                        str(tmp / f"bwork{n}"),
                    ],
                    base_env,
                )
                base_rows.append(old / low)
                line += f"   baseline {old:6.2f} CPU s, baseline / floor {old / low:.2f}"
            print(line, flush=True)
    ratios = sorted(r for _, _, r in rows)
    key_ratios.sort()
    print(
        f"build / (floor + the documented sampler's SHA-256 keys) (CPU), median of {runs} (bytecode {bytecode}): "
        f"{statistics.median(key_ratios):.2f} (min {key_ratios[0]:.2f}, max {key_ratios[-1]:.2f}); target <= 1.35"
    )
    print(
        f"build / floor without the keys, median: {statistics.median(ratios):.2f} (min {ratios[0]:.2f}, max "
        f"{ratios[-1]:.2f}); build median {statistics.median(b for b, _, _ in rows):.2f} s, "
        f"floor median {statistics.median(f for _, f, _ in rows):.2f} s"
    )
    if base_rows:
        print(f"baseline / floor (CPU), median of {runs}: {statistics.median(base_rows):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sib", type=Path, default=REPO.parent / "shared" / "sib-200")
    parser.add_argument("--pool", type=Path, default=REPO / "src/mvlsib/data/image_pool")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stages", action="store_true", help="also the per-stage wall time / memory table")
    parser.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="another src/ folder (e.g. `git archive main src | tar -x -C /tmp/base`, then "
        "/tmp/base/src) whose build runs in each pair too",
    )
    parser.add_argument(
        "--bytecode",
        choices=("cached", "none"),
        default="cached",
        help="cached (default): every process reads compiled bytecode, as after `pip install`; one "
        "warm-up pair fills the cache. none: keep the environment as it is (with "
        "PYTHONDONTWRITEBYTECODE set, the build compiles its modules in every run)",
    )
    args = parser.parse_args()
    build_vs_floor(args.sib, args.pool, args.runs, args.baseline, args.bytecode)
    if not args.stages:
        return
    targets = {"ingest": 10, "sample": 10, "validate": 20}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print(f"{'stage':<10} {'wall s':>8} {'target s':>9} {'peak RSS MB':>12}")
        for stage in ("ingest", "sample", "validate"):
            r = run_stage(stage, work, args.sib, args.pool)
            print(f"{stage:<10} {r['seconds']:>8.2f} {targets[stage]:>9} {r['peak_mb']:>12.0f}")


if __name__ == "__main__":
    main()
