"""Every bad-input case of ingest, planted in small copies of real language folders."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import read_corpus

from mvlsib.atomic import LEDGER
from mvlsib.builder.ingest import ingest
from mvlsib.cli import build_cli
from mvlsib.errors import MvlsibError
from mvlsib.workdir.corpus import save_corpus


def ingest_into(work, *args, **kwargs) -> dict:
    """Run the ingest stage and save its corpus into ``work``, as `mvlsib-build ingest` does; its report."""
    corpus = ingest(*args, **kwargs)
    save_corpus(work, corpus)
    return corpus.report


LANGS = ("eng_Latn", "fra_Latn", "deu_Latn")


@pytest.fixture
def sib(tmp_path, sib_dir) -> Path:
    root = tmp_path / "sib" / "data" / "annotated"
    for lang in LANGS:
        shutil.copytree(sib_dir / "data" / "annotated" / lang, root / lang)
    return tmp_path / "sib"


def _lines(path: Path) -> list[str]:
    return path.read_bytes().decode("utf-8").split("\n")


def _edit(path: Path, line_no: int, fn) -> str:
    """Replace 1-based line ``line_no`` of ``path`` by ``fn(old)``; return the old line."""
    lines = _lines(path)
    old = lines[line_no - 1]
    lines[line_no - 1] = fn(old)
    path.write_bytes("\n".join(lines).encode("utf-8"))
    return old


def _fail(sib: Path, work: Path, pattern: str, **kw) -> None:
    with pytest.raises(MvlsibError, match=pattern):
        ingest_into(work, sib=sib, progress=False, **kw)
    assert not (work / "corpus.parquet").exists() and not (work / "ingest_report.json").exists()


def fra(sib: Path, split: str = "train") -> Path:
    return sib / "data" / "annotated" / "fra_Latn" / f"{split}.tsv"


def test_clean_copy_ingests(sib, tmp_path):
    assert ingest_into(tmp_path / "w", sib=sib, progress=False)["n_rows"] == 3 * 1004


def test_topic_differs_from_english(sib, tmp_path):
    index_id, topic, text = _lines(fra(sib))[9].split("\t", 2)
    new_topic = "sports" if topic != "sports" else "health"
    _edit(fra(sib), 10, lambda l: f"{index_id}\t{new_topic}\t{text}")
    _fail(
        sib,
        tmp_path / "w",
        rf"fra_Latn/train\.tsv:10: index_id {index_id} of fra_Latn has topic '{new_topic}' but English "
        rf"\(eng_Latn\) has '{topic}'.*topics must equal English's",
    )


def test_id_not_in_english(sib, tmp_path):
    _edit(fra(sib, "dev"), 5, lambda l: "5000\t" + l.split("\t", 1)[1])
    _fail(sib, tmp_path / "w", r"fra_Latn/dev\.tsv:5: index_id 5000 of fra_Latn is not in English \(eng_Latn\)")


def test_missing_row(sib, tmp_path):
    lines = _lines(fra(sib, "test"))
    removed = int(lines[3].split("\t")[0])
    fra(sib, "test").write_bytes("\n".join(lines[:3] + lines[4:]).encode("utf-8"))
    _fail(
        sib,
        tmp_path / "w",
        rf"fra_Latn: 1 index_id\(s\) of English \(eng_Latn\) are missing \(e\.g\. {removed}; "
        rf"{removed} belongs in test\.tsv\)",
    )


def test_row_in_the_wrong_split(sib, tmp_path):
    train, dev = _lines(fra(sib, "train")), _lines(fra(sib, "dev"))
    moved = train.pop(1)
    dev.insert(1, moved)
    fra(sib, "train").write_bytes("\n".join(train).encode("utf-8"))
    fra(sib, "dev").write_bytes("\n".join(dev).encode("utf-8"))
    _fail(
        sib,
        tmp_path / "w",
        rf"fra_Latn/dev\.tsv:2: index_id {moved.split(chr(9))[0]} of fra_Latn is in the dev "
        r"split but in train for English.*move the row to train\.tsv",
    )


def test_duplicate_id_within_language(sib, tmp_path):
    first = _lines(fra(sib, "train"))[1]
    _edit(fra(sib, "train"), 3, lambda l: first)
    _fail(
        sib,
        tmp_path / "w",
        rf"fra_Latn/train\.tsv:3: index_id {first.split(chr(9))[0]} of fra_Latn appears "
        r"again \(first at .*fra_Latn/train\.tsv:2\)",
    )


@pytest.mark.parametrize("blank", ["", "   ", '"  "'])
def test_empty_text(sib, tmp_path, blank):
    old = _edit(fra(sib), 7, lambda l: "\t".join(l.split("\t")[:2] + [blank]))
    _fail(sib, tmp_path / "w", rf"fra_Latn/train\.tsv:7: empty text for index_id {old.split(chr(9))[0]}")


def test_wrong_field_count(sib, tmp_path):
    _edit(fra(sib), 4, lambda l: l.replace("\t", " ", 1))
    _fail(sib, tmp_path / "w", r"fra_Latn/train\.tsv:4: malformed row with 2 field\(s\), expected 3")


def test_extra_field(sib, tmp_path):
    _edit(fra(sib), 4, lambda l: l + "\textra")
    _fail(sib, tmp_path / "w", r"fra_Latn/train\.tsv:4: malformed row with 4 field\(s\), expected 3")


def test_non_integer_index_id(sib, tmp_path):
    _edit(fra(sib), 8, lambda l: "12a\t" + l.split("\t", 1)[1])
    _fail(sib, tmp_path / "w", r"fra_Latn/train\.tsv:8: index_id '12a' is not a non-negative integer")


def test_unknown_topic(sib, tmp_path):
    _edit(fra(sib), 9, lambda l: l.split("\t")[0] + "\tcooking\t" + l.split("\t")[2])
    _fail(
        sib,
        tmp_path / "w",
        r"fra_Latn/train\.tsv:9: unknown topic 'cooking'; the category must be one of "
        r"entertainment, geography",
    )


def test_bad_quoting(sib, tmp_path):
    _edit(fra(sib), 6, lambda l: "\t".join(l.split("\t")[:2] + ['"quoted" then text']))
    _fail(sib, tmp_path / "w", r"fra_Latn/train\.tsv:6: malformed TSV")


def test_unbalanced_quote_swallowing_lines(sib, tmp_path):
    # an opening quote that is closed many lines later turns several rows into one text
    _edit(fra(sib), 6, lambda l: "\t".join(l.split("\t")[:2] + ['"' + l.split("\t")[2]]))
    _edit(fra(sib), 9, lambda l: "\t".join(l.split("\t")[:2] + [l.split("\t")[2] + '"']))
    _fail(sib, tmp_path / "w", r"fra_Latn/train\.tsv:6: the text of index_id \d+ spans several lines")


def test_bad_header(sib, tmp_path):
    _edit(fra(sib), 1, lambda l: "id\tlabel\ttext")
    _fail(sib, tmp_path / "w", r"fra_Latn/train\.tsv:1: header is \['id', 'label', 'text'\]")


def test_not_utf8(sib, tmp_path):
    fra(sib).write_bytes(fra(sib).read_bytes().replace("é".encode(), "é".encode("latin-1"), 1))
    _fail(sib, tmp_path / "w", r"fra_Latn/train\.tsv:\d+: not valid UTF-8 at byte \d+ \(line \d+, byte \d+ of the line")


def test_missing_split_file(sib, tmp_path):
    fra(sib, "dev").unlink()
    _fail(sib, tmp_path / "w", r"fra_Latn/dev\.tsv: missing split file")


def test_language_folder_without_files(sib, tmp_path):
    (sib / "data" / "annotated" / "xyz_Latn").mkdir()
    _fail(sib, tmp_path / "w", r"xyz_Latn: language folder has no files")


def test_no_english_reference(sib, tmp_path, sib_dir):
    shutil.rmtree(sib / "data" / "annotated" / "eng_Latn")
    _fail(sib, tmp_path / "w", r"no eng_Latn folder to check ids and topics against")
    # ... for which the English annotation can stand in
    report = ingest_into(tmp_path / "ok", sib=sib, annotation=sib_dir / "data" / "eng", progress=False)
    assert report["languages"] == ["deu_Latn", "fra_Latn"]


def test_english_itself_is_checked_when_not_selected(sib, tmp_path):
    _edit(sib / "data" / "annotated" / "eng_Latn" / "dev.tsv", 3, lambda l: "\t".join(l.split("\t")[:2] + [""]))
    _fail(sib, tmp_path / "w", r"eng_Latn/dev\.tsv:3: empty text", languages="fra_Latn")


def test_na_like_texts_stay_strings(sib, tmp_path):
    words = ["NA", "null", "None", "nan", "N/A", "#N/A", "NULL"]
    for i, word in enumerate(words):
        _edit(fra(sib), 2 + i, lambda l, w=word: "\t".join(l.split("\t")[:2] + [w]))
    _edit(fra(sib), 20, lambda l: "\t".join(l.split("\t")[:2] + ['"  padded with ""quotes"" \t "']))
    ingest_into(tmp_path / "w", sib=sib, progress=False)
    df = read_corpus(tmp_path / "w")
    fr = df[df.language == "fra_Latn"]
    ids = [int(l.split("\t")[0]) for l in _lines(fra(sib))[1:9]]
    assert fr.set_index("index_id").loc[ids[:7], "text"].tolist() == words
    padded_id = int(_lines(fra(sib))[19].split("\t")[0])
    assert fr.set_index("index_id").at[padded_id, "text"] == '  padded with "quotes"'


def test_cli_reports_error_without_traceback(sib, tmp_path):
    _edit(fra(sib), 9, lambda l: l.split("\t")[0] + "\tcooking\t" + l.split("\t")[2])
    result = CliRunner().invoke(
        build_cli, ["ingest", "--sib", str(sib), "--workdir", str(tmp_path / "w"), "--no-progress"]
    )
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    assert "train.tsv:9: unknown topic 'cooking'" in result.output
    assert not (tmp_path / "w" / "corpus.parquet").exists()


def test_failed_rerun_keeps_the_previous_corpus(sib, tmp_path):
    ingest_into(tmp_path / "w", sib=sib, progress=False)
    before = (tmp_path / "w" / "corpus.parquet").read_bytes()
    fra(sib, "dev").unlink()
    with pytest.raises(MvlsibError):
        ingest_into(tmp_path / "w", sib=sib, progress=False)
    assert (tmp_path / "w" / "corpus.parquet").read_bytes() == before
    # and its ledger (hidden), which says both files are ingest's own
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == [LEDGER, "corpus.parquet", "ingest_report.json"]


def test_revision_only_for_hub(sib, tmp_path):
    _fail(sib, tmp_path / "w", r"--data-revision applies only to a Hub dataset", revision="main")


def test_read_corpus_without_ingest(tmp_path):
    with pytest.raises(MvlsibError, match="no corpus here; run `mvlsib-build ingest"):
        read_corpus(tmp_path)
