"""ingest on the real SIB-200 data: counts, exact parsing, duplicates, layouts, determinism."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from support import read_corpus, subprocess_env

from mvlsib.builder.ingest import ingest
from mvlsib.builder.tsv import read_language_folder
from mvlsib.errors import MvlsibError
from mvlsib.release_format.mvl_sib import TOPICS
from mvlsib.workdir import CORPUS_COLUMNS
from mvlsib.workdir.corpus import load_ingest_report, save_corpus


def ingest_into(work, *args, **kwargs) -> dict:
    """Run the ingest stage and save its corpus into ``work``, as `mvlsib-build ingest` does; its report."""
    corpus = ingest(*args, **kwargs)
    save_corpus(work, corpus)
    return corpus.report


N_LANGUAGES = 199
N_SENTENCES = 1004

# Duplicate translations (whitespace-normalised) of the real SIB-200 data, found by reading the TSVs with
# the csv module; the groups that cross topics matter most to the sampler.
KNOWN_DUPLICATES = {
    "ary_Arab": [([365, 1354], False), ([1786, 1787], False)],
    "azb_Arab": [([452, 453], False)],
    "bam_Latn": [([1181, 1183], False)],
    "bod_Tibt": [([920, 921], False)],
    "bug_Latn": [([13, 14], False)],
    "dyu_Latn": [([565, 862], False), ([637, 1679], False)],
    "grn_Latn": [([1672, 1673], True)],
    "hat_Latn": [([32, 1735], True)],
    "kbp_Latn": [([662, 663], True)],
    "lua_Latn": [([1786, 1787], False), ([1930, 1932], False)],
    "san_Deva": [([271, 272], False), ([531, 532], False)],
    "sun_Latn": [([658, 845], True)],
    "tgk_Cyrl": [([1012, 1013], False)],
}


@pytest.fixture(scope="module")
def full(tmp_path_factory, sib_dir):
    work = tmp_path_factory.mktemp("full")
    report = ingest_into(work, sib=sib_dir, progress=False)
    return work, report, read_corpus(work)


def test_full_ingest_shape(full):
    work, report, df = full
    assert tuple(df.columns) == CORPUS_COLUMNS
    assert [str(t) for t in df.dtypes] == ["string", "int64", "string", "string", "string"]
    assert len(df) == N_LANGUAGES * N_SENTENCES == 199_796 == report["n_rows"]
    assert df["language"].nunique() == N_LANGUAGES == report["n_languages"]
    assert (df.groupby("language").size() == N_SENTENCES).all()
    # sorted by language, then index_id
    keys = list(zip(df["language"], df["index_id"]))
    assert keys == sorted(keys)
    # the same 701/99/204 split and the same topics for every language
    per_split = df.groupby(["language", "split"]).size().unstack()
    assert (per_split["train"] == 701).all() and (per_split["dev"] == 99).all() and (per_split["test"] == 204).all()
    assert report["split_sizes"] == {"train": 701, "dev": 99, "test": 204}
    eng = df[df.language == "eng_Latn"].set_index("index_id")
    for col in ("topic", "split"):
        per_id = df.groupby("index_id")[col].nunique()
        assert (per_id == 1).all(), f"{col} differs between languages"
        assert (df.groupby("index_id")[col].first() == eng[col]).all()
    assert set(df["topic"]) == set(TOPICS)
    assert sum(report["topic_sizes"].values()) == N_SENTENCES
    assert report["topic_sizes"] == eng["topic"].value_counts().sort_index().to_dict()
    # no text lost to NaN or emptied
    assert df["text"].notna().all()
    assert (df["text"].str.len() > 0).all()
    assert (df["text"] == df["text"].str.rstrip()).all()
    on_disk = json.loads((work / "ingest_report.json").read_text(encoding="utf-8"))
    assert on_disk == load_ingest_report(work) == report
    assert on_disk["corpus"] == "corpus.parquet"


def test_quoted_fields_with_doubled_quotes_parse_exactly(full, sib_dir):
    _, _, df = full
    raw = (sib_dir / "data/annotated/eng_Latn/train.tsv").read_text(encoding="utf-8").split("\n")
    assert raw[12] == (
        '1239\tentertainment\t"""She’s very cute and sings quite well, too,"" he said according to a '
        'transcript of the news conference."'
    )
    eng = df[df.language == "eng_Latn"].set_index("index_id")["text"]
    assert eng[1239] == (
        '"She’s very cute and sings quite well, too," he said according to a transcript of the news conference.'
    )


