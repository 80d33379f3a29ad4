"""One release-folder check for every command that reads a local release, generated: each command
(every export format, ``publish --release``, the evaluator's ``run`` and ``batch prepare``) meets each
fault of a release folder and refuses it the same way, naming it, exit 2, with nothing written.

The faults: a language table (or any file) under ``data/`` that manifest.json does not list (it would be
read as part of the release), placed as a copy or as a symbolic link (a linked folder is named, never
walked), a listed file replaced by a link, and a manifest.json over the reader's bound (never read whole).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.cli_contract import refused
from support.planted import planted_records, write_run

from mvlsib import readers
from mvlsib.cli import build_cli, eval_cli
from mvlsib.release_format import mvl_sib

EXPORTS = ["lmms-eval", "vlmevalkit", "mteb", "inspect"]
COMMANDS = {
    **{f"export-{fmt}": (build_cli, ["export", fmt, "--release", "{rel}", "--out", "{out}", "--no-progress"]) for fmt in EXPORTS},
    "publish-release": (build_cli, ["publish", "--release", "{rel}", "--repo-id", "org/name", "--dry-run", "--allow-demo-pool"]),
    "eval-run": (eval_cli, ["run", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0",
                            "--model", "m", "--data", "{rel}", "--out", "{out}", "--no-progress"]),
    "batch-prepare": (eval_cli, ["batch", "prepare", "--model", "m", "--data", "{rel}", "--out", "{out}", "--no-progress"]),
    "eval-plan": (eval_cli, ["plan", "--release", "{rel}", "--model", "m", "--gpus", "1", "--out", "{out}"]),
    "eval-report": (eval_cli, ["report", "{run}", "--release", "{rel}", "--out", "{out}"]),
    "eval-items": (eval_cli, ["items", "{run}", "--release", "{rel}", "--out", "{out}"]),
}  # fmt: skip
# Commands with a --release that is not an MVL-SIB release folder, and why.
NOT_A_RELEASE_FOLDER = {
    ("images", "import-release"): "an upstream release's image folder, read by its own layout",
    ("hub-results",): "a Hub dataset repo id, named in the results; no folder is read",
}


def _release_commands():
    """(cli name, command path) of every command with a --release, walked from both command trees."""
    import click

    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from walk(sub, (*path, name))
        elif any(p.name == "release" for p in cmd.params):
            yield path

    return [*walk(build_cli, ()), *walk(eval_cli, ())]


def test_every_command_reading_a_release_is_generated_here():
    covered = {tuple(args[: 2 if args[0] in ("batch",) else 1]) for _, args in COMMANDS.values()}
    missing = [p for p in _release_commands() if p not in covered and p not in NOT_A_RELEASE_FOLDER]
    assert not missing, (
        f"add each to COMMANDS (or, when its --release is not a folder, NOT_A_RELEASE_FOLDER): {missing}"
    )


def _unlisted_table(release: Path) -> str:
    (release / "data" / "deu_Latn").mkdir()
    shutil.copyfile(release / "data" / "eng_Latn" / "test.parquet", release / "data" / "deu_Latn" / "test.parquet")
    return "data/deu_Latn/test.parquet"


def _unlisted_file(release: Path) -> str:
    (release / "data" / "notes.txt").write_text("mine\n", encoding="utf-8")
    return "data/notes.txt"


def _oversized_manifest(release: Path) -> str:
    manifest = release / mvl_sib.MANIFEST_NAME
    with open(manifest, "r+b") as fh:  # sparse: the bound plus one byte, no disk used
        fh.truncate(mvl_sib.MANIFEST_MAX_BYTES + 1)
    return "manifest.json"


def _linked_table_folder(release: Path) -> str:
    (release / "data" / "zzz_Latn").symlink_to("eng_Latn")  # a table tree placed by a link, not a copy
    return "data/zzz_Latn"


def _linked_unlisted_file(release: Path) -> str:
    (release.parent / "notes.txt").write_text("mine\n", encoding="utf-8")
    (release / "data" / "notes.txt").symlink_to(release.parent / "notes.txt")
    return "data/notes.txt"


def _linked_listed_table(release: Path) -> str:
    """A listed table replaced by a link to the very same bytes elsewhere: the content matches, the
    folder no longer holds it."""
    table = release / "data" / "eng_Latn" / "test.parquet"
    shutil.copyfile(table, release.parent / "elsewhere.parquet")
    table.unlink()
    table.symlink_to(release.parent / "elsewhere.parquet")
    return "data/eng_Latn/test.parquet"


FAULTS = {
    "unlisted-table": _unlisted_table,
    "unlisted-file": _unlisted_file,
    "oversized-manifest": _oversized_manifest,
    "linked-table-folder": _linked_table_folder,
    "linked-unlisted-file": _linked_unlisted_file,
    "linked-listed-table": _linked_listed_table,
}


@pytest.fixture()
def release_copy(release_dir, tmp_path) -> Path:
    release = tmp_path / "rel"
    shutil.copytree(release_dir, release)
    return release


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_release_reader_refuses_the_fault(release_copy: Path, tmp_path: Path, command: str, fault: str):
    named = FAULTS[fault](release_copy)
    cli, args = COMMANDS[command]
    out = tmp_path / "out"
    run = write_run(tmp_path / "run", planted_records(0.5, languages=("eng_Latn",), n=20))
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(cli, [a.format(rel=release_copy, out=out, run=run) for a in args])
    # publish and run list every problem under their one Error: line, as they list a changed file
    line = refused(result, one_line=command.startswith("export"))
    assert named in line or named in result.output, result.output
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_loader_and_the_reader_hold_one_bound():
    assert readers.KINDS["release_manifest"].max_bytes == mvl_sib.MANIFEST_MAX_BYTES


def test_the_loader_never_reads_an_oversized_manifest_whole(tmp_path: Path):
    """A sparse manifest.json of 4 GiB: refused after reading the bound, in well under a second."""
    manifest = tmp_path / mvl_sib.MANIFEST_NAME
    with open(manifest, "wb") as fh:
        fh.truncate(4 << 30)
    start = time.monotonic()
    assert mvl_sib.manifest_problems(tmp_path) == [
        f"manifest.json: larger than {mvl_sib.MANIFEST_MAX_BYTES >> 20} MiB, not a release's manifest"
    ]
    assert time.monotonic() - start < 5


def test_the_loader_refuses_a_fifo_manifest_without_waiting(tmp_path: Path):
    os.mkfifo(tmp_path / mvl_sib.MANIFEST_NAME)
    assert mvl_sib.manifest_problems(tmp_path) == ["manifest.json: not a regular file"]


def test_litter_under_data_is_not_a_release_file(release_copy: Path):
    (release_copy / "data" / ".DS_Store").write_bytes(b"x")
    (release_copy / "data" / "__pycache__").mkdir()
    (release_copy / "data" / "__pycache__" / "x.pyc").write_bytes(b"x")
    assert mvl_sib.manifest_problems(release_copy) == []


@pytest.mark.parametrize("target", ["..", ".", "loop", "/"])
def test_a_linked_folder_is_named_never_walked(release_copy: Path, target: str):
    """A link to the release itself, to data/, to itself or to the root: named at once, never followed."""
    (release_copy / "data" / "loop").symlink_to(target)
    start = time.monotonic()
    assert mvl_sib.manifest_problems(release_copy) == ["data/loop: present but not listed in manifest.json"]
    assert time.monotonic() - start < 5
