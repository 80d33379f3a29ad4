"""Language metadata: a row for every language of the real SIB-200 data (and N'Ko from raw
Flores files), groupings out of the box, user overrides."""

from __future__ import annotations

import csv

import pytest

from mvlsib.errors import MvlsibError
from mvlsib.evaluation.run.languages import COLUMNS, UNKNOWN, groupings, info, read_overrides, table


def sib_languages(sib_dir):
    annotated = sorted(p.name for p in (sib_dir / "data" / "annotated").iterdir() if p.is_dir())
    raw = sorted({p.name.split(".")[0] for p in (sib_dir / "data" / "nko_flores").iterdir()})
    return annotated, raw


def test_every_sib_language_has_a_row(sib_dir):
    annotated, raw = sib_languages(sib_dir)
    assert len(annotated) == 199 and raw == ["nqo_Nkoo"]
    rows = table()
    for lang in annotated + raw:
        row = rows[lang]
        assert tuple(row) == COLUMNS
        iso, script = lang.split("_")
        assert (row["iso639_3"], row["script"]) == (iso, script), lang
        assert row["name"] != UNKNOWN and row["script_name"] != UNKNOWN, lang
        assert row["family"] != "", lang
    # the 205 SIB-200 / Flores-200 codes (204 + N'Ko), beyond the 200 in the shared copy
    for lang in ("dzo_Tibt", "sat_Olck", "taq_Tfng", "urd_Arab", "zho_Hant"):
        assert rows[lang]["name"] != UNKNOWN
    known_family = sum(rows[lang]["family"] != UNKNOWN for lang in annotated + raw)
    assert known_family >= 199
    assert rows["eng_Latn"]["joshi_class"] == "5" and rows["nqo_Nkoo"]["name"] == "N'Ko"
    # resource classes: most languages have one; the paper's own class examples are kept
    known_class = [lang for lang in annotated + raw if rows[lang]["joshi_class"] != UNKNOWN]
    assert len(known_class) >= 170
    assert {rows[c]["joshi_class"] for c in ("zul_Latn", "lao_Laoo", "mlt_Latn", "gle_Latn")} == {"2"}
    assert rows["acm_Arab"]["joshi_class"] == UNKNOWN  # no dialect inherits Arabic's class 5
    assert all(rows[lang]["joshi_class"] in {"0", "1", "2", "3", "4", "5", UNKNOWN} for lang in rows)
    assert rows["urd_Arab"]["family"] == "Indo-European" and rows["swh_Latn"]["family"] == "Atlantic-Congo"


def test_codes_outside_the_table_still_get_iso_and_script():
    row = info("xyz_Latn")
    assert (row["iso639_3"], row["script"], row["family"], row["name"]) == ("xyz", "Latn", UNKNOWN, UNKNOWN)


def test_groupings_and_overrides(tmp_path):
    path = tmp_path / "meta.csv"
    path.write_text("language,family,region\nnqo_Nkoo,Manding,West Africa\nxyz_Latn,,Nowhere\n", encoding="utf-8")
    over = read_overrides(path)
    g = groupings(["eng_Latn", "arb_Arab", "nqo_Nkoo", "xyz_Latn"], over)
    assert g["script"] == {"eng_Latn": "Latn", "arb_Arab": "Arab", "nqo_Nkoo": "Nkoo", "xyz_Latn": "Latn"}
    assert g["family"]["arb_Arab"] == "Afro-Asiatic" and g["family"]["nqo_Nkoo"] == "Manding"
    assert g["family"]["xyz_Latn"] == UNKNOWN  # an empty override keeps the table's value
    assert g["resource"]["eng_Latn"] == "Joshi class 5" and g["resource"]["xyz_Latn"] == UNKNOWN
    assert g["resource"]["nqo_Nkoo"] == "Joshi class 0"
    assert g["region"] == {"eng_Latn": UNKNOWN, "arb_Arab": UNKNOWN, "nqo_Nkoo": "West Africa", "xyz_Latn": "Nowhere"}
    path.write_text("lang,family\n", encoding="utf-8")
    with pytest.raises(MvlsibError, match="needs a 'language' column"):
        read_overrides(path)


def test_packaged_csv_is_sorted_and_unique():
    from pathlib import Path

    from mvlsib.evaluation.run import languages

    with open(Path(languages.__file__).parent / "data" / "languages.csv", encoding="utf-8") as fh:
        codes = [r["language"] for r in csv.DictReader(fh)]
    assert codes == sorted(set(codes)) and len(codes) >= 205
