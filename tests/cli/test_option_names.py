"""One name, one meaning, one help text per option, in every command of both CLIs.

The commands are walked from the click groups (a new command is covered without editing this
file). The rules: ``--release`` is a release (``--data`` only as a hidden old spelling),
``--data-revision`` / ``--model-revision`` pin the dataset / the model (no visible ``--revision``),
every command that draws progress bars has ``--no-progress``, ``--json`` always takes a FILE, and
the shared options (``mvlsib.cli.options``) are declared there once and keep its help text.
Old spellings still parse, to the same values as the new ones (``OLD_SPELLINGS``).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click
import pytest

from mvlsib.cli import build_cli, eval_cli
from mvlsib.cli.options import SHARED_HELP, SharedOption

SRC = Path(__file__).resolve().parents[2] / "src" / "mvlsib"

# The visible spelling of each shared option -> its key in SHARED_HELP.
SHARED_NAMES = {
    "--out": "out",
    "--progress": "progress",
    "--pool": "pool",
    "--release": "release",
    "--data-revision": "data_revision",
    "--model-revision": "model_revision",
    "--json": "json_out",
}
# Spellings no command shows any more (each still parses where it was used).
RETIRED = ("--data", "--revision", "--json-out", "--dataset")
# The commands that draw progress bars: each must offer --no-progress (the signature check below
# catches a new one that takes ``progress``; this list catches losing the option).
DRAW_PROGRESS = {
    "mvlsib-build ingest",
    "mvlsib-build sample",
    "mvlsib-build build",
    "mvlsib-build publish",
    "mvlsib-build export",
    "mvlsib-build verify-images",
    "mvlsib-build images check",
    "mvlsib-build images gallery",
    "mvlsib-build images import-release",
    "mvlsib-eval run",
    "mvlsib-eval batch prepare",
    "mvlsib-eval batch collect",
}


def _walk(group: click.Group, prefix: str):
    for name, cmd in sorted(group.commands.items()):
        path = f"{prefix} {name}"
        if isinstance(cmd, click.Group):
            yield from _walk(cmd, path)
        else:
            yield path, cmd


COMMANDS = dict([*_walk(build_cli, "mvlsib-build"), *_walk(eval_cli, "mvlsib-eval")])


def _visible(opt: click.Option) -> list[str]:
    old = getattr(opt, "old", ())
    return [o for o in (*opt.opts, *opt.secondary_opts) if o not in old]


def _options(cmd: click.Command) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option)]


def _help(path: str, cmd: click.Command) -> str:
    with click.Context(cmd, info_name=path) as ctx:
        return cmd.get_help(ctx)


def test_the_walk_finds_both_clis():
    assert {"mvlsib-build build", "mvlsib-build images check", "mvlsib-eval run", "mvlsib-eval batch prepare"} <= set(
        COMMANDS
    )
    assert DRAW_PROGRESS <= set(COMMANDS)


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_no_retired_spelling_is_shown(path):
    cmd = COMMANDS[path]
    shown = {o for opt in _options(cmd) for o in _visible(opt)}
    assert not shown & set(RETIRED), f"{path} shows {sorted(shown & set(RETIRED))}"
    text = _help(path, cmd)
    for spelling in RETIRED:
        # Examples in a docstring count too: --help must not teach an old name.
        assert not re.search(re.escape(spelling) + r"(?![\w-])", text), f"{path} --help mentions {spelling}"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_progress_means_no_progress(path):
    cmd = COMMANDS[path]
    takes = "progress" in inspect.signature(cmd.callback).parameters or any(p.name == "progress" for p in cmd.params)
    has = any("--no-progress" in opt.secondary_opts for opt in _options(cmd))
    if takes or path in DRAW_PROGRESS:
        assert has, f"{path} draws progress bars but has no --no-progress"
    if has:  # the command receives it as ``progress`` (passed on to the library's ``progress=``)
        assert any(p.name == "progress" for p in cmd.params), f"{path}: --no-progress is not named progress"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_json_takes_a_file(path):
    for opt in _options(COMMANDS[path]):
        if "--json" in opt.opts:
            assert not opt.is_flag, f"{path}: --json is a flag"
            assert isinstance(opt.type, click.Path) and not opt.type.dir_okay, f"{path}: --json is not a FILE"
            assert opt.metavar == "FILE"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_shared_options_are_the_shared_definitions(path):
    for opt in _options(COMMANDS[path]):
        for spelling in _visible(opt):
            key = SHARED_NAMES.get(spelling)
            if key is None:
                continue
            assert isinstance(opt, SharedOption) and opt.shared == key, (
                f"{path} {spelling} is declared by the command, not by mvlsib.cli.options"
            )
            assert (opt.help or "").startswith(SHARED_HELP[key]), f"{path} {spelling}: help is not the shared one"
            assert opt.help, f"{path} {spelling} has no help"


def test_shared_options_are_declared_once():
    """The source holds each shared option's declaration in options.py only."""
    names = "|".join(re.escape(s) for s in SHARED_NAMES)
    decl = re.compile(r"""click\.option\(\s*["'](""" + names + r")\b")
    found = []
    for py in SRC.rglob("*.py"):
        if py.name == "options.py" and py.parent.name == "cli":
            continue
        found += [f"{py.relative_to(SRC)}: {m.group(1)}" for m in decl.finditer(py.read_text(encoding="utf-8"))]
    assert not found, "declare these with mvlsib.cli.options: " + ", ".join(found)


