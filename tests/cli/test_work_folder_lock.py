"""One command at a time in a work folder: every command that uses one holds its lock for its whole run.

Generated from the command tree: each command with a ``--workdir`` option, run while another process
holds the work folder, is refused at once (exit 2, one line naming the folder and the holder) and
leaves the folder byte-identical; each ``save_*`` of ``mvlsib.workdir`` (the one way a work file is
written) is refused alike. Without the lock, two ``ingest`` runs into one folder both reported the
corpus they wrote while only one was on disk.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import subprocess_env, write_workdir
from support.cli_contract import changed, refused, scene_state
from support.cli_tree import commands
from support.other_holder import held_elsewhere

import mvlsib.workdir
from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError
from mvlsib.workdir.folder import LOCK_NAME

LANGS = "eng_Latn,fra_Latn"


def _args(name: str, work: Path, s: Path, sib: Path, pool: Path) -> list[str]:
    """The arguments of every command that takes ``--workdir`` (a new one fails the walk below)."""
    table = {
        "mvlsib-build ingest": ["ingest", "--sib", str(sib), "--languages", LANGS, "--workdir", str(work)],
        "mvlsib-build sample": ["sample", "--workdir", str(work), "--pool", str(pool)],
        "mvlsib-build validate": ["validate", "--workdir", str(work), "--pool", str(pool), "--json", str(work / "v.json")],
        "mvlsib-build publish": ["publish", "--workdir", str(work), "--out", str(s / "rel")],
        "mvlsib-build build": ["build", "--sib", str(sib), "--languages", LANGS, "--pool", str(pool),
                               "--out", str(s / "rel"), "--workdir", str(work)],
    }  # fmt: skip
    return [*table[name], "--no-progress"] if name != "mvlsib-build validate" else table[name]


def _work_commands() -> list[str]:
    return sorted(where for where, cmd in commands() if any(p.name == "workdir" for p in cmd.params))


def test_every_work_folder_command_is_walked(tmp_path):
    for where in _work_commands():
        assert _args(where, tmp_path, tmp_path, tmp_path, tmp_path), where


@pytest.fixture(scope="module")
def small_work(tmp_path_factory, sib_dir, pool_dir) -> Path:
    return write_workdir(tmp_path_factory.mktemp("lock-work") / "work", sib_dir, pool_dir, languages=LANGS.split(","))


@pytest.fixture()
def scene(small_work, tmp_path) -> Path:
    shutil.copytree(small_work, tmp_path / "work")
    return tmp_path


@pytest.mark.parametrize("where", _work_commands())
def test_a_command_is_refused_while_another_holds_the_work_folder(where, scene, sib_dir, pool_dir):
    work = scene / "work"
    with held_elsewhere(work, LOCK_NAME, remove=True):
        before = scene_state(scene)
        res = CliRunner().invoke(build_cli, _args(where, work, scene, sib_dir, pool_dir))
        line = refused(res, str(work), "in use by another command", f"pid {os.getpid()}")
        assert changed(before, scene_state(scene)) == [], line
    assert not (work / LOCK_NAME).exists()


@pytest.mark.parametrize("where", _work_commands())
def test_the_lock_is_gone_when_the_command_ends(where, scene, sib_dir, pool_dir):
    """Each command takes the lock itself (what the refusal above shows is its holder line), and
    leaves no lock file behind."""
    work = scene / "work"
    res = CliRunner().invoke(build_cli, _args(where, work, scene, sib_dir, pool_dir))
    assert res.exit_code == 0, res.output
    assert not (work / LOCK_NAME).exists()


def _saves() -> dict[str, object]:
    """Every ``save_*`` function of the ``mvlsib.workdir`` package, by its qualified name."""
    found = {}
    for info in pkgutil.iter_modules(mvlsib.workdir.__path__):
        module = importlib.import_module(f"mvlsib.workdir.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("save_") and fn.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = fn
    return found


def _save_args(small_work: Path) -> dict[str, tuple]:
    from mvlsib.workdir.corpus import load_corpus
    from mvlsib.workdir.instances import load_instances, load_sample_report

    return {
        "mvlsib.workdir.corpus.save_corpus": (load_corpus(small_work),),
        "mvlsib.workdir.instances.save_instances": (load_instances(small_work),),
        "mvlsib.workdir.instances.save_sample_report": (load_sample_report(small_work),),
    }


@pytest.mark.parametrize("name", sorted(_saves()))
def test_every_save_takes_the_work_folders_lock(name, small_work, scene):
    args = _save_args(small_work)[name]  # a new save_* without an entry here fails too
    work = scene / "work"
    with held_elsewhere(work, LOCK_NAME, remove=True):
        before = scene_state(scene)
        with pytest.raises(MvlsibError, match="in use by another command"):
            _saves()[name](work, *args)
        assert changed(before, scene_state(scene)) == []
    _saves()[name](work, *args)  # free again: the same call succeeds
    assert not (work / LOCK_NAME).exists()


_HOLD = """
import sys, time
from mvlsib.workdir.folder import in_use
with in_use(sys.argv[1]):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_second_ingest_is_refused_naming_the_first(tmp_path, sib_dir):
    """Another process holds the folder (as a running ingest does): the refusal names its pid."""
    work = tmp_path / "work"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(work)], stdout=subprocess.PIPE, text=True, env=subprocess_env()
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        res = CliRunner().invoke(
            build_cli, ["ingest", "--sib", str(sib_dir), "--languages", LANGS, "--workdir", str(work), "--no-progress"]
        )
        refused(res, str(work), f"pid {holder.pid}")
        assert sorted(p.name for p in work.iterdir()) == [LOCK_NAME]  # the holder's lock, nothing of ours
    finally:
        holder.kill()
        holder.wait()


def test_a_failed_first_command_leaves_no_work_folder(tmp_path):
    work = tmp_path / "deep" / "work"
    res = CliRunner().invoke(
        build_cli, ["ingest", "--sib", str(tmp_path / "missing"), "--workdir", str(work), "--no-progress"]
    )
    assert res.exit_code == 2, res.output
    assert not (tmp_path / "deep").exists()
