"""Every numeric and list-valued option through the bounded click types of ``mvlsib.params``, enforced.

Both command trees (``mvlsib-build``, ``mvlsib-eval``) are walked as click built them, so options
added by shared decorators and the backends' option tables are seen as the user sees them: a number
must be ``params.Int`` (both bounds) or ``params.Finite`` (bounded, finite); a comma-separated list
a ``params.CommaList`` (split and de-duplicated once); a repeated option or a variadic argument must
have a ``params.distinct`` callback (or ``params.paired``: a value per run, where a repeat is its own);
free text must be ``params.Text`` (or a narrower type: a URL, a repo id, a choice, a path).
"""

from __future__ import annotations

import re

import click
import pytest

from mvlsib import params
from mvlsib.cli import build_cli, eval_cli


def _commands(cmd: click.Command, path: tuple[str, ...]):
    if isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            yield from _commands(sub, (*path, name))
    else:
        yield path, cmd


COMMANDS = [*_commands(build_cli, ("mvlsib-build",)), *_commands(eval_cli, ("mvlsib-eval",))]
PARAMS = [(" ".join(path), p) for path, cmd in COMMANDS for p in cmd.params]
COMMA = re.compile(r"\bcomma-separated\b", re.IGNORECASE)


def _id(case) -> str:
    where, param = case
    return f"{where} {param.opts[0] if param.opts else param.name}"


def test_the_walk_sees_both_trees():
    names = {where for where, _ in PARAMS}
    assert "mvlsib-eval plan" in names and "mvlsib-build export" in names and "mvlsib-build images check" in names
    assert len(COMMANDS) >= 20


@pytest.mark.parametrize("case", PARAMS, ids=_id)
def test_every_number_is_bounded(case):
    where, param = case
    kind = param.type
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        assert isinstance(kind, (params.Int, params.Finite)), (
            f"{where} {param.opts}: {kind!r} takes any number (nan, inf, 1e-320, 10**9); "
            "give it params.Int(min, max) or params.Finite(min, max)"
        )
        assert kind.min is not None and kind.max is not None, f"{where} {param.opts}: both bounds"
    if isinstance(kind, params.CommaList) and kind.item is not None:
        from mvlsib.cli.options import LanguageCodeType

        assert isinstance(
            kind.item, (params.Int, params.Finite, click.types.StringParamType, click.Choice, LanguageCodeType)
        )


@pytest.mark.parametrize("case", PARAMS, ids=_id)
def test_every_list_is_deduplicated(case):
    where, param = case
    if param.multiple or param.nargs == -1:
        assert getattr(param.callback, "distinct", False), (
            f"{where} {param.opts}: repeated values are neither refused nor dropped; "
            "give it callback=params.distinct(...)"
        )
    if isinstance(param, click.Option) and COMMA.search(param.help or ""):
        assert isinstance(param.type, params.CommaList), (
            f"{where} {param.opts}: a comma-separated list split by hand; give it type=params.CommaList(...)"
        )


@pytest.mark.parametrize("case", PARAMS, ids=_id)
def test_every_text_is_one_bounded_line(case):
    """click's plain string takes '', a line break, an escape sequence or a megabyte, all shown later."""
    where, param = case
    assert type(param.type) is not click.types.StringParamType, (
        f"{where} {param.opts}: any text is taken; give it type=params.TEXT (or a narrower type)"
    )
    if isinstance(param.type, params.CommaList) and isinstance(param.type.item, click.types.StringParamType):
        assert type(param.type.item) is not click.types.StringParamType, f"{where} {param.opts}: item=params.TEXT"


@pytest.mark.parametrize("case", PARAMS, ids=_id)
def test_every_box_is_a_box(case):
    """A WIDTHxHEIGHT value parsed in the command body is refused without naming its option."""
    where, param = case
    if isinstance(param, click.Option) and "WIDTHxHEIGHT" in (param.help or ""):
        assert isinstance(param.type, params.Box), f"{where} {param.opts}: give it type=params.Box(...)"


def test_no_option_value_is_refused_in_a_command_body():
    """``click.BadParameter`` raised without its parameter says "Invalid value" and never which option:
    a value is checked by its click type (``mvlsib.params``), where click names the option."""
    import ast

    from support import REPO

    bad = []
    for path in sorted((REPO / "src" / "mvlsib" / "cli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", getattr(node.func, "id", "")) == "BadParameter"
            ):
                named = len(node.args) >= 3 or any(k.arg in ("param", "param_hint") for k in node.keywords)
                if not named:
                    bad.append(f"{path.name}:{node.lineno}")
    assert not bad, f"BadParameter without the option it is about: {bad}"
