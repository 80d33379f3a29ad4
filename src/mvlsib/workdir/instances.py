"""The sample stage's outputs: ``WORK/instances.jsonl`` (one instance per line, ids only) and
``WORK/sample_report.json``; :class:`Instance`, one instance in memory (what ``sample`` returns).

Standard library only: the pure sampler, which builds ``Instance`` values, runs on bare Pythons.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from mvlsib import jsonio, readers
from mvlsib.atomic import atomic_open, owned_files, refuse_theirs
from mvlsib.errors import MvlsibError
from mvlsib.workdir import INSTANCES_FILE, SAMPLE_REPORT_FILE
from mvlsib.workdir.folder import in_use


@dataclass(frozen=True)
class Instance:
    """One MVL-SIB instance. Field order is the order of keys in ``instances.jsonl``."""

    instance_id: str
    index_id: int
    topic: str
    ref_sentence_ids: list[int]
    ref_image_ids: list[str]
    neg_topics: list[str]
    sentence_option_ids: list[int]
    sentence_label: int
    image_option_ids: list[str]
    topic_options: list[str]
    image_label: int

    def to_json(self) -> str:
        return jsonio.dumps(self.as_dict(), ensure_ascii=False)

    def as_dict(self) -> dict:
        """The record as ``instances.jsonl`` holds it (what ``json.loads`` of its line gives).

        Fields are flat values and lists of them: no deep copy (asdict) is needed; the lists are
        copied so that the record does not share them with the instance."""
        return {f: (list(v) if type(v) is list else v) for f in _INSTANCE_FIELDS for v in (getattr(self, f),)}


_INSTANCE_FIELDS = tuple(f.name for f in fields(Instance))


def instance_records(instances: Sequence[Instance | dict]) -> list[dict]:
    """The records of ``instances`` as ``instances.jsonl`` holds them: each :class:`Instance` as its
    dict, anything else (a record read from the file, however malformed) as it is."""
    return [inst.as_dict() if isinstance(inst, Instance) else inst for inst in instances]


def encode_instances(instances: Sequence[Instance | dict]) -> bytes:
    """The bytes of ``instances.jsonl``: one JSON object per line, keys in the records' order."""
    return "".join(jsonio.dumps(rec, ensure_ascii=False) + "\n" for rec in instance_records(instances)).encode("utf-8")


def instances_sha256(instances: Sequence[Instance | dict]) -> str:
    """The sha256 of ``instances.jsonl`` as :func:`save_instances` writes it (the card and manifest record it)."""
    return hashlib.sha256(encode_instances(instances)).hexdigest()


def save_instances(workdir: str | os.PathLike[str], instances: Sequence[Instance | dict]) -> str:
    """Write ``instances.jsonl`` atomically; return the sha256 of the bytes written."""
    data = encode_instances(instances)
    with in_use(workdir):
        refuse_theirs(workdir, [SAMPLE_REPORT_FILE], option="--workdir")  # written next: checked before
        with owned_files(workdir, [INSTANCES_FILE], "mvlsib-build sample", option="--workdir"):
            with atomic_open(Path(workdir) / INSTANCES_FILE, "wb") as fh:
                fh.write(data)
    return hashlib.sha256(data).hexdigest()


def load_instances(workdir: str | os.PathLike[str]) -> list[dict]:
    """The records of ``WORK/instances.jsonl`` (``workdir`` may also be the file itself)."""
    path = Path(workdir) / INSTANCES_FILE
    if path.is_dir() or not path.exists():
        path = Path(workdir) if Path(workdir).is_file() else path
    if not path.is_file():
        raise MvlsibError(f"{path}: no instances file; run `mvlsib-build sample --workdir {Path(workdir)}` first")
    # Field-level faults are the validate stage's to report, all of them; a line that is not even a
    # record is not something it can report on. Each line bounded as it is read.
    return [value for _lineno, _raw, value in readers.json_lines("instance_line", path)]


def save_sample_report(workdir: str | os.PathLike[str], report: dict) -> None:
    """Write ``sample_report.json``, naming the instances file it describes."""
    report = {**report, "output": str(Path(workdir) / INSTANCES_FILE)}
    with in_use(workdir), owned_files(workdir, [SAMPLE_REPORT_FILE], "mvlsib-build sample", option="--workdir"):
        with atomic_open(Path(workdir) / SAMPLE_REPORT_FILE) as fh:
            fh.write(jsonio.dumps(report, ensure_ascii=False, indent=2, sort_keys=True) + "\n")


def load_sample_report(workdir: str | os.PathLike[str]) -> dict:
    """``sample_report.json`` ({} when there is none)."""
    path = Path(workdir) / SAMPLE_REPORT_FILE
    if not path.is_file():
        return {}
    return readers.read_json("sample_report", path)  # its seed within --seed's bound


def recorded_pool(workdir: str | os.PathLike[str]) -> tuple[str, str] | None:
    """The pool folder and manifest sha256 the sample stage recorded, if any."""
    report = load_sample_report(workdir)
    where, sha256 = report.get("pool"), report.get("pool_manifest_sha256")
    return (where, sha256) if isinstance(where, str) and isinstance(sha256, str) and where and sha256 else None


def recorded_seed(workdir: str | os.PathLike[str]) -> int | None:
    """The seed the sample stage recorded in ``sample_report.json``, if any."""
    seed = load_sample_report(workdir).get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None
