"""Other formats a release can be exported to (one module per format; see docs/contributing/release_artifact.md).

``export(fmt, ...)`` dispatches to the format's module; ``common`` holds what they share.
"""

from __future__ import annotations

from collections.abc import Callable

from mvlsib.errors import MvlsibError
from mvlsib.release.exports.lmms_eval import export_lmms_eval
from mvlsib.release.exports.mteb import export_mteb
from mvlsib.release.exports.vlmevalkit import export_vlmevalkit


def export(fmt: str, release, out, **kwargs):
    """Export ``release`` to ``out`` in format ``fmt`` (a key of ``FORMATS``)."""
    if fmt not in FORMATS:
        raise MvlsibError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return FORMATS[fmt](release, out, **kwargs)


# The export formats, by the name the command takes.
FORMATS: dict[str, Callable] = {"lmms-eval": export_lmms_eval, "mteb": export_mteb, "vlmevalkit": export_vlmevalkit}
