"""``manifest.json`` of a release: sha256 and size of every file, build parameters, library versions.

``verify_release`` is what ``publish --release`` runs first: a release whose files do
not match its manifest (missing, changed, or not listed) is refused before anything
is uploaded.
"""

from __future__ import annotations

import json
from pathlib import Path

from mvlsib.atomic import atomic_open, sha256_file
from mvlsib import versions
from mvlsib.errors import MvlsibError

MANIFEST_NAME = "manifest.json"
FORMAT = "mvl-sib-release/1"
_LIBRARIES = ("pyarrow", "datasets", "pillow", "huggingface_hub", "pandas")


def library_versions() -> dict[str, str]:
    """Versions on this machine; they go into manifest.json only, never into data files."""
    return versions.library_versions(_LIBRARIES, missing="not installed")


def release_files(release: Path) -> list[str]:
    """Relative POSIX paths of the release's files (manifest.json and dot-files excluded), sorted."""
    release = Path(release)
    out = []
    for path in release.rglob("*"):
        rel = path.relative_to(release)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_symlink():
            raise MvlsibError(f"{path}: a release must not contain symbolic links; replace it by the file itself")
        if path.is_file() and rel.as_posix() != MANIFEST_NAME:
            out.append(rel.as_posix())
    return sorted(out)


def file_entries(release: Path) -> dict[str, dict]:
    release = Path(release)
    return {
        rel: {"sha256": sha256_file(release / rel), "size": (release / rel).stat().st_size}
        for rel in release_files(release)
    }


def write_release_manifest(release: Path, build: dict, versions: dict[str, str] | None = None) -> Path:
    manifest = {
        "format": FORMAT,
        "build": build,
        "files": file_entries(release),
        "library_versions": versions if versions is not None else library_versions(),
    }
    return save_release_manifest(release, manifest)


def save_release_manifest(release: Path, manifest: dict) -> Path:
    """Write ``manifest`` as the release's manifest.json (the one serialisation of it)."""
    path = Path(release) / MANIFEST_NAME
    with atomic_open(path) as fh:
        json.dump(manifest, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    return path


def read_release_manifest(release: Path) -> dict:
    path = Path(release) / MANIFEST_NAME
    if not path.is_file():
        raise MvlsibError(
            f"{path}: no manifest.json, so {release} is not a release folder written by "
            "`mvlsib-build publish --workdir W --out DIR` (or it is incomplete); rebuild it"
        )
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MvlsibError(f"{path}: not valid JSON ({exc}); rebuild the release") from exc
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise MvlsibError(f"{path}: has no 'files' table; rebuild the release")
    return manifest


def verify_release(release: Path) -> dict:
    """Check every file against manifest.json; return the manifest or raise naming the first bad file."""
    release = Path(release)
    if not release.is_dir():
        raise MvlsibError(f"{release}: no such release folder")
    manifest = read_release_manifest(release)
    listed = manifest["files"]
    problems = []
    for rel in sorted(listed):
        entry = listed[rel]
        path = release / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            problems.append(f"{rel}: path escapes the release folder")
        elif not path.is_file():
            problems.append(f"{rel}: listed in manifest.json but missing")
        elif path.stat().st_size != entry.get("size"):
            problems.append(f"{rel}: size {path.stat().st_size} bytes, manifest.json says {entry.get('size')} (changed or corrupted)")
        elif sha256_file(path) != entry.get("sha256"):
            problems.append(f"{rel}: sha256 differs from manifest.json (changed or corrupted)")
    for rel in release_files(release):
        if rel not in listed:
            problems.append(f"{rel}: present but not listed in manifest.json")
    if problems:
        raise MvlsibError(
            f"{release}: the release does not match its manifest.json, refusing to use it:\n  - "
            + "\n  - ".join(problems)
            + "\nRebuild it with `mvlsib-build publish --workdir W --out DIR` (or `mvlsib-build build`)."
        )
    return manifest
