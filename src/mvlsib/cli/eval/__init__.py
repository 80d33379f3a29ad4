"""The ``mvlsib-eval`` commands, one module per group of commands: ``run`` (run, merge), ``scale``
(batch prepare|collect, plan), ``analysis`` (report, compare, items, correlate) and ``hub``
(hub-results). The toolkit mounts them on its ``mvlsib-eval`` group (``mvlsib.cli``); every
release's evaluate.py runs the very same modules (``release/bundle.py`` ships this package, the
shared options and the evaluator), through ``standalone_main``. The work is imported inside each
command, so ``--help`` loads click and the evaluator's tables only (no pyarrow, numpy or torch).
"""

from __future__ import annotations

import sys

import click

from .analysis import compare_command, correlate_command, items_command, report_command
from .boundary import BoundaryGroup
from .hub import hub_results_command
from .run import merge_command, run_command
from .scale import batch_group, plan_command

COMMANDS = (
    run_command,
    batch_group,
    plan_command,
    merge_command,
    report_command,
    compare_command,
    items_command,
    correlate_command,
    hub_results_command,
)


def standalone_main(argv=None, prog_name="evaluate.py") -> None:
    """Entry point of a release's evaluate.py: ``run`` is the default command."""

    @click.group(cls=BoundaryGroup, context_settings={"help_option_names": ["-h", "--help"]})
    def group():
        """MVL-SIB reference evaluator (bundled). `python evaluate.py --release . --model M --out RUN`
        runs the evaluation; `merge` and `report` as in mvlsib-eval."""

    for cmd in COMMANDS:
        group.add_command(cmd)
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or (args[0] not in {c.name for c in COMMANDS} and args[0] not in ("-h", "--help")):
        args = ["run", *args]
    group.main(args=args, prog_name=prog_name)
