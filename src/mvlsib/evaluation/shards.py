"""Sharding a run across processes/GPUs, and merging the shards back.

Work items are taken in their canonical order and dealt round-robin: item ``i`` goes
to shard ``i % N``, so every shard gets a similar mix of tasks, k and languages. The
shard comes from ``--shard I/N`` or from the environment: a SLURM array task
(``SLURM_ARRAY_TASK_ID``/``SLURM_ARRAY_TASK_COUNT``) or, under ``torchrun``/``accelerate launch``, the
``RANK``/``WORLD_SIZE`` variables. Each shard writes
``predictions.shard-I-of-N.jsonl`` and ``config.shard-I-of-N.json``; ``merge`` checks
that the shards belong to the same run (same fingerprint: data, model, prompts,
tasks, ...), that none is missing or incomplete and that no key is in two shards.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ._compat import MvlsibError, atomic_open
from .store import dump_line, finalize, iter_sorted, read_predictions, record_key

_SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_FILE_RE = re.compile(r"^predictions\.shard-(\d+)-of-(\d+)\.jsonl$")


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    @property
    def suffix(self) -> str:
        return f".shard-{self.index}-of-{self.count}"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def deals(self, position: int) -> bool:
        """Whether the item at ``position`` of the run's canonical order is this shard's (round robin)."""
        return position % self.count == self.index


def parse_shard(text: str | None, env: Mapping[str, str] | None = None) -> Shard | None:
    """``--shard I/N`` (0-based I); else the shard the environment names: a SLURM array task
    (``SLURM_ARRAY_TASK_ID`` of ``SLURM_ARRAY_TASK_COUNT``) or a torchrun/accelerate rank
    (``RANK`` of ``WORLD_SIZE``), refused when both are set and disagree; else no sharding."""
    env = os.environ if env is None else env
    if text:
        m = _SHARD_RE.match(text)
        if not m:
            raise MvlsibError(f"--shard must look like I/N (e.g. 0/4), got {text!r}")
        return _checked(int(m.group(1)), int(m.group(2)), "--shard")
    found = [s for s in (_slurm_shard(env), _rank_shard(env)) if s is not None]
    if len(found) == 2 and found[0][:2] != found[1][:2]:
        (i, n, a), (j, c, b) = found
        raise MvlsibError(
            f"the environment names two different shards: {i}/{n} ({a}) and {j}/{c} ({b}); say which with --shard I/N"
        )
    return _checked(*found[0]) if found else None


def _checked(index: int, count: int, source: str) -> Shard | None:
    if count < 1 or not 0 <= index < count:
        raise MvlsibError(f"{source}: shard index must be in 0..N-1 and N >= 1, got {index}/{count}")
    return None if count == 1 else Shard(index, count)


def _integers(env: Mapping[str, str], names: tuple[str, ...]) -> list[int | None]:
    values: list[int | None] = []
    for name in names:
        raw = env.get(name)
        try:
            values.append(int(raw) if raw not in (None, "") else None)
        except ValueError:
            raise MvlsibError(f"{name}={raw!r} in the environment is not an integer") from None
    return values


def _slurm_shard(env: Mapping[str, str]) -> tuple[int, int, str] | None:
    """A SLURM array task as (index, count, source): ``--array=3-6`` runs tasks 3..6, shards 0..3;
    a step (``--array=0-14:2``) is divided out."""
    task, count, low, step = _integers(
        env, ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP")
    )
    if task is None:
        return None
    if count is None:
        raise MvlsibError(
            "SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT (SLURM sets both for an array job); "
            "give the shard with --shard I/N"
        )
    offset, stride = task - (low or 0), step or 1
    if offset % stride:
        raise MvlsibError(f"SLURM_ARRAY_TASK_ID={task} is not on the array's step {stride} from {low}")
    source = "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT"
    return offset // stride, count, source


def _rank_shard(env: Mapping[str, str]) -> tuple[int, int, str] | None:
    if not (env.get("WORLD_SIZE") and env.get("RANK")):
        return None
    rank, world = _integers(env, ("RANK", "WORLD_SIZE"))
    assert rank is not None and world is not None
    return rank, world, "RANK/WORLD_SIZE"


def select(items: list, shard: Shard | None) -> list:
    if shard is None:
        return list(items)
    return [item for i, item in enumerate(items) if shard.deals(i)]


def find_shards(sources: list[Path]) -> dict[Shard, Path]:
    """Shard prediction files in the given run folders (or files)."""
    found: dict[Shard, Path] = {}
    for src in sources:
        src = Path(src)
        files = [src] if src.is_file() else sorted(src.glob("predictions.shard-*-of-*.jsonl"))
        for f in files:
            m = _FILE_RE.match(f.name)
            if not m:
                raise MvlsibError(f"{f}: not a shard predictions file (predictions.shard-I-of-N.jsonl)")
            shard = Shard(int(m.group(1)), int(m.group(2)))
            if shard in found and found[shard].resolve() != f.resolve():
                raise MvlsibError(f"shard {shard} found twice: {found[shard]} and {f}")
            found[shard] = f
    if not found:
        raise MvlsibError(f"no shard files (predictions.shard-I-of-N.jsonl) in {', '.join(map(str, sources))}")
    return found


def merge_shards(sources: list[Path], out: Path, *, allow_partial: bool = False) -> dict:
    """Merge shard files into ``out`` (predictions.jsonl, config.json, metrics.json)."""
    found = find_shards(sources)
    counts = {s.count for s in found}
    if len(counts) != 1:
        raise MvlsibError(f"shards of different splits cannot be merged: {sorted(map(str, found))}")
    count = counts.pop()
    configs: dict[Shard, dict] = {}
    for shard, pred in found.items():
        cfg_path = pred.with_name(f"config{shard.suffix}.json")
        try:
            configs[shard] = json.loads(cfg_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise MvlsibError(f"{cfg_path}: missing or unreadable shard config ({exc}); rerun that shard") from None
    reference_shard = min(configs, key=lambda s: s.index)
    reference = configs[reference_shard]["fingerprint"]
    for shard, cfg in configs.items():
        if cfg["fingerprint"] != reference:
            diff = sorted(
                k for k in set(reference) | set(cfg["fingerprint"]) if reference.get(k) != cfg["fingerprint"].get(k)
            )
            raise MvlsibError(
                f"shard {shard} ({found[shard]}) is from a different run than shard {reference_shard}: "
                f"{', '.join(diff)} differ; merge only shards of one command"
            )
    missing = sorted(set(range(count)) - {s.index for s in found})
    seen: dict[tuple, Shard] = {}
    records = []
    incomplete: list[str] = []
    for shard in sorted(found, key=lambda s: s.index):
        recs = read_predictions(found[shard])
        for rec in recs:
            key = record_key(rec)
            if key in seen:
                raise MvlsibError(
                    f"{key} is in both shard {seen[key]} and shard {shard}: the shards overlap; "
                    "they were not made with the same --shard N"
                )
            seen[key] = shard
            records.append(rec)
        expected = configs[shard].get("n_expected")
        if expected is not None and len(recs) != expected:
            incomplete.append(f"shard {shard} is incomplete: {len(recs)} of {expected} predictions in {found[shard]}")
    if (missing or incomplete) and not allow_partial:
        raise MvlsibError(_unfinished(missing, count, incomplete))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / "predictions.jsonl") as fh:
        for rec in iter_sorted(records):
            fh.write(dump_line(rec))
    config = dict(configs[reference_shard])
    config.pop("shard", None)
    # The whole run's size comes from the shards themselves (each knows it), never from the shards
    # that happen to be present: a merge with a shard missing must not look complete.
    totals = {c["n_expected_run"] for c in configs.values() if "n_expected_run" in c}
    if len(totals) > 1:
        raise MvlsibError(f"the shards disagree on the size of the run ({sorted(totals)} predictions)")
    config["n_expected"] = totals.pop() if totals else sum(c.get("n_expected", 0) for c in configs.values())
    config["n_expected_run"] = config["n_expected"]
    config["complete"] = not missing and len(records) == config["n_expected"]
    config["missing_shards"] = [f"{i}/{count}" for i in missing]
    config["merged_from"] = [
        {"shard": str(s), "file": found[s].name, "n": configs[s].get("n_expected")}
        for s in sorted(found, key=lambda s: s.index)
    ]
    return finalize(out, config, records)


def _unfinished(missing: list[int], count: int, incomplete: list[str]) -> str:
    """One message naming every missing and every incomplete shard."""
    parts = []
    if missing:
        parts.append(f"shards {', '.join(f'{i}/{count}' for i in missing)} are missing")
    if incomplete:
        parts.append("; ".join(incomplete))
    return (
        "; ".join(parts) + "; run them (rerunning a shard's command resumes it, e.g. "
        "sbatch --array=I for the SLURM array task I) or pass --allow-partial"
    )
