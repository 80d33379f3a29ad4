"""What every command that runs models or reads user input shares: the backend options
(``--backend`` and each registered backend's own) and one way of reporting bad input."""

from __future__ import annotations

import errno
import functools
import os

import click

from ._compat import MvlsibError
from .backends import BACKENDS, backend_options, backends_help


class InputError(click.ClickException):
    """Bad input the user can fix: message on stderr, exit status 2 (as mvlsib-build)."""

    exit_code = 2


def friendly_errors(fn):
    """Bad input the user can fix -> one clean message and exit status 2, not a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MvlsibError as exc:
            raise InputError(str(exc)) from exc
        except OSError as exc:
            # The environment, not the code: a full disk, a quota, a read-only or too-small file system.
            if exc.errno not in _ENVIRONMENT_ERRNOS:
                raise
            where = f" writing {exc.filename}" if exc.filename else ""
            advice = (
                "the file system or a size limit (ulimit -f) refuses a file this large"
                if exc.errno == errno.EFBIG
                else "free space or choose another folder"
            )
            raise InputError(
                f"{os.strerror(exc.errno)}{where}: {advice}, then re-run; outputs are written "
                "atomically, so nothing half-written was kept"
            ) from None

    return wrapper


_ENVIRONMENT_ERRNOS = frozenset({errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS})


def with_backend_options(fn):
    """``--backend`` and every registered backend's own options (one set for every command that runs models).

    The command receives ``backend`` and each option under its constructor name; ``options_for``
    picks the chosen backend's.
    """
    decorators = [
        click.option(
            "--backend",
            type=click.Choice(list(BACKENDS)),
            default=BACKENDS[0],
            show_default=True,
            help=backends_help("DESCRIPTION"),
        )
    ]
    for _, opt in backend_options():
        if opt.kind is bool:
            decorators.append(
                click.option(f"--{opt.flag}", opt.param, is_flag=True, default=opt.default, help=opt.help)
            )
        else:
            kind = click.Choice(list(opt.choices)) if opt.choices else opt.kind
            decorators.append(
                click.option(
                    f"--{opt.flag}",
                    opt.param,
                    type=kind,
                    default=opt.default,
                    show_default=opt.default is not None,
                    help=opt.help,
                )
            )
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return fn
