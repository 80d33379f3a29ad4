"""Other formats a release can be exported to (one module per format; see docs/contributing/release_artifact.md).

``export(fmt, ...)`` dispatches to the format's module; ``common`` holds what they share.
"""

from __future__ import annotations

from collections.abc import Callable

from mvlsib.errors import MvlsibError


def export(fmt: str, release, out, **kwargs):
    """Export ``release`` to ``out`` in format ``fmt`` (a key of ``FORMATS``)."""
    if fmt not in FORMATS:
        raise MvlsibError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return FORMATS[fmt](release, out, **kwargs)


def _lmms_eval(release, out, **kwargs):
    from mvlsib.release.exports.lmms_eval import export_lmms_eval

    return export_lmms_eval(release, out, **kwargs)


def _mteb(release, out, **kwargs):
    from mvlsib.release.exports.mteb import export_mteb

    return export_mteb(release, out, **kwargs)


def _vlmevalkit(release, out, **kwargs):
    from mvlsib.release.exports.vlmevalkit import export_vlmevalkit

    return export_vlmevalkit(release, out, **kwargs)


# The export formats, by the name the command takes.
FORMATS: dict[str, Callable] = {"lmms-eval": _lmms_eval, "mteb": _mteb, "vlmevalkit": _vlmevalkit}
