"""Issue #11 faults planted in copies of real SIB-200 and Flores files: a TSV cut off inside its
last sentence (defect 5), folders that are not languages (13), a directory or a symlink loop
where a TSV should be (12), invalid UTF-8 positions and a BOM on a raw Flores file (15)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import read_corpus

from mvlsib.builder.ingest import ingest
from mvlsib.builder.tsv import CONTROL_IN_TEXT, read_language_folder
from mvlsib.errors import MvlsibError
from mvlsib.workdir.corpus import save_corpus


def ingest_into(work, *args, **kwargs) -> dict:
    """Run the ingest stage and save its corpus into ``work``, as `mvlsib-build ingest` does; its report."""
    corpus = ingest(*args, **kwargs)
    save_corpus(work, corpus)
    return corpus.report


LANGS = ("eng_Latn", "fra_Latn")


@pytest.fixture
def sib(tmp_path, sib_dir) -> Path:
    root = tmp_path / "sib" / "data" / "annotated"
    for lang in LANGS:
        shutil.copytree(sib_dir / "data" / "annotated" / lang, root / lang)
    return tmp_path / "sib"


def test_real_files_all_end_with_a_newline(sib_dir):
    files = sorted((sib_dir / "data" / "annotated").glob("*/*.tsv"))
    assert len(files) == 597
    assert all(f.read_bytes().endswith(b"\n") for f in files)


def test_tsv_cut_inside_its_last_sentence_is_refused(sib, tmp_path):
    test = sib / "data" / "annotated" / "fra_Latn" / "test.tsv"
    data = test.read_bytes()
    test.write_bytes(data[: len(data) - 25])  # the last sentence loses its end and the newline
    last_line = data[: len(data) - 25].decode("utf-8").count("\n") + 1
    with pytest.raises(MvlsibError, match=rf"fra_Latn/test\.tsv:{last_line}: the file does not end with a newline"):
        ingest_into(tmp_path / "w", sib=sib, progress=False)
    assert not (tmp_path / "w" / "corpus.parquet").exists()


def test_folders_that_are_not_languages_are_ignored(sib, tmp_path):
    root = sib / "data" / "annotated"
    shutil.copytree(root / "fra_Latn", root / "fra_Latn copy")
    shutil.copytree(root / "fra_Latn", root / "x: y")
    ingest_into(tmp_path / "w", sib=sib, progress=False)
    assert sorted(read_corpus(tmp_path / "w")["language"].unique()) == list(LANGS)


def test_language_option_must_be_a_code(sib, tmp_path):
    # the backup folder exists, but it is not a language: the close match is the real one
    shutil.copytree(sib / "data" / "annotated" / "fra_Latn", sib / "data" / "annotated" / "fra_Latn copy")
    with pytest.raises(MvlsibError, match=r"unknown language code\(s\): fra_Latn copy \(close: fra_Latn\)"):
        ingest_into(tmp_path / "w", sib=sib, languages="eng_Latn,fra_Latn copy", progress=False)


@pytest.mark.parametrize("kind", ["directory", "symlink loop"])
def test_directory_or_symlink_loop_instead_of_a_tsv(sib, tmp_path, kind):
    dev = sib / "data" / "annotated" / "fra_Latn" / "dev.tsv"
    dev.unlink()
    if kind == "directory":
        dev.mkdir()
        expected = "dev.tsv: is a folder, expected a file"
    else:
        os.symlink(dev, dev)  # points at itself
        expected = "dev.tsv: cannot be read"
    with pytest.raises(MvlsibError, match=expected):
        ingest_into(tmp_path / "w", sib=sib, progress=False)


def test_invalid_utf8_names_line_and_byte(sib, tmp_path):
    train = sib / "data" / "annotated" / "fra_Latn" / "train.tsv"
    lines = train.read_bytes().split(b"\n")
    lines[4] = lines[4][:10] + b"\xff" + lines[4][10:]
    train.write_bytes(b"\n".join(lines))
    offset = sum(len(x) + 1 for x in lines[:4]) + 10
    with pytest.raises(MvlsibError, match=rf"train\.tsv:5: not valid UTF-8 at byte {offset} \(line 5, byte 11 "):
        ingest_into(tmp_path / "w", sib=sib, progress=False)


def test_bom_on_a_raw_flores_file_is_dropped_as_in_tsv(tmp_path, sib_dir):
    folder = tmp_path / "flores"
    shutil.copytree(sib_dir / "data" / "nko_flores", folder)
    dev = folder / "nqo_Nkoo.dev"
    plain = dev.read_bytes()
    dev.write_bytes(b"\xef\xbb\xbf" + plain)
    ingest_into(tmp_path / "w", flores=folder, annotation=sib_dir / "data" / "eng", progress=False)
    corpus = read_corpus(tmp_path / "w")
    texts = corpus[corpus["language"] == "nqo_Nkoo"]["text"].tolist()
    assert not any(t.startswith("\ufeff") for t in texts)
    first = plain.decode("utf-8").split("\n")[0].rstrip()
    row0 = corpus[(corpus["language"] == "nqo_Nkoo") & (corpus["index_id"] == 0)]
    assert len(row0) == 1  # index 0 is annotated (SIB-200 train): its text is Flores line 1, no BOM
    assert row0["text"].iloc[0] == first


# Every control character a text may not hold, generated from the rule's own class; the C1 characters
# SIB-200 itself holds (cp1252 dashes and quotes read as Latin-1) stay accepted.
_REFUSED_CONTROLS = [chr(c) for c in range(0x00, 0xA0) if CONTROL_IN_TEXT.match(chr(c)) and chr(c) not in "\n\r"]


@pytest.mark.parametrize("ch", _REFUSED_CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_control_character_in_a_text_is_refused_by_file_and_line(sib_dir, tmp_path, ch):
    sib = tmp_path / "sib" / "data" / "annotated" / "eng_Latn"
    shutil.copytree(sib_dir / "data" / "annotated" / "eng_Latn", sib)
    lines = (sib / "dev.tsv").read_text("utf-8").split("\n")
    ident, topic, text = lines[3].split("\t", 2)
    lines[3] = "\t".join([ident, topic, f'"{text[:10]}{ch}[31m{text[10:]}"'])
    (sib / "dev.tsv").write_text("\n".join(lines), "utf-8")
    with pytest.raises(MvlsibError, match=rf"dev\.tsv:4: .* control character U\+{ord(ch):04X}"):
        ingest(str(tmp_path / "sib"), languages=["eng_Latn"], progress=False)


def test_the_c1_characters_sib_200_holds_are_kept(sib_dir):
    """cat_Latn holds U+0093/U+0094/U+0096/U+0097 (cp1252 quotes and dashes read as Latin-1): the data is
    built as it is."""
    texts = "".join(r.text for r in read_language_folder(sib_dir / "data" / "annotated" / "cat_Latn"))
    assert any(ch in texts for ch in "\x93\x94\x96\x97") and not CONTROL_IN_TEXT.search(texts)
