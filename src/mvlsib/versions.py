"""Which versions of Python and the libraries are installed: recorded in manifests and run configs."""

from __future__ import annotations

import platform
from collections.abc import Iterable


def library_versions(dists: Iterable[str], missing: str | None = None) -> dict[str, str | None]:
    """``{"python": ..., dist: version}`` for each distribution name; ``missing`` where it is not installed."""
    from importlib import metadata  # here: 12 ms that every command would pay at startup

    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in dists:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = missing
    return out
