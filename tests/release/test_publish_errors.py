"""`publish --workdir W --out DIR` refuses bad input with a message naming what to fix, and writes nothing."""

from __future__ import annotations

import csv
import shutil

import pytest
from click.testing import CliRunner

from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError


def _run(*args: str):
    return CliRunner().invoke(build_cli, list(args))


def test_missing_work_files(tmp_path):
    res = _run("publish", "--workdir", str(tmp_path / "empty"), "--out", str(tmp_path / "rel"))
    assert res.exit_code == 2
    assert "corpus.parquet: no corpus here; run `mvlsib-build ingest" in res.output
    assert not (tmp_path / "rel").exists()


def test_pool_without_the_sampled_images(full_workdir, pool_dir, tmp_path):
    pool = tmp_path / "pool"
    shutil.copytree(pool_dir, pool)
    with open(pool / "manifest.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    with open(pool / "manifest.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(r for r in rows if r["image_id"] != "sports_3")
    res = _run("publish", "--workdir", str(full_workdir), "--out", str(tmp_path / "rel"), "--pool", str(pool))
    assert res.exit_code == 2
    # the work folder records the pool sample used: another manifest is refused before validation
    assert "its manifest.csv is not the one sample used" in res.output
    assert not (tmp_path / "rel").exists()


def test_image_file_changed_after_the_manifest(full_workdir, pool_dir, tmp_path):
    pool = tmp_path / "pool"
    shutil.copytree(pool_dir, pool)
    victim = next(pool.glob("travel/*.png"))
    victim.write_bytes(victim.read_bytes() + b"\0")
    res = _run("publish", "--workdir", str(full_workdir), "--out", str(tmp_path / "rel"), "--pool", str(pool))
    assert res.exit_code == 2
    assert f"sha256 of travel/{victim.name}" in res.output and "images check" in res.output


def test_refuses_to_replace_a_folder_that_is_not_a_release(full_workdir, pool_dir, tmp_path):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.tex").write_text("do not delete\n")
    res = _run("publish", "--workdir", str(full_workdir), "--out", str(out), "--pool", str(pool_dir))
    assert res.exit_code == 2 and "did not write (thesis.tex)" in res.output
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".precious")]  # no staging left behind


def test_argument_combinations(tmp_path):
    assert "nothing to do" in _run("publish").output
    assert "--release needs --repo-id" in _run("publish", "--release", ".").output
    (tmp_path / "rel").mkdir()
    res = _run("publish", "--release", str(tmp_path / "rel"), "--out", str(tmp_path / "x"))
    assert res.exit_code == 2 and "pass only one of them" in res.output


def test_build_refuses_a_foreign_out_before_any_work(tmp_path, monkeypatch):
    import mvlsib.pipeline as pipeline

    def no_work(*_args, **_kwargs):
        raise AssertionError("ingest ran before --out was checked")

    monkeypatch.setattr(pipeline, "ingest", no_work)
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("mine", encoding="utf-8")
    with pytest.raises(MvlsibError, match="thesis.tex"):
        pipeline.build("../shared/sib-200", out, workdir=tmp_path / "work", progress=False)
    assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"] and not (tmp_path / "work").exists()
