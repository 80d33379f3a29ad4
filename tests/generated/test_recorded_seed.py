"""The seed ``publish`` takes from ``WORK/sample_report.json`` holds the bound of ``--seed``, generated:
each value outside it (or not an integer) is refused when the report is read, exit 2, one line naming
the file and the field, with no release written. The bound is one number: ``params.MAX_SEED`` equals
the report's schema's, and every ``--seed`` option of both command trees uses it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support.cli_contract import changed, refused, scene_state

from mvlsib import params, readers
from mvlsib.cli import build_cli, eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.workdir.instances import recorded_seed

BAD_SEEDS = {
    "negative": -1,
    "one-over-the-bound": params.MAX_SEED + 1,
    "1e26": 10**26,
    "fraction": 1.5,
    "string": "7",
    "bool": True,
    "null": None,
}


def _seed_options():
    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from walk(sub, (*path, name))
        else:
            yield from ((path, p) for p in cmd.params if p.name == "seed")

    return [*walk(build_cli, ("mvlsib-build",)), *walk(eval_cli, ("mvlsib-eval",))]


def test_the_bound_is_the_report_schema_s():
    assert params.MAX_SEED == readers.schema("sample_report")["properties"]["seed"]["maximum"] == 2**63 - 1


@pytest.mark.parametrize(("path", "option"), _seed_options(), ids=lambda v: " ".join(v) if isinstance(v, tuple) else "")
def test_every_seed_option_holds_the_same_bound(path, option):
    assert isinstance(option.type, params.Int) and (option.type.min, option.type.max) == (0, params.MAX_SEED), path


@pytest.fixture()
def workdir(release_dir, tmp_path) -> Path:
    work = tmp_path / "work"
    shutil.copytree(release_dir.parent / "work", work)
    return work


def _record(workdir: Path, seed) -> None:
    path = workdir / "sample_report.json"
    report = json.loads(path.read_text("utf-8"))
    report["seed"] = seed
    path.write_text(json.dumps(report), encoding="utf-8")


@pytest.mark.parametrize("seed", sorted(BAD_SEEDS))
def test_publish_refuses_a_recorded_seed_outside_the_bound(workdir: Path, tmp_path: Path, seed: str):
    _record(workdir, BAD_SEEDS[seed])
    before = scene_state(tmp_path)
    args = ["publish", "--workdir", str(workdir), "--out", str(tmp_path / "rel"), "--no-progress"]
    refused(CliRunner().invoke(build_cli, args), "sample_report.json", moved=changed(before, scene_state(tmp_path)))
    # publish refuses the edited report by the work folder's ledger first; the report's reader holds the
    # bound too, for a work folder without a ledger (and for every other reader of the seed)
    with pytest.raises(MvlsibError, match="seed"):
        recorded_seed(workdir)


@pytest.mark.parametrize("seed", [0, 7, params.MAX_SEED])
def test_a_seed_within_the_bound_is_read_back(workdir: Path, seed: int):
    _record(workdir, seed)
    assert recorded_seed(workdir) == seed


def _publish(workdir: Path, out: Path, *seed: str):
    args = ["publish", "--workdir", str(workdir), "--out", str(out), "--no-progress", *seed]
    return CliRunner().invoke(build_cli, args)


# --seed is a claim about the instances: any seed but the recorded one (0), however spelt, is refused
OTHER_SEEDS = ["1", "5", "00005", "+5", str(params.MAX_SEED)]


@pytest.mark.parametrize("seed", OTHER_SEEDS)
def test_publish_refuses_a_seed_the_instances_were_not_sampled_with(workdir: Path, tmp_path: Path, seed: str):
    assert recorded_seed(workdir) == 0
    before = scene_state(tmp_path)
    res = _publish(workdir, tmp_path / "rel", "--seed", seed)
    refused(res, "--seed", "sample_report.json", "seed 0", moved=changed(before, scene_state(tmp_path)))


@pytest.mark.parametrize("seed", [[], ["--seed", "0"], ["--seed", "000"]], ids=["none", "0", "000"])
def test_publish_records_the_sampled_seed(workdir: Path, tmp_path: Path, seed: list[str]):
    res = _publish(workdir, tmp_path / "rel", *seed)
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "rel/manifest.json").read_text("utf-8"))["build"]["seed"] == 0


def test_publish_refuses_a_seed_when_none_is_recorded(workdir: Path, tmp_path: Path):
    (workdir / "sample_report.json").unlink()
    before = scene_state(tmp_path)
    res = _publish(workdir, tmp_path / "rel", "--seed", "0")
    refused(res, "--seed 0", "records no seed", moved=changed(before, scene_state(tmp_path)))
