"""Generated out-of-range, NaN and infinite values for every bounded option of every command of both CLIs.

Each (command, option, value) is a parametrized id: the command must stop at the command line (exit 2,
one ``Error:`` line naming the option, no traceback) and write nothing. The options are found by
walking the click trees, so an option added later is covered without listing it here. Then the
list options: repeated values are dropped or refused, never done twice.
"""

from __future__ import annotations

import json
import math

import click
import pytest
from click.testing import CliRunner
from support.cli_contract import refused

from mvlsib import params
from mvlsib.cli import build_cli, eval_cli


def _commands(cmd: click.Command, path: tuple[str, ...]):
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            yield from _commands(sub, (*path, name))
    else:
        yield path, cmd


def _bad_values(kind) -> dict[str, str]:
    low, high = kind.min, kind.max
    values = {"nan": "nan", "inf": "inf", "-inf": "-inf", "1e999": "1e999", "below-min": None, "above-max": None}
    if isinstance(kind, params.Finite):
        values["subnormal"] = "1e-320"
        values["below-min"] = repr(low - max(1.0, abs(low))) if not kind.min_open else repr(low)
        values["above-max"] = repr(high * 2 + 1) if not kind.max_open else repr(high)
    else:
        values["below-min"] = str(low - 1)
        values["above-max"] = str(high + 1)
        values["huge"] = "9" * 5_000
        values["fraction"] = "1.5"
    return values


BAD_BOXES = {
    "zero": "0x0",
    "word": "abc",
    "no-height": "640x",
    "no-width": "x480",
    "three-sides": "640x480x3",
    "negative": "-1x5",
    "over-max-side": f"{params.MAX_SIDE + 1}x480",
    "huge": "9" * 5_000 + "x1",
    "fullwidth-digits": "\uff16\uff14\uff10x480",
}


def _cases():
    for cli, name in ((build_cli, "mvlsib-build"), (eval_cli, "mvlsib-eval")):
        for path, cmd in _commands(cli, ()):
            for param in cmd.params:
                kind = param.type
                if isinstance(kind, params.Box) and isinstance(param, click.Option):
                    for label, value in BAD_BOXES.items():
                        flag = param.opts[0]
                        yield pytest.param(cli, path, flag, value, id=f"{name} {' '.join(path)} {flag}={label}")
                    continue
                item = kind.item if isinstance(kind, params.CommaList) else None
                number = kind if isinstance(kind, (params.Int, params.Finite)) else item
                if not isinstance(number, (params.Int, params.Finite)) or not isinstance(param, click.Option):
                    continue
                flag = param.opts[0]
                for label, value in _bad_values(number).items():
                    yield pytest.param(cli, path, flag, value, id=f"{name} {' '.join(path)} {flag}={label}")


CASES = list(_cases())


def test_the_cases_cover_the_issue_s_examples():
    ids = {c.id for c in CASES}
    assert "mvlsib-eval plan --prompts-per-second=nan" in ids
    assert "mvlsib-eval plan --prompts-per-second=subnormal" in ids
    assert "mvlsib-eval plan --gpus=above-max" in ids
    assert any(i.startswith("mvlsib-eval run --concurrency=") for i in ids)  # backend option tables
    assert any(i.startswith("mvlsib-build verify-images --request-timeout=") for i in ids)
    assert "mvlsib-build images add --box=zero" in ids and "mvlsib-build images import-release --box=zero" in ids


@pytest.mark.parametrize("text, want", [("640x480", (640, 480)), (" 1X1 ", (1, 1)), ((3, 4), (3, 4))])
def test_a_box_is_two_sides(text, want):
    assert params.Box(params.MAX_SIDE).convert(text, None, None) == want


