"""`mvlsib-eval`: the evaluator's commands, mounted.

The commands live in ``mvlsib.evaluation.commands`` because each release's standalone
evaluate.py runs the very same code; that module imports only click at load time.
"""

from mvlsib.cli.groups import eval_cli
from mvlsib.evaluation.commands import COMMANDS

for _cmd in COMMANDS:
    eval_cli.add_command(_cmd)
