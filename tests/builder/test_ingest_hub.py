"""The Hub source, exercised through huggingface_hub against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import shutil

import pytest
from support import read_corpus
from support.fakes.hub import serve_folder

from mvlsib.builder.ingest import ingest
from mvlsib.builder.sib_sources import is_hub_id
from mvlsib.errors import MvlsibError
from mvlsib.workdir.corpus import save_corpus


def ingest_into(work, *args, **kwargs) -> dict:
    """Run the ingest stage and save its corpus into ``work``, as `mvlsib-build ingest` does; its report."""
    corpus = ingest(*args, **kwargs)
    save_corpus(work, corpus)
    return corpus.report


LANGS = ("eng_Latn", "fra_Latn", "zul_Latn")


@pytest.fixture(scope="module")
def hub_repo(tmp_path_factory, sib_dir):
    """A few real languages copied into the Hub layout data/<lang>/{train,dev,test}.tsv."""
    repo = tmp_path_factory.mktemp("hub") / "repo"
    for lang in LANGS:
        shutil.copytree(sib_dir / "data" / "annotated" / lang, repo / "data" / lang)
    return repo


def test_hub_download_of_selected_languages(tmp_path, hub_repo, sib_dir):
    with serve_folder("Davlan/sib200", hub_repo) as hub:
        report = ingest_into(
            tmp_path / "w",
            sib="Davlan/sib200",
            languages="fra_Latn",
            endpoint=hub.endpoint,
            cache_dir=tmp_path / "cache",
            progress=False,
        )
    COMMIT = hub.commit
    assert report["sources"] == [{"kind": "hub", "location": "Davlan/sib200", "revision": COMMIT}]
    assert report["languages"] == ["fra_Latn"]
    downloaded = sorted(p for m, p in hub.requests if m == "GET" and "/resolve/" in p)
    # fra_Latn plus eng_Latn as the reference, nothing else
    assert [p.rsplit("/", 2)[-2:] for p in downloaded] == [
        [lang, f"{split}.tsv"] for lang in ("eng_Latn", "fra_Latn") for split in ("dev", "test", "train")
    ]
    assert all(f"/resolve/{COMMIT}/" in p for p in downloaded)
    # the same bytes as reading the real checkout
    ingest_into(tmp_path / "local", sib=sib_dir, languages="fra_Latn", progress=False)
    assert (tmp_path / "w" / "corpus.parquet").read_bytes() == (tmp_path / "local" / "corpus.parquet").read_bytes()


def test_hub_all_languages_and_revision(tmp_path, hub_repo):
    with serve_folder("Davlan/sib200", hub_repo) as hub:
        report = ingest_into(
            tmp_path / "w",
            sib="Davlan/sib200",
            revision="main",
            endpoint=hub.endpoint,
            cache_dir=tmp_path / "cache",
            progress=False,
        )
        assert report["languages"] == list(LANGS)
        assert len(read_corpus(tmp_path / "w")) == 3 * 1004
        with pytest.raises(MvlsibError, match="--revision v9: not found"):
            ingest_into(
                tmp_path / "x",
                sib="Davlan/sib200",
                revision="v9",
                endpoint=hub.endpoint,
                cache_dir=tmp_path / "cache",
                progress=False,
            )
        with pytest.raises(MvlsibError, match="no such Hub dataset"):
            ingest_into(
                tmp_path / "x",
                sib="Nobody/nothing",
                endpoint=hub.endpoint,
                cache_dir=tmp_path / "cache",
                progress=False,
            )
        with pytest.raises(MvlsibError, match=r"unknown language code\(s\): deu_Latn"):
            ingest_into(
                tmp_path / "x",
                sib="Davlan/sib200",
                languages="deu_Latn",
                endpoint=hub.endpoint,
                cache_dir=tmp_path / "cache",
                progress=False,
            )


def test_hub_unreachable_is_a_clear_error(tmp_path):
    # a port nobody listens on: the server is started and stopped to reserve it
    with serve_folder("Davlan/sib200", tmp_path) as hub:
        endpoint = hub.endpoint
    with pytest.raises(MvlsibError, match="cannot reach the Hub"):
        ingest_into(tmp_path / "w", sib="Davlan/sib200", endpoint=endpoint, cache_dir=tmp_path / "c", progress=False)


def test_local_folder_in_hub_layout(tmp_path, hub_repo):
    report = ingest_into(tmp_path, sib=hub_repo, progress=False)
    assert report["languages"] == list(LANGS) and report["sources"][0]["kind"] == "local"


def test_local_vs_hub_decision(tmp_path, monkeypatch):
    assert is_hub_id("Davlan/sib200")
    assert not is_hub_id("no-slash")
    (tmp_path / "Davlan" / "sib200").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert not is_hub_id("Davlan/sib200")  # an existing path always wins
