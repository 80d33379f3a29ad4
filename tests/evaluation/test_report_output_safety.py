"""Run names and model ids, generated and hostile, through the real `report` command: the leaderboard's
CSV cells never start a spreadsheet formula, its Markdown and HTML show them literally, every report
CSV is neutralised, and a `$` in a name does not break the figures (matplotlib mathtext)."""

from __future__ import annotations

import builtins
import csv
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.hostile import FRAGMENT_LIST, FRAGMENTS, MD, TABLE_TAGS, parse_html
from support.planted import planted_records, write_run

from mvlsib import params
from mvlsib.cli import eval_cli
from mvlsib.escape import csv_cell, flat
from mvlsib.evaluation.analysis.report import write_report

LANGS = ("eng_Latn", "swh_Latn")
RUNS_PER_REPORT = 4
EXAMPLES = 12  # reports per property: EXAMPLES x RUNS_PER_REPORT generated run names and model ids
FORMULA = set("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")
# A run name is a command-line argument: no NUL; otherwise anything (a carriage return included).
NAME = st.lists(
    st.one_of(st.sampled_from(list("=+-@\t\r\\`*_[]<>|~&!#$() \"'aZ9é\uff1d")), FRAGMENTS), min_size=1, max_size=6
).map("".join)


def _no_matplotlib(monkeypatch) -> None:
    real_import = builtins.__import__

    def guarded(name, *args, **kwargs):
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("matplotlib is not installed here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)


def _report(tmp: Path, names: list[str], models: list[str]) -> Path:
    runs = [
        write_run(tmp / f"run{i}", planted_records(0.6, languages=LANGS, n=12, seed=i), model=m, limit=12)
        for i, m in enumerate(models)
    ]
    out = tmp / "report"
    if not all(map(_cli_text, names)):  # the command line refuses it (params.TEXT); the library takes any name
        write_report(runs, out, names=names)
        return out
    args = ["report", *map(str, runs), "--out", str(out)]
    for n in names:
        args += ["--name", n]
    r = CliRunner().invoke(eval_cli, args)
    assert r.exit_code == 0, r.output
    return out


def _cli_text(name: str) -> bool:
    try:
        params.TEXT.convert(name, None, None)
    except click.BadParameter:
        return False
    return True


def _check_outputs(out: Path, names: list[str], models: list[str]) -> None:
    labels = names if len(set(names)) == len(names) else [f"{i + 1}:{n}" for i, n in enumerate(names)]
    for path in out.glob("*.csv"):
        with open(path, newline="", encoding="utf-8") as fh:
            for row in csv.reader(fh):
                for cell in row:
                    assert csv_cell(cell) == cell or cell[:1] == "'", (path.name, cell)  # neutral as written
                    assert not (cell[:1] in FORMULA and csv_cell(cell) != cell), (path.name, cell)
    board = list(csv.DictReader(open(out / "leaderboard.csv", newline="", encoding="utf-8")))
    assert sorted(r["run"] for r in board) == sorted(csv_cell(label) for label in labels)
    assert sorted(r["model"] for r in board) == sorted(csv_cell(m) for m in models)

    doc = parse_html(MD.render((out / "leaderboard.md").read_text("utf-8")))
    assert set(doc.tags) <= TABLE_TAGS | {"h1", "p", "code", "th"}
    for label, model in zip(labels, models):
        assert flat(label) in doc.cells, (label, doc.cells)
        assert flat(model) in doc.cells, (model, doc.cells)

    # report.md: every label literal (no markup of a name becomes a tag or a link)
    rendered = MD.render((out / "report.md").read_text("utf-8"))
    doc = parse_html(rendered)
    allowed = TABLE_TAGS | {"h1", "h2", "h3", "p", "code", "th", "strong", "em", "a", "ul", "li", "img"}
    assert set(doc.tags) <= allowed, doc.tags
    assert rendered.count("<a ") == rendered.count('<a href="leaderboard.'), rendered
    # the figures only: a local PNG each
    assert rendered.count("<img ") == len(re.findall(r'<img src="[a-z_]+\.png"', rendered)), rendered

    page = parse_html((out / "leaderboard.html").read_text("utf-8"))
    assert set(page.tags) <= {"html", "head", "meta", "title", "style", "body", "h1", "p", "table"} | {
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "code",
        "br",
        "small",
    }
    for label, model in zip(labels, models):  # read_text gives a CR back as LF
        assert _lf(label) in page.text and _lf(model) in page.text


def _rows_as_wide_as_their_header(markdown: str) -> None:
    # a '|' of a value that became a cell separator would add a column to its row
    widths, row = [], 0
    for token in MD.parse(markdown):
        if token.type == "tr_open":
            row = 0
        elif token.type in ("th_open", "td_open"):
            row += 1
        elif token.type == "tr_close":
            widths.append(row)
        elif token.type == "table_close":
            assert len(set(widths)) == 1, widths
            widths = []


# Every column of --language-metadata the report shows (name, family, the resource class, script) or
# groups by (any new column; its name becomes a section heading), each given every hostile fragment.
METADATA_COLUMNS = ("name", "family", "joshi_class", "script", "script_name", "region")
PAIRS = [FRAGMENT_LIST[i : i + 2] for i in range(0, len(FRAGMENT_LIST), 2)]


@pytest.mark.parametrize("pair", range(len(PAIRS)))
@pytest.mark.parametrize("column", [*METADATA_COLUMNS, "column-name"])
def test_hostile_language_metadata_in_report_md(column, pair, tmp_path, monkeypatch):
    _no_matplotlib(monkeypatch)
    values = PAIRS[pair] if len(PAIRS[pair]) == 2 else [PAIRS[pair][0], "x " + PAIRS[pair][0]]
    meta = tmp_path / "meta.csv"
    with open(meta, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        if column == "column-name":  # the hostile text names two new columns: two groupings' headings
            w.writerows([["language", *values], *([lang, "a", "b"] for lang in LANGS)])
        else:
            w.writerows([["language", column], *([lang, v] for lang, v in zip(LANGS, values))])
    runs = [write_run(tmp_path / "r", planted_records(0.6, languages=LANGS, n=12, seed=0), model="m", limit=12)]
    out = tmp_path / "report"
    r = CliRunner().invoke(eval_cli, ["report", *map(str, runs), "--out", str(out), "--language-metadata", str(meta)])
    assert r.exit_code == 0, r.output
    markdown = (out / "report.md").read_text("utf-8")
    rendered = MD.render(markdown)
    doc = parse_html(rendered)
    allowed = TABLE_TAGS | {"h1", "h2", "p", "code", "strong", "a"}
    assert set(doc.tags) <= allowed, (doc.tags, rendered)
    assert rendered.count("<a ") == rendered.count('<a href="leaderboard.'), rendered
    _rows_as_wide_as_their_header(markdown)
    if column != "script_name":  # shown literally, as given
        shown = {"joshi_class": "Joshi class {}"}.get(column, "{}")
        for v in values:
            assert shown.format(flat(v)) in doc.text, (v, rendered)


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    names=st.lists(NAME, min_size=RUNS_PER_REPORT, max_size=RUNS_PER_REPORT),
    models=st.lists(NAME, min_size=RUNS_PER_REPORT, max_size=RUNS_PER_REPORT),
)
def test_hostile_run_names_and_models_in_every_table(names, models, tmp_path_factory, monkeypatch):
    _no_matplotlib(monkeypatch)  # the tables; the figures are the next test
    out = _report(tmp_path_factory.mktemp("r"), names, models)
    _check_outputs(out, names, models)


@pytest.mark.eval
def test_dollar_signs_and_formulas_in_names_with_figures(tmp_path):
    names = ["$x^{$", "=1+2", "a $b$ c", "<b>x</b>|y"]
    models = ["=cmd|' /C calc'!A0", "@SUM(1)", "-2+3", "m`1`"]
    out = _report(tmp_path, names, models)
    _check_outputs(out, names, models)
    assert len(list(out.glob("*.png"))) >= 5  # the figures were drawn with those names in their legends
