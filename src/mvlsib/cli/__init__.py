"""Command-line entry points: a thin shell over the library.

Options are parsed here; all work happens in library functions, imported inside each
command so that ``--help`` stays fast (torch, transformers, datasets and pandas are never
imported just to print help). ``groups`` holds the two groups and shared options; ``build``,
``images`` and ``eval`` register their commands on them.
"""

from mvlsib.cli import build, eval, images  # noqa: F401 - registers the commands
from mvlsib.cli.groups import build_cli, eval_cli

__all__ = ["build_cli", "eval_cli"]
