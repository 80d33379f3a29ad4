"""Every text a user or a file can give reaches the terminal visibly: each parameter of each command
of both CLIs, in turn, gets a value holding an OSC title sequence, a CSI, C1 controls, a bidi
override, a carriage return and a line break each followed by a forged line. Whatever the command answers, stdout and stderr
hold no raw control character (line breaks aside) and no line the value forged.

The parameters are found by walking the click commands, so a new command or option is covered the
day it is added; the values come from one generator, one id per command x parameter x value.
"""

from __future__ import annotations

import os

import click
import pytest
from click.testing import CliRunner

from mvlsib import terminal
from mvlsib.cli import build_cli, eval_cli

FORGED = "FORGED complete"
# The pieces of a hostile value; each case puts its own twist on them.
VALUES = {
    # everything at once: the value reaches the output through whichever path the command takes
    "all-pieces": f"x\x1b]0;pwned\x07\x1b[2J\u202ey\x9b31m\x85z\r{FORGED}\n{FORGED}",
    # a plain line break only: the way a forged line most often gets in
    "forged-line": f"x\n{FORGED}",
}


def _leaves(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, cmd in sorted(group.commands.items()):
        if isinstance(cmd, click.Group):
            yield from _leaves(cmd, (*prefix, name))
        else:
            yield (*prefix, name), cmd


def _takes_text(param: click.Parameter) -> bool:
    if isinstance(param, click.Option) and (param.is_flag or param.count or param.hidden):
        return False
    return not isinstance(param.type, (click.Choice, click.types._NumberParamTypeBase, click.types.BoolParamType))


def _cases():
    for cli_name, cli in (("mvlsib-build", build_cli), ("mvlsib-eval", eval_cli)):
        for path, cmd in _leaves(cli):
            for param in cmd.params:
                if _takes_text(param):
                    for kind in VALUES:
                        yield pytest.param(
                            cli, path, cmd, param, kind, id=f"{cli_name} {' '.join(path)} {param.name} {kind}"
                        )


def _filler(param: click.Parameter) -> str:
    """A harmless value for another required parameter."""
    return "eng_Latn" if "language" in (param.name or "") else "placeholder"


def _args(cmd: click.Command, target: click.Parameter, value: str) -> list[str]:
    args: list[str] = []
    positional: list[str] = []
    for param in cmd.params:
        if param is target:
            given = value
        elif param.required:
            given = _filler(param)
        else:
            continue
        if isinstance(param, click.Argument):
            positional += [given] * (1 if param.nargs in (1, -1) else param.nargs)
        else:
            args += [param.opts[0], given]
    return [*args, *positional]


@pytest.mark.parametrize(("cli", "path", "cmd", "param", "kind"), list(_cases()))
def test_no_value_reaches_the_terminal_raw(cli, path, cmd, param, kind, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"HF_HUB_OFFLINE": "1", "NO_COLOR": "1", "OPENAI_API_KEY": ""}
    result = CliRunner().invoke(cli, [*path, *_args(cmd, param, VALUES[kind])], env=env)
    output = result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert terminal.is_visible(output), output
    assert not any(line.startswith(FORGED) for line in output.splitlines()), output


def test_every_command_has_cases():
    covered = {(cli.name, p) for cli, p, *_ in (c.values for c in _cases())}
    assert len(covered) >= 20


def test_the_check_sees_a_raw_control():
    assert not terminal.is_visible("a\x1b[2Jb") and not terminal.is_visible("a\rb") and terminal.is_visible("a\nb")
    assert os.linesep == "\n"
