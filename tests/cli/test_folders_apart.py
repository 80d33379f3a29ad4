"""An output folder never lies inside, holds or is a folder the command reads, generated over commands.

Written inside its input, an output becomes part of what it was made from (an export under a release's
``data/`` is read as one of its tables by every later reader); made anew around it, it would replace it.
One rule, ``options.apart`` (``atomic.refuse_nested``), is declared on every command with an output
folder, covering each of its path inputs: the walk below finds any command that does not, and each
command listed is run with its output placed inside, at and around its input, spelt several ways: exit
2 before any work, one line naming both options, the input byte-identical.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support.cli_contract import changed, refused, scene_state
from support.cli_tree import commands
from support.planted import planted_records, write_run

from mvlsib import params
from mvlsib.cli import build_cli, eval_cli

# Parameters that name a path without being a click.Path: a release or SIB-200 folder, or a Hub id.
TEXT_PATHS = ("release", "sib")
# (command, output parameter) -> why that output may hold what the command reads.
NOT_APART = {
    ("mvlsib-eval hub-results", "out"): "writes named files into OUT/.eval_results/ (a model repo checkout, "
    "which may hold the runs it reports): it owns no folder, and its own ledger refuses what it did not write",
    ("mvlsib-eval merge", "out"): "merges a run folder's shard files into that folder (`merge RUN --out RUN`, as "
    "plan's array script runs it); the run folders' ledger keeps what is not a run's",
}


def _output_folder(cmd: click.Command) -> str | None:
    declared = getattr(cmd.callback, "kept_apart", None)
    if declared:
        return declared[0]
    out = next((p for p in cmd.params if p.name == "out"), None)
    return out.name if out is not None and isinstance(out.type, click.Path) and not out.type.file_okay else None


def _inputs(cmd: click.Command, out: str) -> set[str]:
    return {
        p.name
        for p in cmd.params
        if p.name != out
        and p.name is not None
        and ((isinstance(p.type, click.Path) and not isinstance(p.type, params.OutputFile)) or p.name in TEXT_PATHS)
    }


def test_every_output_folder_is_kept_apart_from_every_input():
    missing = []
    for where, cmd in commands():
        out = _output_folder(cmd)
        if out is None or (where, out) in NOT_APART:
            continue
        declared = getattr(cmd.callback, "kept_apart", None)
        if declared is None or declared[0] != out or set(declared[1]) != _inputs(cmd, out):
            missing.append((where, out, sorted(_inputs(cmd, out)), declared))
    assert not missing, f"declare @apart(OUT, *INPUTS) on each (or a reason in NOT_APART): {missing}"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    return write_run(tmp_path_factory.mktemp("apart") / "run", planted_records(0.5, languages=("eng_Latn",), n=8))


# command -> (cli, args with {rel} the folder read and {out}, the input's option as the message names it)
RELEASE_READERS = {
    **{
        f"export {fmt}": (build_cli, ["export", fmt, "--release", "{rel}", "--out", "{out}", "--no-progress"])
        for fmt in ("lmms-eval", "vlmevalkit", "mteb", "inspect")
    },
    "batch prepare": (eval_cli, ["batch", "prepare", "--model", "m", "--release", "{rel}", "--out", "{out}"]),
    "report": (eval_cli, ["report", "{run}", "--release", "{rel}", "--out", "{out}"]),
    "items": (eval_cli, ["items", "{run}", "--release", "{rel}", "--out", "{out}"]),
}
RUN_READERS = {
    "report": (eval_cli, ["report", "{rel}", "--out", "{out}"]),
    "items": (eval_cli, ["items", "{rel}", "--out", "{out}"]),
}
# where the output goes, relative to the folder read (`..` spellings and a trailing slash included)
PLACES = {
    "under-data": "{rel}/data/x",
    "inside": "{rel}/x",
    "same": "{rel}",
    "same-slash": "{rel}/",
    "dot-dot": "{rel}/data/../sub",
    "holding": "{rel}/..",
}


def _scene(src: Path, tmp_path: Path) -> Path:
    """A copy of ``src`` alone in a folder of its own (so the folder holding it holds nothing else)."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copytree(src, home / "in")
    return home / "in"


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("command", sorted(RELEASE_READERS))
def test_no_output_inside_the_release_it_reads(command, place, release_dir, run_folder, tmp_path):
    rel = _scene(release_dir, tmp_path)
    cli, args = RELEASE_READERS[command]
    out = PLACES[place].format(rel=rel)
    before = scene_state(tmp_path)
    res = CliRunner().invoke(cli, [a.format(rel=rel, out=out, run=run_folder) for a in args])
    refused(res, "--out", "--release", moved=changed(before, scene_state(tmp_path)))


@pytest.mark.parametrize("place", ["inside", "same", "holding"])
@pytest.mark.parametrize("command", sorted(RUN_READERS))
def test_no_output_inside_the_run_it_reads(command, place, run_folder, tmp_path):
    run = _scene(run_folder, tmp_path)
    cli, args = RUN_READERS[command]
    out = PLACES[place].format(rel=run)
    before = scene_state(tmp_path)
    refused(
        CliRunner().invoke(cli, [a.format(rel=run, out=out) for a in args]),
        "--out",
        moved=changed(before, scene_state(tmp_path)),
    )


def test_a_symlink_into_the_release_is_the_release(release_dir, tmp_path):
    rel = _scene(release_dir, tmp_path)
    (tmp_path / "link").symlink_to(rel / "data")
    before = scene_state(tmp_path)
    args = ["export", "mteb", "--release", str(rel), "--out", str(tmp_path / "link" / "mteb")]
    refused(CliRunner().invoke(build_cli, args), "--out", "--release", moved=changed(before, scene_state(tmp_path)))


@pytest.mark.parametrize("place", ["inside", "same", "holding"])
def test_no_pool_gallery_inside_the_pool(place, pool_dir, tmp_path):
    pool = _scene(pool_dir, tmp_path)
    before = scene_state(tmp_path)
    args = ["images", "gallery", "--pool", str(pool), "--out", PLACES[place].format(rel=pool)]
    refused(CliRunner().invoke(build_cli, args), "--out", "--pool", moved=changed(before, scene_state(tmp_path)))


def test_a_run_folder_inside_its_release_stays_allowed():
    """The card's own `python evaluate.py --release . --out RUN`: a run folder may sit in the release."""
    run = next(cmd for where, cmd in commands() if where == "mvlsib-eval run")
    assert run.callback.kept_apart[2] == ("release",)