def test_parsed_rows_rewrite_to_the_original_bytes(full, sib_dir):
    """Writing the corpus back with QUOTE_MINIMAL gives every real file byte for byte: nothing was lost,
    unquoted or altered (thousands of fields have doubled quotes)."""
    _, _, df = full
    root = sib_dir / "data" / "annotated"
    by_file: dict[tuple[str, str], dict[int, tuple[str, str]]] = {}
    for lang, index_id, split, topic, text in zip(*(df[c].tolist() for c in CORPUS_COLUMNS)):
        by_file.setdefault((lang, split), {})[index_id] = (topic, text)
    assert len(by_file) == N_LANGUAGES * 3
    n_quoted = 0
    for (lang, split), rows in sorted(by_file.items()):
        path = root / lang / f"{split}.tsv"
        original = path.read_bytes().decode("utf-8")
        # the files are not sorted by id: take the file's own order from its first column
        file_order = [int(line.split("\t", 1)[0]) for line in original.split("\n")[1:] if line]
        buf = io.StringIO()
        w = csv.writer(buf, delimiter="\t", lineterminator="\n")
        w.writerow(["index_id", "category", "text"])
        w.writerows([i, *rows[i]] for i in file_order)
        assert buf.getvalue() == original, path
        n_quoted += original.count('""')
    assert n_quoted > 3000  # the real data is full of doubled quotes


def test_duplicate_report_matches_the_real_duplicates(full):
    _, report, df = full
    found = {
        lang: [(g["index_ids"], g["cross_topic"]) for g in groups] for lang, groups in report["duplicates"].items()
    }
    assert found == KNOWN_DUPLICATES
    d = report
    assert d["n_languages_with_duplicates"] == 13
    assert d["n_duplicate_groups"] == 17
    assert d["n_cross_topic_duplicate_groups"] == 4
    hat = report["duplicates"]["hat_Latn"][0]
    texts = df[(df.language == "hat_Latn") & df.index_id.isin([32, 1735])]
    assert {" ".join(t.split()) for t in texts["text"]} == {hat["text"]}
    assert hat["topics"] == list(texts.sort_values("index_id")["topic"])
    assert hat["topics"][0] != hat["topics"][1]


@pytest.mark.parametrize("layout", ["checkout", "annotated", "data"])
def test_local_layouts(tmp_path, sib_dir, layout):
    src = {"checkout": sib_dir, "annotated": sib_dir / "data" / "annotated", "data": sib_dir / "data"}[layout]
    report = ingest_into(tmp_path, sib=src, languages="fra_Latn,eng_Latn", progress=False)
    assert report["languages"] == ["eng_Latn", "fra_Latn"]
    df = read_corpus(tmp_path)
    assert len(df) == 2 * N_SENTENCES


def test_languages_restricts_and_still_checks_against_english(tmp_path, sib_dir):
    report = ingest_into(tmp_path, sib=sib_dir, languages=" zul_Latn , tgk_Cyrl,", progress=False)
    assert report["languages"] == ["tgk_Cyrl", "zul_Latn"]
    assert report["reference"] == "English (eng_Latn)"
    assert set(read_corpus(tmp_path)["language"]) == {"tgk_Cyrl", "zul_Latn"}


def test_unknown_language_lists_close_matches(tmp_path, sib_dir):
    with pytest.raises(MvlsibError, match=r"unknown language code\(s\): fra_latn \(close: fra_Latn"):
        ingest_into(tmp_path, sib=sib_dir, languages="fra_latn", progress=False)
    assert not (tmp_path / "corpus.parquet").exists()


def test_reference_reader_matches_corpus(full, sib_dir):
    _, _, df = full
    rows = read_language_folder(sib_dir / "data" / "annotated" / "eng_Latn")
    assert [r.split for r in rows[:701]] == ["train"] * 701
    assert rows[0].line == 2 and rows[0].file.name == "train.tsv"
    eng = df[df.language == "eng_Latn"].set_index("index_id")
    assert all(eng.at[r.index_id, "text"] == r.text for r in rows)


def test_byte_identical_across_processes_and_hash_seeds(tmp_path, sib_dir):
    outs = []
    for seed in ("0", "4242"):
        work = tmp_path / f"w{seed}"
        proc = subprocess.run(
            [sys.executable, "-m", "mvlsib", "ingest", "--sib", str(sib_dir), "--workdir", str(work), "--no-progress"],
            env=subprocess_env(PYTHONHASHSEED=seed),
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stderr
        assert "languages: 199  rows: 199,796" in proc.stdout
        assert "17 group(s) in 13 language(s), 4 across topics" in proc.stdout
        outs.append(((work / "corpus.parquet").read_bytes(), (work / "ingest_report.json").read_bytes()))
    assert outs[0] == outs[1]
