"""``manifest.json`` of a release: sha256 and size of every file, build parameters, library versions.

``verify_release`` is what ``publish --release`` runs first: a release whose files do
not match its manifest (missing, changed, or not listed) is refused before anything
is uploaded.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import mvlsib
from mvlsib import jsonio, readers, versions
from mvlsib.atomic import atomic_open, refuse_foreign, sha256_file, staged_folder
from mvlsib.errors import MvlsibError
from mvlsib.release.inputs import ReleaseInputs
from mvlsib.release_format import mvl_sib

MANIFEST_NAME = "manifest.json"
FORMAT = "mvl-sib-release/1"
_LIBRARIES = ("pyarrow", "datasets", "pillow", "huggingface_hub", "pandas")


def library_versions() -> dict[str, str | None]:
    """Versions on this machine; they go into manifest.json only, never into data files."""
    return versions.library_versions(_LIBRARIES, missing="not installed")


def is_litter(rel: Path) -> bool:
    """Dot-files, Python caches and OS litter, by their path inside the release (the loader's rule)."""
    return mvl_sib.is_litter(rel.parts)


def release_files(release: Path) -> list[str]:
    """Relative POSIX paths of the release's files (manifest.json and litter excluded), sorted."""
    release = Path(release)
    out = []
    for path in release.rglob("*"):
        rel = path.relative_to(release)
        if is_litter(rel):
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
        fh.write(jsonio.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False))
        fh.write("\n")
    return path


def read_release_manifest(release: Path) -> dict:
    path = Path(release) / MANIFEST_NAME
    if not path.is_file():
        raise MvlsibError(
            f"{path}: no manifest.json, so {release} is not a release folder written by "
            "`mvlsib-build publish --workdir W --out DIR` (or it is incomplete); rebuild it into a new folder"
        )
    return readers.read_json("release_manifest", path)


def check_release_folder(release: Path) -> dict | None:
    """The check every command that reads a local release runs first (every ``export``; ``publish
    --release`` adds the upload's own rules in :func:`verify_release`; the evaluator runs the same two
    steps in ``run/runner.py``): manifest.json through the bounded reader, then the release's own loader
    (``mvl_sib.manifest_problems``): every listed file as listed, and no file under data/ it does not
    list. One line naming the first problem; the manifest, or None for a folder without one (made by hand)."""
    release = Path(release)
    path = release / MANIFEST_NAME
    if not path.exists() and not path.is_symlink():
        return None
    manifest = read_release_manifest(release)
    problems = mvl_sib.manifest_problems(release, manifest["files"])
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise MvlsibError(
            f"{release}: does not match its manifest.json: {problems[0]}{more}; re-download or rebuild the "
            "release (move a file you added out of it)"
        )
    return manifest


def verify_release(release: Path) -> dict:
    """Check every file against manifest.json; return the manifest or raise naming the first bad file."""
    release = Path(release)
    if not release.is_dir():
        raise MvlsibError(f"{release}: no such release folder")
    manifest = read_release_manifest(release)
    listed = manifest["files"]
    # One implementation of the per-file check: the release's own loader (the evaluator uses it too).
    problems = mvl_sib.manifest_problems(release, listed)
    unlisted = [f"{rel}: present but not listed in manifest.json" for rel in unlisted_files(release, listed)]
    extra = [line for line in unlisted if line not in problems]
    if problems:
        listed_problems = problems + extra
        raise MvlsibError(
            f"{release}: the release does not match its manifest.json, refusing to use it:",
            items=listed_problems,
            shown=len(listed_problems),
            hint="Rebuild it with `mvlsib-build publish --workdir W --out DIR` (or `mvlsib-build build`)"
            + (
                ", after moving the unlisted files out of the folder: publish never deletes files it did not write."
                if unlisted
                else "."
            ),
        )
    if extra:
        raise MvlsibError(
            f"{release}: holds files that are not part of the release, refusing to use it:",
            items=extra,
            hint="Move them out of the release folder (put evaluation runs' --out elsewhere) and retry.",
        )
    return manifest


def unlisted_files(release: Path, listed) -> list[str]:
    """Files of ``release`` (litter excluded) that its manifest does not list: the user's, not ours."""
    return [rel for rel in release_files(release) if rel not in listed]


def check_release_out(out: str | os.PathLike[str]) -> None:
    """Refuse an ``out`` holding files the old release's manifest.json does not list (the one output
    folder rule, ``atomic.refuse_foreign``: the card's own `python evaluate.py --data . --out RUN`
    writes RUN/ there). Cheap: ``build`` asks it before any work."""
    out = Path(out).resolve()
    listed: set[str] = set()
    if (out / MANIFEST_NAME).is_file():
        try:
            files = read_release_manifest(out)["files"]
        except MvlsibError:
            raise MvlsibError(
                f"{out}: its manifest.json is unreadable, so which files are the user's cannot be told; "
                "choose another --out, or move your files out and remove the folder"
            ) from None
        listed = {MANIFEST_NAME, *files}
        edited = _edited(out, files)
        if edited:  # the user's edits of our files are theirs too: the new release would drop them
            shown = ", ".join(edited[:10]) + (f" and {len(edited) - 10} more" if len(edited) > 10 else "")
            raise MvlsibError(
                f"{out}: {shown} changed since the release was written (not what its manifest.json records); "
                "refusing to replace your edits. Move them out of the folder, or choose another --out"
            )
    refuse_foreign(out, listed)


def _edited(release: Path, files: dict) -> list[str]:
    """Files the manifest lists whose bytes are no longer the ones it records (a missing one is not)."""
    out = []
    for rel, entry in sorted(files.items()):
        path = release / rel
        if not path.is_file() or path.is_symlink():
            continue
        if path.stat().st_size != entry.get("size") or sha256_file(path) != entry.get("sha256"):
            out.append(rel)
    return out


@contextlib.contextmanager
def staged_release(out: Path) -> Iterator[Path]:
    """A fresh folder beside ``out`` that replaces ``out`` only when the block succeeds; refused as
    ``check_release_out`` says."""
    check_release_out(out)
    with staged_folder(Path(out).resolve(), check=check_release_out) as stage:
        yield stage


def build_record(inputs: ReleaseInputs, *, seed: int | None, repo_hint: str) -> dict:
    """The manifest's ``build`` section: how and from what the release was made."""
    return {
        "seed": seed,
        "toolkit": "mvlsib-build",
        "toolkit_version": mvlsib.__version__,
        "source": inputs.source,
        "languages": inputs.languages,
        "num_instances": len(inputs.instances),
        "num_images": len(inputs.images),
        "instances_sha256": inputs.instances_sha256,
        "pool_manifest_sha256": inputs.pool_manifest_sha256,
        "image_pool": inputs.pool_kind,
        "demo_images": inputs.demo_images,
        # the Hub repo id the card's snippets name; `publish --repo-id` re-targets them (hub.retarget_card)
        "repo_hint": repo_hint,
    }
