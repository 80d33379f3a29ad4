"""Both command trees as click built them, and what the walks of the suite look for in them."""

from __future__ import annotations

import click

from mvlsib.cli import build_cli, eval_cli

# (command, option) -> why a file path that need not exist is not an output the command owns.
NOT_OUTPUTS = {
    ("mvlsib-build images check", "--hash-cache"): "a cache the user names; read and rewritten, never refused",
    ("mvlsib-build images gallery", "--hash-cache"): "a cache the user names; read and rewritten, never refused",
}


def commands(cmd: click.Command = None, path: tuple[str, ...] = ()):  # type: ignore[assignment]
    """(``mvlsib-build images check``, its command) for every command of both trees."""
    if cmd is None:
        yield from commands(build_cli, ("mvlsib-build",))
        yield from commands(eval_cli, ("mvlsib-eval",))
    elif isinstance(cmd, click.Group):
        for name, sub in sorted(cmd.commands.items()):
            yield from commands(sub, (*path, name))
    else:
        yield " ".join(path), cmd


def output_params() -> list[tuple[str, click.Parameter]]:
    """Every (command, parameter) whose value is a file the command may create: a path that need not
    exist and cannot be a folder (the hash caches of ``NOT_OUTPUTS`` included; callers skip them)."""
    found = []
    for where, cmd in commands():
        for p in cmd.params:
            t = p.type
            if isinstance(t, click.Path) and not t.exists and not t.dir_okay and t.file_okay:
                found.append((where, p))
    return found
