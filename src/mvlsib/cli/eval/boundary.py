"""The evaluator's error boundary: the toolkit's (the leaf ``boundary``), naming for a missing module
the install line of wherever the commands run (mvlsib-build's extra, or what a release's
evaluate.py needs)."""

from __future__ import annotations

from ... import boundary
from ...evaluation._compat import missing_dependency_message


class BoundaryGroup(boundary.BoundaryGroup):
    """The evaluator's group: the toolkit's boundary, naming the evaluator's own install line for a missing module."""

    explain_missing = staticmethod(missing_dependency_message)


def friendly_errors(fn):
    """The error boundary around one function (the groups already apply it to every command)."""
    return boundary.friendly_errors(fn, missing_dependency_message)
