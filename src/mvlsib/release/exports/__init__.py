"""Other formats a release can be exported to (one module per format; see docs/contributing/release_artifact.md).

``export(fmt, ...)`` dispatches to the format's module; ``common`` holds what they share.
"""

from __future__ import annotations

from collections.abc import Callable

from mvlsib.errors import MvlsibError
from mvlsib.release.exports.inspect_eval import export_inspect
from mvlsib.release.exports.lmms_eval import export_lmms_eval
from mvlsib.release.exports.mteb import export_mteb
from mvlsib.release.exports.vlmevalkit import export_vlmevalkit


def export(fmt: str, release, out, **kwargs):
    """Export ``release`` to ``out`` in format ``fmt`` (a key of ``FORMATS``)."""
    if fmt not in FORMATS:
        raise MvlsibError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if kwargs.get("limit") is not None and fmt not in LIMITED:
        raise MvlsibError(
            f"--limit applies to {', '.join(LIMITED)} only; {fmt} exports every instance (its harness has its own --limit)"
        )
    kwargs = {k: v for k, v in kwargs.items() if k != "limit" or fmt in LIMITED}
    return FORMATS[fmt](release, out, **kwargs)


# The export formats, by the name the command takes.
FORMATS: dict[str, Callable] = {
    "lmms-eval": export_lmms_eval,
    "mteb": export_mteb,
    "vlmevalkit": export_vlmevalkit,
    "inspect": export_inspect,
}
# Formats whose export takes --limit (the rows `mvlsib-eval run --limit` takes).
LIMITED = ("inspect",)