@pytest.mark.parametrize("cli, path, flag, value", CASES)
def test_a_bad_number_stops_at_the_command_line(cli, path, flag, value, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # default output folders are relative: nothing may appear here
    result = CliRunner().invoke(cli, [*path, flag, value])
    refused(result, flag)
    assert len(result.output) < 1_000, f"{len(result.output):,} characters"  # a 5,000-digit value is clipped
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "kind, text, want",
    [
        (params.CommaList(), "eng_Latn,eng_Latn", ("eng_Latn",)),
        (params.CommaList(), " eng_Latn , fra_Latn,eng_Latn,, ", ("eng_Latn", "fra_Latn")),
        (params.CommaList(keywords=("all",)), " all ", "all"),
        (params.CommaList(params.Int(1, 5)), "3,1,3,03", (3, 1)),
    ],
    ids=["duplicate", "spaces-and-empties", "keyword", "int-items"],
)
def test_a_comma_list_is_split_and_deduplicated_once(kind, text, want):
    assert kind.convert(text, None, None) == want


def _list_cases():
    for cli, name in ((build_cli, "mvlsib-build"), (eval_cli, "mvlsib-eval")):
        for path, cmd in _commands(cli, ()):
            for param in cmd.params:
                if isinstance(param.type, params.CommaList) and isinstance(param, click.Option):
                    for label, value in (("empty", ""), ("blank", "  "), ("commas", " , ,")):
                        flag = param.opts[0]
                        yield pytest.param(cli, path, flag, value, id=f"{name} {' '.join(path)} {flag}={label}")


LIST_CASES = list(_list_cases())


def test_the_list_cases_cover_every_selection_command():
    ids = {c.id.rsplit("=", 1)[0] for c in LIST_CASES}
    for want in ("mvlsib-eval plan --languages", "mvlsib-eval run --tasks", "mvlsib-eval batch prepare --k",
                 "mvlsib-build export --languages", "mvlsib-build ingest --languages"):  # fmt: skip
        assert want in ids


@pytest.mark.parametrize("cli, path, flag, value", LIST_CASES)
def test_a_list_naming_nothing_stops_at_the_command_line(cli, path, flag, value, tmp_path, monkeypatch):
    """An empty selection would plan, run or export nothing (a division by zero, an empty batch that
    exits 0): it is refused before any work, naming the option."""
    monkeypatch.chdir(tmp_path)
    refused(CliRunner().invoke(cli, [*path, flag, value]), flag)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e-320", "1e999", "-1", "2"])
def test_finite_refuses_what_float_takes(value):
    kind = params.Finite(0.0, 1.0)
    if value in ("nan", "inf", "-inf", "1e999"):
        assert not math.isfinite(float(value))
    with pytest.raises(click.BadParameter):
        kind.convert(value, None, None)


def test_export_inspect_builds_each_language_once(release_dir, tmp_path):
    """`export inspect --languages eng_Latn,eng_Latn` exports eng_Latn once, as `--languages eng_Latn` does."""
    runner = CliRunner()
    outs = {}
    for label, languages in (("twice", "eng_Latn,eng_Latn"), ("once", "eng_Latn")):
        out = tmp_path / label
        result = runner.invoke(build_cli, ["export", "inspect", "--release", str(release_dir), "--out", str(out),
                                           "--languages", languages, "--tasks", "t2s", "--limit", "2"])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "1 language(s)" in result.output
        outs[label] = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert outs["twice"].keys() == outs["once"].keys()
    data = [name for name in outs["once"] if name.endswith(".json")]
    for name in data:
        assert json.loads(outs["twice"][name]) == json.loads(outs["once"][name]), name


