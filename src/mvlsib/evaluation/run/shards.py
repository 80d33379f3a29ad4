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

import os
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .. import _compat
from .._compat import TASK_BY_NAME, MvlsibError, atomic_open
from .run_files import MAX_SHARDS, read_config, release_manifest_sha256
from .store import claim_run_folder, dump_line, finalize, iter_sorted, read_predictions, record_key
from .subset import select_rows

_SHARD_RE = re.compile(r"^\s*([0-9]{1,30})\s*/\s*([0-9]{1,30})\s*\Z")
_FILE_RE = re.compile(r"^predictions\.shard-(\d+)-of-(\d+)\.jsonl\Z")


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
    if count > MAX_SHARDS:
        raise MvlsibError(f"{source}: at most {MAX_SHARDS:,} shards, got {count:,}; a run has fewer prompts than that")
    return None if count == 1 else Shard(index, count)


def _integers(env: Mapping[str, str], names: tuple[str, ...]) -> list[int | None]:
    return [_compat.params.env_number(name, env) for name in names]


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
    rank, world = _integers(env, ("RANK", "WORLD_SIZE"))
    if rank is None or world is None:
        return None
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
    configs = _read_shard_configs(found)
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
            if seen.get(key) == shard:
                raise MvlsibError(f"{found[shard]}: {'|'.join(map(str, key))} is in it twice; rerun that shard")
            if key in seen:
                raise MvlsibError(
                    f"{'|'.join(map(str, key))} is in both {found[seen[key]]} and {found[shard]}: the shards "
                    "overlap; they were not made with the same --shard N, or a file was edited: rerun those shards"
                )
            seen[key] = shard
            records.append(rec)
        _check_keys_in_plan(found[shard], recs, configs[shard]["fingerprint"])
        expected = configs[shard].get("n_expected")
        if expected is not None and len(recs) != expected:
            incomplete.append(f"shard {shard} is incomplete: {len(recs)} of {expected} predictions in {found[shard]}")
    if (missing or incomplete) and not allow_partial:
        raise MvlsibError(_unfinished(missing, count, incomplete))
    _check_shard_positions(found, seen, {record_key(r): r["label"] for r in records}, reference)
    if not missing and not incomplete:  # an incomplete shard's cells may legitimately differ
        _check_cells_agree(records, seen, found)
    # Everything is checked and computed before the first file is written: a refused merge leaves --out as it was.
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
    out = Path(out)
    claim_run_folder(out, reference, out / "predictions.jsonl", out / "config.json")
    out.mkdir(parents=True, exist_ok=True)
    with atomic_open(out / "predictions.jsonl") as fh:
        for rec in iter_sorted(records):
            fh.write(dump_line(rec))
    return finalize(out, config, records)


def _read_shard_configs(found: dict[Shard, Path]) -> dict[Shard, dict]:
    """Each shard's checked config, which must say it is the shard its file name says."""
    configs: dict[Shard, dict] = {}
    for shard, pred in found.items():
        cfg_path = pred.with_name(f"config{shard.suffix}.json")
        if not cfg_path.is_file():
            raise MvlsibError(f"{cfg_path}: missing shard config; rerun that shard (it resumes)")
        configs[shard] = read_config(cfg_path)
        if configs[shard].get("shard") not in (None, str(shard)):
            raise MvlsibError(
                f"{cfg_path}, field shard: says {configs[shard]['shard']!r}, but the file is shard {shard}; "
                "a shard file was renamed or copied: rerun that shard"
            )
    return configs


def _check_keys_in_plan(path: Path, records: list[dict], fp: dict) -> None:
    """Each record of a shard must be a key its own run names: a language and a (task, k) of its fingerprint."""
    languages, tasks = fp.get("languages"), fp.get("tasks")
    pairs = {(t, k) for t, k in tasks} if tasks is not None else None
    for rec in records:
        if languages is not None and rec["language"] not in languages:
            raise MvlsibError(
                f"{path}: holds {'|'.join(map(str, record_key(rec)))}, but language {rec['language']} is not one "
                "of this run's languages; the file was edited or mixed with another run's: rerun that shard"
            )
        if pairs is not None and (rec["task"], rec["k"]) not in pairs:
            raise MvlsibError(
                f"{path}: holds {'|'.join(map(str, record_key(rec)))}, but {rec['task']} k={rec['k']} is not one "
                "of this run's tasks; the file was edited or mixed with another run's: rerun that shard"
            )


