"""Memory of an evaluation run's plan: peak RSS and CPU of building the prompts a run will send.

    python benchmarks/run_memory.py --data RELEASE [--languages 20] [--shards 4] [--baseline OLD_SRC]

A prompt holds its texts (about 3.8 KB), so what a run keeps is mostly its prompts. Each row is
a fresh process that plans a run over the first ``--languages`` languages of the release, every
task and k (the default run), as ``mvlsib-eval run`` does before loading the model:

- **whole run**: no ``--shard``, nothing done yet;
- **shard 0/N**: ``--shard 0/N``;
- **resume, half done**: the whole run with every other item already in the predictions file;
- **whole run, N waves**: as ``run`` plans a run larger than ``--max-prompts`` (here N waves): a
  counting pass over the keys, then one wave's prompts at a time ("prompts" is the largest wave).

With ``--baseline`` (a ``src/`` folder of older code, e.g. ``git archive 617dbaf src | tar -x -C /tmp/old``),
the same rows run with that code too (it built every prompt of the run, then dealt shards and
skipped done keys). ``RELEASE`` is a release folder (``mvlsib-build build ... --out RELEASE``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from mvlsib.evaluation.run import runner
from mvlsib.evaluation.run.shards import Shard, select
data, n_lang, mode, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
opts = runner.RunOptions(data=data, model="m", out=Path("unused"), progress=False)
pairs = runner.resolve_tasks_ks(opts.tasks, opts.ks)
langs = runner.resolve_languages(data, "all")[:n_lang]
shard = Shard(0, count) if mode == "shard" else None
done = set()
if mode == "resume":  # every other key of the run (read from a cheap pass over the rows)
    loader = runner._compat.LOADER
    n = 0
    for lang in langs:
        ids = [r["instance_id"] for r in loader.load_rows(lang, data)]
        for task, k in pairs:
            for iid in ids:
                if n % 2 == 0:
                    done.add((task, k, lang, iid))
                n += 1
t0 = time.process_time()
if mode == "waves":  # as run does with --max-prompts: a counting pass, then one wave at a time
    plan = runner.plan_items(opts, pairs, langs, prompts=False)
    prompts, n_run = 0, plan.n_run
    for w in range(count):
        part = runner.plan_items(opts, pairs, langs, wave=Shard(w, count))
        prompts = max(prompts, len(part.pending))
        del part
elif hasattr(runner, "plan_items"):
    plan = runner.plan_items(opts, pairs, langs, shard=shard, done=done)
    prompts, n_run = len(plan.pending), plan.n_run
else:  # older code: every prompt of the run first
    items, _ = runner.build_items(opts, pairs, langs)
    n_run = len(items)
    items = [it for it in select(items, shard) if (it.task, it.k, it.language, it.instance_id) not in done]
    prompts = len(items)
print(json.dumps({"prompts": prompts, "n_run": n_run, "cpu_s": time.process_time() - t0,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _row(src: Path, data: Path, languages: int, mode: str, shards: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(data), str(languages), mode, str(shards)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="a release folder")
    parser.add_argument("--languages", type=int, default=20, help="plan over the first N languages (default 20)")
    parser.add_argument("--shards", type=int, default=4, help="N of the shard row (default 4)")
    parser.add_argument("--baseline", type=Path, default=None, help="a src/ folder of older code to run beside")
    args = parser.parse_args()
    sources = [("now", REPO / "src")] + ([("baseline", args.baseline)] if args.baseline else [])
    print(f"{'code':<9} {'plan':<20} {'prompts':>9} {'of run':>9} {'peak RSS MB':>12} {'CPU s':>7}")
    rows = (
        ("whole", "whole run"),
        ("shard", f"shard 0/{args.shards}"),
        ("resume", "resume, half done"),
        ("waves", f"whole run, {args.shards} waves"),
    )
    for mode, label in rows:
        for name, src in sources:
            if mode == "waves" and name != "now":
                continue  # older code has no waves
            r = _row(src, args.data, args.languages, mode, args.shards)
            print(
                f"{name:<9} {label:<20} {r['prompts']:>9,} {r['n_run']:>9,} {r['peak_mb']:>12,.0f} {r['cpu_s']:>7.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
