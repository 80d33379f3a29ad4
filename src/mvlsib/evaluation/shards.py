"""Sharding a run across processes/GPUs, and merging the shards back.

Work items are taken in their canonical order and dealt round-robin: item ``i`` goes
to shard ``i % N``, so every shard gets a similar mix of tasks, k and languages. The
shard comes from ``--shard I/N`` or, under ``torchrun``/``accelerate launch``, from the
``RANK``/``WORLD_SIZE`` environment variables. Each shard writes
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
    """``--shard I/N`` (0-based I), else RANK/WORLD_SIZE from the environment, else no sharding."""
    env = os.environ if env is None else env
    if text:
        m = _SHARD_RE.match(text)
        if not m:
            raise MvlsibError(f"--shard must look like I/N (e.g. 0/4), got {text!r}")
        index, count = int(m.group(1)), int(m.group(2))
        source = "--shard"
    elif env.get("WORLD_SIZE") and env.get("RANK"):
        try:
            index, count = int(env["RANK"]), int(env["WORLD_SIZE"])
        except ValueError:
            raise MvlsibError(
                f"RANK={env['RANK']!r} / WORLD_SIZE={env['WORLD_SIZE']!r} in the environment are not integers"
            ) from None
        source = "RANK/WORLD_SIZE"
    else:
        return None
    if count < 1 or not 0 <= index < count:
        raise MvlsibError(f"{source}: shard index must be in 0..N-1 and N >= 1, got {index}/{count}")
    return None if count == 1 else Shard(index, count)


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
    if missing and not allow_partial:
        raise MvlsibError(
            f"shards {', '.join(f'{i}/{count}' for i in missing)} are missing; run them or pass --allow-partial"
        )
    seen: dict[tuple, Shard] = {}
    records = []
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
        if expected is not None and len(recs) != expected and not allow_partial:
            raise MvlsibError(
                f"shard {shard} is incomplete: {len(recs)} of {expected} predictions in {found[shard]}; "
                "rerun the same command for that shard (it resumes) or pass --allow-partial"
            )
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
