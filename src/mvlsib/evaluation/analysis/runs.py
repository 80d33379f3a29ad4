"""The runs an analysis reads, loaded one way for every command (report, compare, items, correlate).

Each run is a finished run folder (``load_run``: its config, its predictions, duplicate keys
refused), not empty. Runs are compared key by key, so they must have been made on one release: the
release manifest's sha256 each run recorded must agree, and so must the gold answer each run
recorded under a key (what shows a release folder without a manifest); else the command refuses,
unless the user allows it, and then says so. A release folder the user names for texts or figures
(``--release``) must be that release too, or the texts shown under a key would be another instance's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._compat import MvlsibError
from ..run.runner import release_manifest_sha256, verify_data
from ..run.store import load_run, record_key
from .report_format import coverage


@dataclass(frozen=True)
class LoadedRun:
    path: Path
    label: str
    config: dict[str, Any]
    records: list[dict]
    metrics: dict[str, Any]

    @property
    def release(self) -> str | None:
        """The sha256 of the release manifest the run was made on (None: not recorded)."""
        return (self.config.get("fingerprint") or {}).get("release_manifest_sha256")


def labels(runs, names: list[str] | None) -> list[str]:
    """One distinct display name per run: the given names, else the folder names (numbered when alike)."""
    if names is not None and len(names) != len(runs):
        raise MvlsibError(f"--name was given {len(names)} times for {len(runs)} runs; give one per run or none")
    found = list(names) if names else [Path(r).resolve().name for r in runs]
    if len(set(found)) != len(found):
        found = [f"{i + 1}:{label}" for i, label in enumerate(found)]
    return found


class Runs(list):
    """The loaded runs (``LoadedRun`` each, in the order given) with what loading them found once."""

    mixed: bool = False  # made on different releases (allowed with --different-releases, and said)
    release: str | None = None  # the release folder read beside them, checked; None: none here


def load_runs(
    runs,
    *,
    names: list[str] | None = None,
    different_releases: bool = False,
    release: str | Path | None = None,
    own_release: bool = False,
    warn: Callable[[str], None] | None = None,
    where: str = "",
) -> Runs:
    """Every run loaded, checked to share one release (see the module docstring). ``release``: a
    release folder the command will read beside them, checked against its manifest and the runs'
    release; with ``own_release`` and no ``release``, the folder the runs were made on when it is here
    and still that release. An incomplete run (a killed or partial one) is said through ``warn``
    (``where``: where the command lists its short cells), by every command alike."""
    _refuse_one_run_twice(runs)
    loaded = Runs()
    for run, label in zip(runs, labels(runs, names)):
        config, records, metrics = load_run(run)
        if not records:
            raise MvlsibError(f"{run}: predictions.jsonl is empty")
        cov = coverage(config, records)
        if warn is not None and not cov["complete"]:
            expected = cov["n_expected"] if cov["n_expected"] is not None else "?"
            warn(
                f"{run} is incomplete: {cov['n_done']} of {expected} predictions "
                f"({len(cov['incomplete_cells'])} short cells){'; ' + where if where else ''}"
            )
        loaded.append(LoadedRun(Path(run), label, config, records, metrics))
    made_on = {r.release for r in loaded if r.release is not None}
    if len(made_on) > 1 and not different_releases:
        shown = ", ".join(f"{r.path} ({str(r.release)[:12]})" for r in loaded)
        raise MvlsibError(
            f"the runs were made on different releases (release manifest sha256: {shown}): the same keys may "
            "hold other instances or images; analyse runs of one release, or pass --different-releases"
        )
    clash = _other_instances(loaded)
    if clash is not None and not different_releases:
        raise MvlsibError(
            f"the runs hold other instances under the same key ({clash}): they were made on different releases "
            "(a release without manifest.json records none); analyse runs of one release, or pass "
            "--different-releases"
        )
    loaded.mixed = len(made_on) > 1 or clash is not None
    if release is not None:
        loaded.release = _checked_release(str(release), made_on)
    elif own_release:
        loaded.release = _own_release(loaded, made_on, warn)
    return loaded


def _checked_release(release: str, made_on: set[str]) -> str | None:
    """The release folder the user named, checked once: its files against its manifest (its texts are
    shown under the runs' keys) and its manifest against the runs' release; None: not a folder here."""
    if not Path(release).is_dir():
        return None
    verify_data(release)
    here = release_manifest_sha256(release)
    if made_on and here is not None and here not in made_on:
        raise MvlsibError(
            f"--release {release}: not the release the runs were made on (its manifest sha256 "
            f"{here[:12]}, the runs' {', '.join(sorted(s[:12] for s in made_on))}); its texts would be shown "
            "under other instances' keys: give the runs' own release folder"
        )
    return release


def _own_release(loaded: Runs, made_on: set[str], warn: Callable[[str], None] | None) -> str | None:
    """The folder the runs were made on, when one is here: checked like a named one, but a folder that
    now holds another release is left out (said), not refused — the user did not name it."""
    folder = next(
        (
            d
            for r in loaded
            if isinstance(d := (r.config.get("fingerprint") or {}).get("data"), str) and Path(d).is_dir()
        ),
        None,
    )
    if folder is None:
        return None
    verify_data(folder)
    here = release_manifest_sha256(folder)
    if made_on and here is not None and here not in made_on:
        if warn is not None:
            warn(f"{folder} now holds another release than the runs were made on; its texts are left out")
        return None
    return folder


def _refuse_one_run_twice(runs) -> None:
    """One folder given under two spellings (``run``, ``run/``, ``./x/../run``, a symlink) is one run:
    paired with itself it would compare equal, counted twice it would weigh double."""
    seen: dict[str, Any] = {}
    for run in runs:
        key = os.path.realpath(run)
        if key in seen:
            also = "" if str(seen[key]) == str(run) else f" (as {seen[key]}: the same folder)"
            raise MvlsibError(f"{run} is given more than once{also}; give each run once")
        seen[key] = run


def _other_instances(loaded: list[LoadedRun]) -> str | None:
    """Where two runs disagree on a key's gold answer (one release gives a key one label), or None: what
    shows runs of different releases when one was made on a folder without a manifest."""
    first: dict[tuple, tuple[Any, Path]] = {}
    for run in loaded:
        for rec in run.records:
            key = record_key(rec)
            seen = first.setdefault(key, (rec.get("label"), run.path))
            if seen[0] != rec.get("label"):
                return f"{'|'.join(map(str, key))}: gold {seen[0]} in {seen[1]}, {rec.get('label')} in {run.path}"
    return None
