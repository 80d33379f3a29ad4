"""The `preview` config: rendered English examples with their images embedded, for the Dataset Viewer."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def release(full_workdir: Path, pool_dir: Path, tmp_path_factory) -> Path:
    from support.workfolder import publish_from

    out = tmp_path_factory.mktemp("preview") / "rel"
    publish_from(full_workdir, out, pool_dir, languages=["eng_Latn", "fra_Latn"], progress=False)
    return out


def test_preview_shows_rendered_examples_with_images(release, pool_dir, tmp_path):
    import datasets

    from mvlsib.evaluation.run.prompts import prompt_for_example
    from mvlsib.release_format import mvl_sib
    from mvlsib.workdir.pool_manifest import read_manifest

    ds = datasets.load_dataset(str(release), name="preview", split="test", cache_dir=str(tmp_path / "c"))
    assert ds.num_rows == 24 and sorted(set(ds["task"])) == sorted(mvl_sib.TASKS)
    assert isinstance(ds.features["images"], datasets.List) and isinstance(
        ds.features["images"].feature, datasets.Image
    )
    pool_sha = {r.image_id: r.sha256 for r in read_manifest(pool_dir)}
    for row in ds.with_format(None).cast_column("images", datasets.List(datasets.Image(decode=False))):
        (ex,) = [
            e
            for e in mvl_sib.load_task(row["task"], "eng_Latn", k=row["k"], source=release, with_prompt=False)
            if e["instance_id"] == row["instance_id"]
        ]
        assert row["prompt"] == prompt_for_example(ex).text()  # what a model is sent
        assert row["prompt"].count("<image>") == len(row["images"]) == len(ex["image_ids"])
        assert row["answer"] == "ABCD"[ex["label"]] and row["options"] == [str(o) for o in ex["options"]]
        # the embedded bytes are the pool's own files, in prompt order
        assert [hashlib.sha256(im["bytes"]).hexdigest() for im in row["images"]] == [
            pool_sha[i] for i in ex["image_ids"]
        ]
    assert ds[0]["images"][0].size == (640, 480)  # decodes to PIL, as the Viewer shows it


def test_preview_is_a_config_but_not_a_language(release):
    from huggingface_hub import DatasetCard

    from mvlsib.release_format import mvl_sib

    card = DatasetCard((release / "README.md").read_text("utf-8"))
    configs = {c["config_name"]: c for c in card.data["configs"]}
    assert "preview" in configs and not configs["preview"].get("default")
    info = next(i for i in card.data["dataset_info"] if i["config_name"] == "preview")
    assert {"name": "images", "list": "image"} in info["features"]
    assert mvl_sib.languages(release) == ["eng_Latn", "fra_Latn"]
    assert "preview" not in card.data["language_details"]


def test_no_preview_without_english(full_workdir, pool_dir, tmp_path):
    from support.workfolder import publish_from

    from mvlsib.release.card.render import card_metadata

    publish_from(full_workdir, tmp_path / "rel", pool_dir, languages=["fra_Latn"], progress=False)
    assert not (tmp_path / "rel" / "data" / "preview").exists()
    assert "preview" not in [
        c["config_name"] for c in card_metadata((tmp_path / "rel" / "README.md").read_text())["configs"]
    ]


def test_preview_is_refused_as_a_language(release):
    from mvlsib.release_format import mvl_sib

    with pytest.raises(mvl_sib.LoaderError, match="not a language"):
        mvl_sib.load_rows("preview", release)