# (command, the arguments every parse needs, old spelling, new spelling). ``{dir}`` is an existing folder.
OLD_SPELLINGS = [
    ("mvlsib-eval run", ["--model", "m", "--out", "o"], ["--data", "rel"], ["--release", "rel"]),
    ("mvlsib-eval run", ["--model", "m", "--out", "o"], ["--revision", "r1"], ["--model-revision", "r1"]),
    ("mvlsib-eval batch prepare", ["--model", "m", "--out", "o"], ["--data", "org/rel"], ["--release", "org/rel"]),
    ("mvlsib-eval plan", ["--gpus", "2"], ["--data", "rel"], ["--release", "rel"]),
    ("mvlsib-eval report", ["{dir}", "--out", "o"], ["--data", "rel"], ["--release", "rel"]),
    ("mvlsib-eval items", ["{dir}", "--out", "o"], ["--data", "rel"], ["--release", "rel"]),
    ("mvlsib-eval hub-results", ["{dir}", "--out", "o"], ["--dataset", "a/b"], ["--release", "a/b"]),
    (
        "mvlsib-eval hub-results",
        ["{dir}", "--out", "o", "--release", "a/b"],
        ["--revision", "abc"],
        ["--data-revision", "abc"],
    ),
    ("mvlsib-build ingest", [], ["--revision", "v2"], ["--data-revision", "v2"]),
    ("mvlsib-build build", ["--sib", "s", "--out", "o"], ["--revision", "v2"], ["--data-revision", "v2"]),
    (
        "mvlsib-build export",
        ["lmms-eval", "--out", "o", "--release", "r"],
        ["--revision", "v2"],
        ["--data-revision", "v2"],
    ),
    ("mvlsib-build export", ["lmms-eval", "--out", "o"], ["--data", "r"], ["--release", "r"]),
    ("mvlsib-build publish", ["--release", "{dir}"], ["--revision", "dev"], ["--branch", "dev"]),
    ("mvlsib-build publish", [], ["--data", "{dir}"], ["--release", "{dir}"]),
    ("mvlsib-build verify-images", ["--model", "m"], ["--revision", "r1"], ["--model-revision", "r1"]),
    ("mvlsib-build images check", [], ["--json-out", "r.json"], ["--json", "r.json"]),
    ("mvlsib-build images check", [], ["--json"], ["--json", "-"]),
]


def _params(path: str, args: list[str]) -> dict:
    cmd = COMMANDS[path]
    with cmd.make_context(path, list(args)) as ctx:
        return dict(ctx.params)


@pytest.mark.parametrize(
    ("path", "base", "old", "new"), OLD_SPELLINGS, ids=[f"{c[0]} {c[2][0]}" for c in OLD_SPELLINGS]
)
def test_old_spelling_parses_like_the_new(path, base, old, new, tmp_path):
    fill = [a.replace("{dir}", str(tmp_path)) for a in base]
    old = [a.replace("{dir}", str(tmp_path)) for a in old]
    new = [a.replace("{dir}", str(tmp_path)) for a in new]
    with_old, with_new = _params(path, fill + old), _params(path, fill + new)
    assert with_old == with_new
    option = next(p for p in COMMANDS[path].params if new[0] in p.opts)
    assert with_new[option.name] not in (None, option.default)  # the option was really given


def test_every_hidden_spelling_is_in_the_table():
    """Each old spelling a command keeps is parsed by the table above."""
    tested = {(path, old[0]) for path, _, old, _ in OLD_SPELLINGS}
    kept = {
        (path, spelling)
        for path, cmd in COMMANDS.items()
        for opt in _options(cmd)
        for spelling in getattr(opt, "old", ())
        # --data is the old --release everywhere; the table checks it on the commands that had it.
        if spelling != "--data"
    }
    assert kept <= tested, f"untested old spellings: {sorted(kept - tested)}"


def test_old_spelling_is_not_in_error_messages():
    with pytest.raises(click.MissingParameter) as info:
        _params("mvlsib-build export", ["lmms-eval", "--out", "o"])
    assert "--release" in info.value.format_message() and "--data" not in info.value.format_message()


def test_json_dash_is_refused_where_json_goes_to_a_file_only(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from mvlsib.cli import build_cli

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(build_cli, ["validate", "--workdir", str(tmp_path), "--json", "-"])
    assert result.exit_code == 2 and "--json FILE" in result.output
    assert list(tmp_path.iterdir()) == []
