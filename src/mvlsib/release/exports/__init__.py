"""Other formats a release can be exported to (one module per format; see docs/contributing/release_artifact.md).

``export(fmt, ...)`` dispatches to the format's module; ``common`` holds what they share.
"""

from __future__ import annotations

import importlib
import os

from mvlsib import hubio
from mvlsib.errors import MvlsibError


def export(fmt: str, release, out, **kwargs):
    """Export ``release`` to ``out`` in format ``fmt`` (a key of ``FORMATS``)."""
    if fmt not in FORMATS:
        raise MvlsibError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if kwargs.get("limit") is not None and fmt not in LIMITED:
        raise MvlsibError(
            f"--limit applies to {', '.join(LIMITED)} only; {fmt} exports every instance (its harness has its own --limit)"
        )
    kwargs = {k: v for k, v in kwargs.items() if k != "limit" or fmt in LIMITED}
    module, function = FORMATS[fmt]
    # A Hub repo id: every request bounded, every answer checked, an unreachable Hub one line.
    with hubio.session_for(os.fspath(release), "--release"):
        return getattr(importlib.import_module(f"{__name__}.{module}"), function)(release, out, **kwargs)


# The export formats, by the name the command takes: (module here, its export function). Imported
# when used, so the command line (and its --help) loads no pyarrow, PIL or jsonschema for them.
FORMATS: dict[str, tuple[str, str]] = {
    "lmms-eval": ("lmms_eval", "export_lmms_eval"),
    "mteb": ("mteb", "export_mteb"),
    "vlmevalkit": ("vlmevalkit", "export_vlmevalkit"),
    "inspect": ("inspect_eval", "export_inspect"),
}
# Formats whose export takes --limit (the rows `mvlsib-eval run --limit` takes).
LIMITED = ("inspect",)
