"""What every command that runs models or reads user input shares: the backend options
(``--backend`` and each registered backend's own) and one way of reporting bad input."""

from __future__ import annotations

import click

from ._compat import boundary, missing_dependency_message
from .backends import BACKENDS, backend_options, backends_help
from .options import model_revision_option


class BoundaryGroup(boundary.BoundaryGroup):
    """The evaluator's group: the toolkit's boundary, naming the evaluator's own install line for a missing module."""

    explain_missing = staticmethod(missing_dependency_message)


def friendly_errors(fn):
    """The error boundary around one function (the groups already apply it to every command)."""
    return boundary.friendly_errors(fn, missing_dependency_message)


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
    for name, opt in backend_options():
        if opt.flag == "revision":  # the model's revision: one name wherever a model is run
            decorators.append(model_revision_option(opt.param, f"({name} backend)."))
        elif opt.kind is bool:
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
