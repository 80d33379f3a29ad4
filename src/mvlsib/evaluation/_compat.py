"""The only door from ``mvlsib.evaluation`` to the rest of the toolkit.

Every release bundles this package (see ``release/bundle.py``) inside a package of another name
that mirrors ``mvlsib``'s layout: the leaf modules the evaluator uses sit at the same places
beside it, so the same relative imports reach them, installed or bundled. What differs is
chosen here: the release format's loader (the toolkit's, or the release's own ``mvl_sib.py``)
and the install line named for a missing module (the toolkit's extra, or what the release's
evaluate.py needs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import __version__ as TOOLKIT_VERSION
from .. import boundary, csvio, escape, httpio, hubio, jsonio, locks, oserrors, params, progress, readers, terminal
from ..atomic import (
    LEDGER,
    atomic_open,
    folder_files,
    fresh_stage,
    output_file,
    owned_files,
    owned_folder,
    refuse_theirs,
    replacing,
    sha256_file,
    staged_folder,
)
from ..csvio import read_dicts as read_csv
from ..errors import MvlsibError
from ..versions import library_versions

# Bundled copies live in a package with another name; never reach for `mvlsib` there,
# even when some other version of it happens to be installed.
BUNDLED = not __name__.startswith("mvlsib.evaluation")

__all__ = [
    "BUNDLED",
    "TOOLKIT_VERSION",
    "atomic_open",
    "csvio",
    "LEDGER",
    "owned_folder",
    "owned_files",
    "output_file",
    "refuse_theirs",
    "staged_folder",
    "fresh_stage",
    "replacing",
    "folder_files",
    "sha256_file",
    "read_csv",
    "MvlsibError",
    "missing_dependency_message",
    "library_versions",
    "TOPICS",
    "TASK_TABLE",
    "TASKS",
    "TASK_BY_NAME",
    "K_VALUES",
    "CROSS_MODAL",
    "LOADER",
    "boundary",
    "escape",
    "httpio",
    "hubio",
    "jsonio",
    "locks",
    "oserrors",
    "params",
    "progress",
    "readers",
    "terminal",
]


# Type checkers read the installed branch only (the bundled one imports modules that exist only in a release).
if TYPE_CHECKING or not BUNDLED:
    from ..errors import missing_dependency_message
    from ..release_format import mvl_sib as _loader_module
else:  # pragma: no cover - exercised through the bundled evaluate.py subprocess test
    # evaluate.py puts its own folder (the release, with its mvl_sib.py) on sys.path first.
    import mvl_sib as _loader_module  # type: ignore[import-not-found]

    from ..errors import missing_dependency_message as _missing_dependency_message
    from .requirements import INSTALL as _INSTALL

    def missing_dependency_message(exc: BaseException) -> str | None:
        """The one line for a missing module, naming what the release's evaluate.py needs (not the toolkit)."""
        return _missing_dependency_message(exc, _INSTALL)


# The task table, read from the release format's reader (the toolkit's copy, or the release's own).
TASK_TABLE = _loader_module.TASK_TABLE
TASKS = _loader_module.TASKS
TASK_BY_NAME = _loader_module.TASK_BY_NAME
K_VALUES = _loader_module.K_VALUES
CROSS_MODAL = _loader_module.CROSS_MODAL
TOPICS = _loader_module.TOPICS


# The MVL-SIB loader module (``mvl_sib``): the toolkit's, or in a release the release's own copy.
LOADER = _loader_module