@pytest.mark.parametrize(
    "args",
    [
        ("report", "{run}", "{run}"),
        ("compare", "{run}", "{run}"),
        ("items", "{run}", "{run}"),
        ("correlate", "{run}", "{run}"),
        ("merge", "{run}", "{run}", "--out", "{out}"),
    ],
    ids=["report-runs", "compare-runs", "items-runs", "correlate-runs", "merge-sources"],
)
@pytest.mark.parametrize("spelling", ["same", "trailing-slash", "dot-dot", "symlink"])
def test_a_run_given_twice_is_refused(tmp_path, args, spelling):
    run = tmp_path / "run"
    run.mkdir()
    (tmp_path / "alias").symlink_to(run)
    again = {
        "same": str(run),
        "trailing-slash": f"{run}/",
        "dot-dot": f"{run}/../run",
        "symlink": str(tmp_path / "alias"),
    }
    out = tmp_path / "out"
    argv = [a.format(run=run, out=out) for a in args]
    argv[len(argv) - 1 - argv[::-1].index(str(run))] = again[spelling]  # the second time, spelt another way
    refused(CliRunner().invoke(eval_cli, argv), "given more than once")
    assert not out.exists() and list(run.iterdir()) == []


@pytest.mark.parametrize(
    "given",
    [{"--shard": "0/1000000"}, {"--shard": "0/" + "9" * 5000}, {"--shard": "0/٣"},
     {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "1000000"},
     {"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "9" * 5000},
     {"RANK": "0", "WORLD_SIZE": "99999999999999999999"}],
    ids=lambda g: ",".join(f"{k}={v[:12]}" for k, v in g.items()),
)  # fmt: skip
def test_a_shard_count_beyond_the_bound_is_refused_before_any_work(given):
    """The one shard bound (run_files.MAX_SHARDS) holds for the option and the environment alike: the
    shard fields written would otherwise be refused by the run's own reader after the work."""
    from mvlsib.errors import MvlsibError
    from mvlsib.evaluation.run.shards import parse_shard

    env = {k: v for k, v in given.items() if not k.startswith("--")}
    with pytest.raises(MvlsibError, match="shard|I/N|not an integer"):
        parse_shard(given.get("--shard"), env)


NOT_LANGUAGES = {"slash": "eng_Latn/", "parent": "../eng_Latn", "up-and-back": "fra_Latn/../eng_Latn",
                 "lowercase-script": "eng_latn", "absolute": "/etc", "escape": "eng_Latn\x1b[31m",
                 "dot": "."}  # fmt: skip


def _language_cases():
    for cli, name in ((build_cli, "mvlsib-build"), (eval_cli, "mvlsib-eval")):
        for path, cmd in _commands(cli, ()):
            for param in cmd.params:
                if isinstance(param, click.Option) and param.opts[0] == "--languages":
                    for label, value in NOT_LANGUAGES.items():
                        yield pytest.param(cli, path, f"eng_Latn,{value}", id=f"{name} {' '.join(path)}={label}")


LANGUAGE_CASES = list(_language_cases())


def test_every_languages_option_is_walked():
    commands = {c.id.split("=")[0] for c in LANGUAGE_CASES}
    assert {"mvlsib-eval run", "mvlsib-eval plan", "mvlsib-eval batch prepare", "mvlsib-build export",
            "mvlsib-build ingest", "mvlsib-build build"} <= commands, commands  # fmt: skip


@pytest.mark.parametrize("cli, path, value", LANGUAGE_CASES)
def test_a_language_that_is_not_a_code_stops_at_the_command_line(cli, path, value, tmp_path, monkeypatch):
    """A language names a folder of the release: a path (eng_Latn/, ../x) would read outside it."""
    monkeypatch.chdir(tmp_path)
    line = refused(CliRunner().invoke(cli, [*path, "--languages", value]), "--languages")
    assert "language code" in line and "\x1b" not in line
    assert list(tmp_path.iterdir()) == []


BAD_TEXTS = {
    "empty": "",
    "blank": "   ",
    "line-break": "a\nb",
    "escape": "x\x1b]8;;http://evil/\x1b\\y",
    "carriage-return": "x\rwritten-over",
    "bidi": "abc\u202edcba",
    "line-separator": "a\u2028b",
    "huge": "m" * (params.MAX_TEXT_CHARS + 1),
}


def _text_cases():
    for cli, name in ((build_cli, "mvlsib-build"), (eval_cli, "mvlsib-eval")):
        for path, cmd in _commands(cli, ()):
            for param in cmd.params:
                if isinstance(param.type, params.Text) and isinstance(param, click.Option):
                    flag = param.opts[0]
                    for label, value in BAD_TEXTS.items():
                        yield pytest.param(cli, path, flag, value, id=f"{name} {' '.join(path)} {flag}={label}")


TEXT_CASES = list(_text_cases())


def test_the_text_cases_cover_names_models_and_revisions():
    ids = {c.id.rsplit("=", 1)[0] for c in TEXT_CASES}
    for want in ("mvlsib-eval run --model", "mvlsib-eval run --device", "mvlsib-eval report --name",
                 "mvlsib-build publish --tag", "mvlsib-build images add --author", "mvlsib-eval plan --release",
                 "mvlsib-build verify-images --model", "mvlsib-eval run --data-revision"):  # fmt: skip
        assert want in ids


@pytest.mark.parametrize("cli, path, flag, value", TEXT_CASES)
def test_a_text_that_is_not_one_bounded_line_stops_at_the_command_line(cli, path, flag, value, tmp_path, monkeypatch):
    """A blank model or tag, a name that rewrites the terminal line or reorders it, a megabyte: refused
    before any work, naming the option, in one line that carries no control of its own."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*path, flag, value])
    refused(result, flag)
    assert len(result.output) < 1_000, f"{len(result.output):,} characters"
    assert not any(ch in result.output for ch in "\x1b\r\u202e\u2028"), repr(result.output)
    assert list(tmp_path.iterdir()) == []


def test_a_text_source_argument_is_one_bounded_line(tmp_path):
    for value in BAD_TEXTS.values():
        refused(CliRunner().invoke(build_cli, ["images", "add", value, "--pool", str(tmp_path / "p"),
                                               "--topic", "sports", "--license", "CC0-1.0"]))  # fmt: skip
        assert not (tmp_path / "p").exists()


ENV_BAD_VALUES = {"nan": "nan", "inf": "inf", "1e400": "1e400", "1e18": "1e18", "-1": "-1", "text": "ten",
                  "digits": "9" * 5000, "blank-inside": "1 2"}  # fmt: skip


@pytest.mark.parametrize("label", ENV_BAD_VALUES)
@pytest.mark.parametrize("name", sorted(params.ENV_NUMBERS))
def test_every_environment_number_is_bounded(name, label):
    """Each number the toolkit reads from the environment, given what Python parses but nothing can use:
    one line naming the variable (never a traceback or an overflow deep inside a timer)."""
    from mvlsib.errors import MvlsibError

    with pytest.raises(MvlsibError) as caught:
        params.env_number(name, {name: ENV_BAD_VALUES[label]})
    message = str(caught.value)
    assert name in message and "\n" not in message and len(message) < 300, message


@pytest.mark.parametrize("name", sorted(params.ENV_NUMBERS))
def test_an_empty_or_unset_environment_number_is_its_default(name):
    assert params.env_number(name, {}) is None
    assert params.env_number(name, {name: ""}) is None
    low = params.ENV_NUMBERS[name][0].min
    assert params.env_number(name, {name: str(low)}) == low


@pytest.mark.parametrize("label", ENV_BAD_VALUES)
def test_a_bad_hub_timeout_is_one_line_on_a_hub_command(label, tmp_path, monkeypatch):
    """The command that waits on the Hub (``ingest --sib ORG/NAME``) refuses the deadline before any
    request: a 1e18-second deadline once overflowed the timer thread and the request waited forever."""
    monkeypatch.setenv("MVLSIB_HUB_TIMEOUT", ENV_BAD_VALUES[label])
    argv = ["ingest", "--sib", "org/sib", "--hub-endpoint", "http://127.0.0.1:9", "--workdir", str(tmp_path / "w")]
    refused(CliRunner().invoke(build_cli, [*argv, "--no-progress"]), "MVLSIB_HUB_TIMEOUT")
    assert not (tmp_path / "w").exists()
