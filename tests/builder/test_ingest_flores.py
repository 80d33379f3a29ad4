"""Building SIB-200 from raw Flores files: the real N'Ko files, and Flores+ parquet built from them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import read_corpus, subprocess_env

from mvlsib.builder.ingest import ingest
from mvlsib.builder.tsv import read_language_folder
from mvlsib.errors import MvlsibError
from mvlsib.workdir.corpus import save_corpus


def ingest_into(work, *args, **kwargs) -> dict:
    """Run the ingest stage and save its corpus into ``work``, as `mvlsib-build ingest` does; its report."""
    corpus = ingest(*args, **kwargs)
    save_corpus(work, corpus)
    return corpus.report


def _raw_lines(path: Path) -> list[str]:
    lines = path.read_bytes().decode("utf-8").split("\n")
    assert lines[-1] == ""
    return lines[:-1]


@pytest.fixture(scope="module")
def nko(sib_dir):
    folder = sib_dir / "data" / "nko_flores"
    return folder, _raw_lines(folder / "nqo_Nkoo.dev"), _raw_lines(folder / "nqo_Nkoo.devtest")


@pytest.fixture(scope="module")
def annotation(sib_dir):
    return sib_dir / "data" / "eng"


def _check_nko(df, annotation: Path, dev: list[str], devtest: list[str]) -> None:
    assert set(df["language"]) == {"nqo_Nkoo"}
    assert len(df) == 1004
    eng = sorted(read_language_folder(annotation, need_text=False), key=lambda r: r.index_id)
    assert df["index_id"].tolist() == [r.index_id for r in eng]
    assert df["topic"].tolist() == [r.topic for r in eng]
    assert df["split"].tolist() == [r.split for r in eng]
    assert df.groupby("split").size().to_dict() == {"dev": 99, "test": 204, "train": 701}
    expected = [(dev[i] if i < 997 else devtest[i - 997]).rstrip() for i in df["index_id"]]
    assert df["text"].tolist() == expected
    assert any(i >= 997 for i in df["index_id"]) and any(i < 997 for i in df["index_id"])


def test_nko_from_raw_flores_files(tmp_path, nko, annotation):
    folder, dev, devtest = nko
    assert (len(dev), len(devtest)) == (997, 1012)
    report = ingest_into(tmp_path, flores=folder, annotation=annotation, progress=False)
    assert report["languages"] == ["nqo_Nkoo"] and report["n_rows"] == 1004
    assert report["reference"].startswith("the annotation ")
    _check_nko(read_corpus(tmp_path), annotation, dev, devtest)


def test_nko_cli_acceptance_command(tmp_path, nko, annotation):
    folder, dev, devtest = nko
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mvlsib",
            "ingest",
            "--flores",
            str(folder),
            "--annotation",
            str(annotation),
            "--workdir",
            str(tmp_path / "n"),
        ],
        env=subprocess_env(),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "languages: 1  rows: 1,004" in proc.stdout
    _check_nko(read_corpus(tmp_path / "n"), annotation, dev, devtest)


def test_nko_from_flores_plus_parquet(tmp_path, nko, annotation):
    import pyarrow as pa
    import pyarrow.parquet as pq

    _, dev, devtest = nko
    src = tmp_path / "flores_plus"
    for split, lines in (("dev", dev), ("devtest", devtest)):
        (src / split).mkdir(parents=True)
        # Flores+ has more columns than text; only text is read, in file order
        pq.write_table(
            pa.table({"id": list(range(1, len(lines) + 1)), "text": lines, "iso_639_3": ["nqo"] * len(lines)}),
            src / split / "nqo_Nkoo.parquet",
        )
    ingest_into(tmp_path / "w", flores=src, annotation=annotation, progress=False)
    _check_nko(read_corpus(tmp_path / "w"), annotation, dev, devtest)
    ingest_into(tmp_path / "t", flores=nko[0], annotation=annotation, progress=False)
    assert (tmp_path / "w" / "corpus.parquet").read_bytes() == (tmp_path / "t" / "corpus.parquet").read_bytes()


def test_flores_combined_with_sib_checked_against_the_annotation(tmp_path, sib_dir, nko, annotation):
    report = ingest_into(
        tmp_path, sib=sib_dir, flores=nko[0], annotation=annotation, languages="eng_Latn,nqo_Nkoo", progress=False
    )
    assert report["languages"] == ["eng_Latn", "nqo_Nkoo"]
    df = read_corpus(tmp_path)
    eng, nqo = (df[df.language == lang].reset_index(drop=True) for lang in ("eng_Latn", "nqo_Nkoo"))
    assert eng[["index_id", "split", "topic"]].equals(nqo[["index_id", "split", "topic"]])


def test_flores_needs_annotation(tmp_path, nko):
    with pytest.raises(MvlsibError, match="--flores needs --annotation"):
        ingest_into(tmp_path, flores=nko[0], progress=False)


def test_flores_short_file_is_refused(tmp_path, nko, annotation):
    folder, dev, devtest = nko
    src = tmp_path / "f"
    src.mkdir()
    (src / "nqo_Nkoo.dev").write_text("\n".join(dev[:-1]) + "\n", encoding="utf-8")
    shutil.copy(folder / "nqo_Nkoo.devtest", src)
    with pytest.raises(MvlsibError, match=r"nqo_Nkoo\.dev: has 996 sentences, expected 997"):
        ingest_into(tmp_path / "w", flores=src, annotation=annotation, progress=False)


def test_flores_empty_annotated_line_is_refused(tmp_path, nko, annotation):
    folder, dev, devtest = nko
    eng = {r.index_id for r in read_language_folder(annotation, need_text=False)}
    victim = min(i for i in eng if i >= 997)  # an annotated devtest sentence
    broken = list(devtest)
    broken[victim - 997] = "   "
    src = tmp_path / "f"
    src.mkdir()
    shutil.copy(folder / "nqo_Nkoo.dev", src)
    (src / "nqo_Nkoo.devtest").write_text("\n".join(broken) + "\n", encoding="utf-8")
    expected = rf"nqo_Nkoo\.devtest: line {victim - 997 + 1} \(index_id {victim}\) is empty"
    with pytest.raises(MvlsibError, match=expected):
        ingest_into(tmp_path / "w", flores=src, annotation=annotation, progress=False)


def test_flores_dev_without_devtest(tmp_path, nko, annotation):
    src = tmp_path / "f"
    src.mkdir()
    shutil.copy(nko[0] / "nqo_Nkoo.dev", src)
    with pytest.raises(MvlsibError, match="not its devtest partner"):
        ingest_into(tmp_path / "w", flores=src, annotation=annotation, progress=False)


def _flores_plus(src: Path, dev: list, devtest: list) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    for split, lines in (("dev", dev), ("devtest", devtest)):
        (src / split).mkdir(parents=True)
        pq.write_table(pa.table({"text": lines}), src / split / "nqo_Nkoo.parquet")


_SAID = {
    "line-break": "line",
    "three-megabytes": "bytes",
    "escape": "control character U+001B",
    "number-column": "string",
}


@pytest.mark.parametrize(
    ("fmt", "fault"), [(f, x) for f in ("text", "parquet") for x in _SAID if (f, x) != ("text", "number-column")]
)
def test_a_sentence_is_held_to_one_rule_in_either_format(tmp_path, nko, annotation, fault, fmt):
    """Raw Flores text files and Flores+ parquet files give the same refusals for the same sentence."""
    _, dev, devtest = nko
    eng = {r.index_id for r in read_language_folder(annotation, need_text=False)}
    victim = min(i for i in eng if i < 997)
    broken = list(dev)
    broken[victim] = {"line-break": "half a sentence\nand the rest", "three-megabytes": "a" * 3_000_000,
                      "escape": "a \x1b]0;owned\x07 b", "number-column": "12345"}[fault]  # fmt: skip
    src = tmp_path / "src"
    if fmt == "parquet":
        if fault == "number-column":
            import pyarrow as pa
            import pyarrow.parquet as pq

            for split, lines in (("dev", dev), ("devtest", devtest)):
                (src / split).mkdir(parents=True)
                pq.write_table(pa.table({"text": list(range(len(lines)))}), src / split / "nqo_Nkoo.parquet")
        else:
            _flores_plus(src, broken, devtest)
    else:
        src.mkdir()
        (src / "nqo_Nkoo.dev").write_text("\n".join(broken) + "\n", encoding="utf-8")
        (src / "nqo_Nkoo.devtest").write_text("\n".join(devtest) + "\n", encoding="utf-8")
    with pytest.raises(MvlsibError, match="nqo_Nkoo") as err:
        ingest_into(tmp_path / "w", flores=src, annotation=annotation, progress=False)
    assert _SAID[fault] in str(err.value), err.value
    assert not (tmp_path / "w" / "corpus.parquet").exists()