def plan_keys(fp: dict) -> Iterator[tuple[int, tuple, int]]:
    """(position, key, gold label) of every item of the run ``fp`` describes, in the canonical order the
    runner deals shards by (language, task, k, row); only the release's rows are read."""
    loader = _compat.LOADER
    position = 0
    for language in fp["languages"]:
        try:
            rows = loader.load_rows(language, fp["data"], fp.get("data_revision"))
        except (OSError, ValueError) as exc:
            raise MvlsibError(f"{fp['data']}: the release the shards were made on cannot be read ({exc})") from None
        rows = select_rows(rows, fp.get("limit"), fp.get("limit_mode", "first" if fp.get("limit") else "stratified"))
        for task, k in fp["tasks"]:
            for row in rows:
                yield position, (task, k, language, row["instance_id"]), row[TASK_BY_NAME[task].label]
                position += 1


def _check_shard_positions(
    found: dict[Shard, Path], seen: dict[tuple, Shard], labels: dict[tuple, int], fp: dict
) -> None:
    """With the release the run was made on at hand (a local folder), every key must be in the plan and in
    the shard the plan deals it to, with the gold label the release gives it (as a resumed run checks):
    a shard holding any other key in place of one of its own, or an edited answer key, is refused."""
    if not all(name in fp for name in ("data", "languages", "tasks")) or not Path(str(fp["data"])).is_dir():
        return
    recorded = fp.get("release_manifest_sha256")
    if recorded is not None and release_manifest_sha256(str(fp["data"])) != recorded:
        return  # the folder now holds another release: the shards cannot be judged by it
    count = next(iter(found)).count
    unplanned = dict(seen)
    for position, key, gold in plan_keys(fp):
        shard = unplanned.pop(key, None)
        if shard is not None and shard.index != position % count:
            raise MvlsibError(
                f"{found[shard]}: holds {'|'.join(map(str, key))}, which the run deals to shard "
                f"{position % count}/{count}; the file was edited or mixed with another shard's: rerun that shard"
            )
        if shard is not None and labels[key] != gold:
            raise MvlsibError(
                f"{found[shard]}: {'|'.join(map(str, key))} records gold label {labels[key]}, the release gives "
                f"{gold}; the file was edited or made on another release: rerun that shard"
            )
    if unplanned:
        key, shard = min(unplanned.items(), key=lambda kv: (kv[1].index, str(kv[0])))
        raise MvlsibError(
            f"{found[shard]}: holds {'|'.join(map(str, key))}, which is not an item of this run "
            f"({len(unplanned)} such keys); the file was edited or mixed with another run's: rerun that shard"
        )


def _check_cells_agree(records: list[dict], seen: dict[tuple, Shard], found: dict[Shard, Path]) -> None:
    """Every (language, task, k) cell of a whole run holds the same instances (a release has the same
    instances in every language): a key put in place of another shows as an instance that only some
    cells hold. This needs no release, so it also holds for runs on Hub data or a release moved away."""
    cells: dict[tuple, set[str]] = {}
    for rec in records:
        cells.setdefault((rec["task"], rec["k"], rec["language"]), set()).add(rec["instance_id"])
    held = Counter(iid for ids in cells.values() for iid in ids)
    if all(n == len(cells) for n in held.values()):
        return
    rarest = min(held, key=lambda iid: (held[iid], iid))
    cell = min(c for c, ids in cells.items() if rarest in ids)
    key = (*cell, rarest)
    raise MvlsibError(
        f"{found[seen[key]]}: holds {'|'.join(map(str, key))}, but instance {rarest} is in only {held[rarest]} of "
        f"the run's {len(cells)} (task, k, language) cells, which all hold the same instances: the file was "
        "edited or mixed with another run's; rerun that shard"
    )


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
