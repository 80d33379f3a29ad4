"""The runs an analysis reads, loaded one way for every command (report, compare, items, correlate).

Each run is a finished run folder (``load_run``: its config, its predictions, duplicate keys
refused), not empty. Runs are compared key by key, so they must have been made on one release: the
release manifest's sha256 each run recorded must agree, and so must the gold answer each run
recorded under a key (what shows a release folder without a manifest); else the command refuses,
unless the user allows it, and then says so. A release folder the user names for texts or figures
(``--release``) must be that release too, or the texts shown under a key would be another instance's.
"""

from __future__ import annotations

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


def load_runs(
    runs,
    *,
    names: list[str] | None = None,
    different_releases: bool = False,
    release: str | Path | None = None,
    warn: Callable[[str], None] | None = None,
    where: str = "",
) -> list[LoadedRun]:
    """Every run loaded, checked to share one release (see the module docstring); ``release``: a
    release folder the command will read beside them, checked against the runs' release. An
    incomplete run (a killed or partial one) is said through ``warn`` (``where``: where the command
    lists its short cells), by every command alike."""
    loaded = []
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
    if not different_releases and (clash := _other_instances(loaded)) is not None:
        raise MvlsibError(
            f"the runs hold other instances under the same key ({clash}): they were made on different releases "
            "(a release without manifest.json records none); analyse runs of one release, or pass "
            "--different-releases"
        )
    if release is not None and Path(release).is_dir():
        verify_data(str(release))  # its texts are shown under the runs' keys: the files must be the release's
    if release is not None and Path(release).is_dir() and made_on:
        here = release_manifest_sha256(str(release))
        if here is not None and here not in made_on:
            raise MvlsibError(
                f"--release {release}: not the release the runs were made on (its manifest sha256 "
                f"{here[:12]}, the runs' {', '.join(sorted(s[:12] for s in made_on))}); its texts would be shown "
                "under other instances' keys: give the runs' own release folder"
            )
    return loaded


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


def differ(loaded: list[LoadedRun]) -> bool:
    """Whether the runs recorded different releases (allowed with --different-releases, and said)."""
    return len({r.release for r in loaded if r.release is not None}) > 1 or _other_instances(loaded) is not None
