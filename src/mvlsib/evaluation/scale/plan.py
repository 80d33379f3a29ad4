"""``mvlsib-eval plan``: how many prompts a run has, per task × k and per shard, and a SLURM array
script that runs it one shard per GPU.

The counts are the runner's own (``runner.plan_items`` without prompts: the same selection, the
same round-robin dealing), so a plan and the run it describes cannot disagree.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from .._compat import MvlsibError, output_file, terminal
from ..run.runner import Run, RunOptions


@dataclass(frozen=True)
class Plan:
    languages: list[str]
    pairs: list[tuple[str, int]]
    per_language: int  # instances of each language after --limit
    n_prompts: int
    shards: list[int]  # prompts of each shard, in index order

    @property
    def per_cell(self) -> int:
        return self.per_language * len(self.languages)


def count(opts: RunOptions, gpus: int) -> Plan:
    """The prompt counts of ``opts``'s run dealt to ``gpus`` shards."""
    if gpus < 1:
        raise MvlsibError(f"--gpus must be at least 1, got {gpus}")
    run = Run.resolve(opts)
    pairs, languages = list(run.pairs), list(run.languages)
    # Text-only pairs need no image table: counting reads only the rows.
    plan = run.plan(prompts=False)
    n = plan.n_run
    per_language, rest = divmod(n, len(languages) * len(pairs))
    if rest:  # every language of a release has the same instances
        raise MvlsibError(f"{opts.data}: its languages have different numbers of instances; rebuild the release")
    if gpus > n:  # an empty shard has nothing to run, and merge would wait for it
        raise MvlsibError(f"--gpus {gpus}: the run has only {n} prompt(s); give --gpus {n} or fewer")
    shards = [n // gpus + (1 if i < n % gpus else 0) for i in range(gpus)]
    return Plan(languages, pairs, per_language, n, shards)


def describe(plan: Plan, prompts_per_second: float | None = None) -> str:
    """The plan as text: totals, the prompts per task × k, the prompts (and hours) per shard."""
    lines = [
        f"{len(plan.languages)} languages × {plan.per_language} instances × {len(plan.pairs)} task/k cells "
        f"= {plan.n_prompts} prompts",
        "",
        f"{'task':<5} {'k':>2} {'prompts':>12}",
    ]
    lines += [f"{task:<5} {k:>2} {plan.per_cell:>12,}" for task, k in plan.pairs]
    lines.append("")
    count = len(plan.shards)
    for i, n in enumerate(plan.shards):
        hours = f" (~{n / prompts_per_second / 3600:.1f} h)" if prompts_per_second else ""
        lines.append(f"shard {i}/{count}: {n} prompts{hours}")
    return "\n".join(lines)


def slurm_script(plan: Plan, run_args: list[str], out: str, *, prompts_per_second: float | None = None) -> str:
    """A SLURM array script: task I runs shard I of the run (mvlsib-eval reads SLURM_ARRAY_TASK_ID/COUNT)."""
    count = len(plan.shards)
    if prompts_per_second:
        # A fifth more than the estimate, at least an hour: a task over its limit is killed (it resumes).
        hours = max(1, math.ceil(max(plan.shards) / prompts_per_second / 3600 * 1.2))
        limit = f"{hours}:00:00"
    else:
        limit = "24:00:00"
    # Words with a line break or control are written $'...': none ends a comment line or reaches a terminal raw.
    command = terminal.shell_command(["mvlsib-eval", "run", *run_args])
    merge = terminal.shell_command(["mvlsib-eval", "merge", out, "--out", out])
    return f"""#!/bin/bash
# MVL-SIB: {plan.n_prompts} prompts in {count} shards, one GPU each (written by `mvlsib-eval plan`).
# Each array task is shard SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT;
# a task that is killed or fails resumes where it stopped when resubmitted (sbatch --array=I this file).
# Extra arguments are passed to `mvlsib-eval run`: sbatch {{this file}} --backend openai --base-url URL
#SBATCH --job-name=mvlsib-eval
#SBATCH --array=0-{count - 1}
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=8
#SBATCH --time={limit}
#SBATCH --output=mvlsib-eval-%A_%a.log
set -euo pipefail
{command} --no-progress "$@"
# When every task has finished (e.g. sbatch --dependency=afterok:JOBID --wrap '...'):
#   {merge}
"""


def run_args(opts: RunOptions, selection: dict[str, Any]) -> list[str]:
    """The ``mvlsib-eval run`` arguments of the plan's run (the selection as the user gave it)."""
    args = ["--release", opts.data, "--model", opts.model, "--out", str(opts.out)]
    for flag, value in selection.items():
        if value is not None:
            args += [flag, str(value)]
    return args


def save_script(path: str | os.PathLike[str], text: str) -> None:
    """Write the array script to ``path``: a file of that name the user placed or edited is refused
    (the folder's ledger says which scripts are ours), never replaced."""
    with output_file(path, "mvlsib-eval plan", option="--script") as fh:
        fh.write(text)
