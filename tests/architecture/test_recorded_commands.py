"""A command line is recorded (a run's config.json, a batch's manifest, a lock file) only through
``httpio.public_argv``: a ``--base-url`` with ``user:password@`` or ``?api_key=``, or an
``--api-key VALUE``, never reaches a file that a pull request may upload. This test finds every
read of ``sys.argv`` in the package; each must be the argument of ``public_argv`` or parse the
command line (an entry point), never record it."""

from __future__ import annotations

import ast

import click
import pytest
from support import REPO, cli_tree

from mvlsib import httpio

SRC = REPO / "src" / "mvlsib"
# Functions that read sys.argv to parse it, not to record it.
PARSERS = {("cli/eval/__init__.py", "standalone_main")}


def _argv_reads(tree: ast.AST) -> list[tuple[int, str | None, bool]]:
    """(line, enclosing function, passed straight to public_argv) of every ``sys.argv``."""
    found = []

    def visit(node: ast.AST, function: str | None, recorded: bool) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Attribute) and node.attr == "argv" and getattr(node.value, "id", None) == "sys":
            found.append((node.lineno, function, recorded))
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for child in ast.iter_child_nodes(node):
                visit(child, function, callee == "public_argv" and child in node.args)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, function, False)

    visit(tree, None, False)
    return found


def test_sys_argv_is_recorded_only_through_public_argv():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for line, function, recorded in _argv_reads(ast.parse(path.read_text("utf-8"), str(path))):
            if not recorded and (rel, function) not in PARSERS:
                bad.append(f"{rel}:{line} ({function}): sys.argv not through httpio.public_argv")
    assert not bad, "\n".join(bad)


SECRETS = ("hunter2hunter2", "QSECRET77", "sk-abcdefgh12345678", "hf_abcdefghijkl")


@pytest.mark.parametrize(
    "argv",
    [
        ["/x/bin/mvlsib-eval", "run", "--base-url", "http://user:hunter2hunter2@h:8000/v1"],
        ["mvlsib-eval", "run", "--base-url=https://h/v1?api_key=QSECRET77&model=m"],
        ["mvlsib-eval", "run", "--api-key", "hunter2hunter2", "--model", "m"],
        ["mvlsib-eval", "run", "--api-key=hunter2hunter2"],
        ["mvlsib-eval", "hub-results", "--token", "hf_abcdefghijkl"],
        ["mvlsib-eval", "run", "--model", "sk-abcdefgh12345678"],
        ["mvlsib-build", "images", "add", "http://h/p.jpg?X-Amz-Signature=QSECRET77&w=1"],
    ],
)
def test_public_argv_keeps_the_command_and_drops_its_secrets(argv):
    public = httpio.public_argv(argv)
    assert len(public) == len(argv) and public[0] == argv[0].rsplit("/", 1)[-1]
    assert not any(s in word for s in SECRETS for word in public), public
    # what is not a secret stays as given
    for given, kept in zip(argv, public):
        if not any(s in given for s in SECRETS):
            assert kept == given.rsplit("/", 1)[-1] if given is argv[0] else kept == given


def _value_options() -> list[tuple[str, str]]:
    """(command, option) for every value-taking option of both trees."""
    return [
        (where, name)
        for where, cmd in cli_tree.commands()
        for p in cmd.params
        if isinstance(p, click.Option) and not p.is_flag
        for name in p.opts
        if name.startswith("--")
    ]


@pytest.mark.parametrize(("where", "option"), _value_options(), ids=lambda v: str(v))
def test_every_option_of_ours_keeps_its_value_in_the_record(where, option):
    """No option of ours takes a credential (keys and tokens come from the environment), so the
    record keeps every value as given (``--max-new-tokens 16`` says how the run was made), as two
    words or as ``--opt=value``; only the options of the list above, as a wrapper may pass them,
    are hidden."""
    value = "VALUE1234567"
    for argv in ([where.split()[0], option, value], [where.split()[0], f"{option}={value}"]):
        assert httpio.public_argv(argv)[1:] == argv[1:], (where, option)
