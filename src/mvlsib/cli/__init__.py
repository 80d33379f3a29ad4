"""Command-line entry points: a thin shell over the library.

Options are parsed here; all work happens in library functions, imported inside each
command so that ``--help`` stays fast (torch, transformers, datasets and pandas are never
imported just to print help). ``groups`` holds the two groups, ``options`` every option several
commands share (both CLIs); ``build/`` registers mvlsib-build's commands, one module per group, ``eval/``
holds mvlsib-eval's, mounted here (each release's evaluate.py runs them too, so ``eval`` and
``options`` import nothing of mvlsib-build's own commands).
"""

from mvlsib.cli import build  # noqa: F401 - registers mvlsib-build's commands
from mvlsib.cli.eval import COMMANDS as _EVAL_COMMANDS
from mvlsib.cli.groups import build_cli, eval_cli

for _cmd in _EVAL_COMMANDS:
    eval_cli.add_command(_cmd)

__all__ = ["build_cli", "eval_cli"]
