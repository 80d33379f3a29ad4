"""Provenance: the card says what this release is (the toolkit's own instances; demo pictograms or a
curated pool), a demo build is refused for upload without --allow-demo-pool, and after
`publish --repo-id` every snippet of the uploaded card names that repo."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import subprocess_env
from support.fakes.hub import HubStandIn

TOKEN = "hf_StandInSecret_provenance_51c0"
LANGS = ["eng_Latn"]


def _release(workdir: Path, pool: Path, out: Path, **kw) -> Path:
    from support.workfolder import publish_from

    publish_from(workdir, out, pool, languages=LANGS, progress=False, **kw)
    return out


def _pool_copy(pool_dir: Path, dest: Path, curated: int) -> Path:
    """The bundled pool with the first ``curated`` rows given a photographer's source, as a curator's
    pool would have them (the files stay the same, so the sampled instances still fit)."""
    shutil.copytree(pool_dir, dest)
    path = dest / "manifest.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows[:curated]:
        row.update(
            source_url=f"https://commons.wikimedia.org/wiki/File:{row['image_id']}.jpg",
            author="A. Photographer",
            license="CC-BY-4.0",
        )
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return dest


def _meta(card: str) -> dict:
    from mvlsib.release.card.render import card_metadata

    return card_metadata(card)


def _section(card: str, title: str) -> str:
    return card.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


@pytest.fixture(scope="module")
def demo_release(full_workdir, pool_dir, tmp_path_factory) -> Path:
    return _release(full_workdir, pool_dir, tmp_path_factory.mktemp("demo") / "rel")


def test_demo_release_says_it_is_a_demo(demo_release, full_workdir):
    from mvlsib.atomic import sha256_file

    card = (demo_release / "README.md").read_text("utf-8")
    manifest = json.loads((demo_release / "manifest.json").read_text("utf-8"))
    assert manifest["build"]["image_pool"] == "demo" and manifest["build"]["demo_images"] == 70
    assert _meta(card)["pretty_name"] == "MVL-SIB (mvlsib-build instances, seed 0, demo pictograms)"
    assert "> **Demo build**" in card.split("## Provenance", 1)[0]
    prov = _section(card, "Provenance")
    # facts of this build, not boilerplate
    assert sha256_file(full_workdir / "instances.jsonl") in prov and "seed **0**" in prov
    assert "all 70 images are the toolkit's **drawn demo pictograms**" in prov
    assert "**not** the instances of the MVL-SIB paper" in prov and "MVLSIBSent2Img" in prov


@pytest.mark.parametrize("curated,kind", [(70, "curated"), (20, "mixed")])
def test_curated_and_mixed_pools_are_named(full_workdir, pool_dir, tmp_path, curated, kind):
    pool = _pool_copy(pool_dir, tmp_path / "pool", curated)
    rel = _release(full_workdir, pool, tmp_path / "rel")
    card = (rel / "README.md").read_text("utf-8")
    assert json.loads((rel / "manifest.json").read_text("utf-8"))["build"]["image_pool"] == kind
    prov = _section(card, "Provenance")
    if kind == "curated":
        assert "70 images from a curated pool" in prov and "pictogram" not in card.split("## Image attribution")[0]
        assert _meta(card)["pretty_name"] == "MVL-SIB (mvlsib-build instances, seed 0)"
    else:
        assert "50 of the 70 images are the toolkit's **drawn demo pictograms**" in prov
        assert "> **Demo build**" in card


def _env(hub: HubStandIn, home: Path) -> dict[str, str]:
    env = subprocess_env(
        HF_HOME=str(home),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_TOKEN=TOKEN,
        HF_ENDPOINT=hub.endpoint,
    )
    return env


def _publish(release: Path, env: dict, repo_id: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mvlsib", "publish", "--release", str(release), "--repo-id", repo_id, *extra],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_demo_release_is_refused_for_upload_without_the_flag(demo_release, tmp_path):
    rel = tmp_path / "rel"
    shutil.copytree(demo_release, rel)
    before = {p: p.read_bytes() for p in rel.rglob("*") if p.is_file()}
    with HubStandIn(TOKEN) as hub:
        res = _publish(rel, _env(hub, tmp_path), "org/refused")
        assert res.returncode == 2, res.stderr
        assert "demo pictograms" in res.stderr and "--allow-demo-pool" in res.stderr
        assert "Traceback" not in res.stderr
        assert "org/refused" not in hub.state.repos  # nothing was created on the Hub
        assert before == {p: p.read_bytes() for p in rel.rglob("*") if p.is_file()}  # nor changed locally

        dry = _publish(rel, _env(hub, tmp_path), "org/refused", "--dry-run")  # looking is fine
        assert dry.returncode == 0, dry.stderr

        ok = _publish(rel, _env(hub, tmp_path), "org/demo", "--allow-demo-pool")
        assert ok.returncode == 0, ok.stderr
        assert "org/demo" in hub.state.repos


def test_uploaded_card_names_the_repo_id(full_workdir, pool_dir, tmp_path):
    from mvlsib.release.manifest import verify_release

    rel = _release(full_workdir, _pool_copy(pool_dir, tmp_path / "pool", 70), tmp_path / "rel")
    assert 'load_dataset("ORG/mvl-sib"' in (rel / "README.md").read_text("utf-8")
    with HubStandIn(TOKEN) as hub:
        res = _publish(rel, _env(hub, tmp_path), "acme/mvl-sib-photos")
        assert res.returncode == 0, res.stderr
        uploaded = hub.state.head_files("acme/mvl-sib-photos")
        card = uploaded["README.md"].decode("utf-8")
        assert "ORG/" not in card
        assert 'load_dataset("acme/mvl-sib-photos", name="eng_Latn", split="test")' in card
        assert 'a release folder or "acme/mvl-sib-photos"' in card
        # the folder now holds exactly what is on the Hub, and still verifies against its manifest
        manifest = verify_release(rel)
        assert manifest["build"]["repo_hint"] == "acme/mvl-sib-photos"
        assert uploaded["manifest.json"] == (rel / "manifest.json").read_bytes()
        n_commits = len(hub.state.history("acme/mvl-sib-photos"))
        again = _publish(rel, _env(hub, tmp_path), "acme/mvl-sib-photos")
        assert again.returncode == 0 and "no commit made" in again.stdout
        assert len(hub.state.history("acme/mvl-sib-photos")) == n_commits


def test_publish_out_with_repo_id_renders_the_id(full_workdir, tmp_path):
    env = subprocess_env()
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "mvlsib",
            "publish",
            "--workdir",
            str(full_workdir),
            "--out",
            str(tmp_path / "rel"),
            "--repo-id",
            "acme/x",
            "--dry-run",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    card = (tmp_path / "rel" / "README.md").read_text("utf-8")
    assert 'load_dataset("acme/x"' in card and "ORG/" not in card, res.stderr


def test_publish_uses_the_pool_sample_used_and_refuses_another(full_workdir, pool_dir, tmp_path):
    """Two pools share ids such as sports_0: without the record, publish would show the bundled images."""
    import csv
    import shutil

    from click.testing import CliRunner

    from mvlsib.cli import build_cli

    pool = tmp_path / "pool"
    shutil.copytree(pool_dir, pool)
    with (pool / "manifest.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    rows[0]["author"] = "Another Author"
    with (pool / "manifest.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy2(full_workdir / "corpus.parquet", work / "corpus.parquet")
    runner = CliRunner()
    sampled = runner.invoke(build_cli, ["sample", "--workdir", str(work), "--pool", str(pool), "--no-progress"])
    assert sampled.exit_code == 0, sampled.output
    out = tmp_path / "release"
    published = runner.invoke(
        build_cli, ["publish", "--workdir", str(work), "--out", str(out), "--allow-demo-pool", "--no-progress"]
    )
    assert published.exit_code == 0, published.output
    assert "Another Author" in (out / "README.md").read_text("utf-8")  # the sampled pool's credits
    refused = runner.invoke(
        build_cli,
        ["publish", "--workdir", str(work), "--out", str(tmp_path / "r2"), "--pool", str(pool_dir), "--no-progress"],
    )
    assert refused.exit_code == 2 and "not the one sample used" in refused.output
    assert not (tmp_path / "r2").exists()
