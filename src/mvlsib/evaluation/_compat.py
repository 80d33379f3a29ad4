"""The only door from ``mvlsib.evaluation`` to the rest of the toolkit.

Every release bundles this package (see ``bundle.py``) under another name, beside the
release's own ``mvl_sib.py`` loader and without the ``mvlsib`` package. Everything the
evaluator needs from outside itself therefore comes through here: installed, it is the
toolkit's own object; bundled, a minimal equivalent (checked equal by the tests).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Iterator

# Bundled copies live in a package with another name; never reach for `mvlsib` there,
# even when some other version of it happens to be installed.
BUNDLED = not __name__.startswith("mvlsib.evaluation")

_FALLBACK_TOPICS = (
    "entertainment",
    "geography",
    "health",
    "politics",
    "science/technology",
    "sports",
    "travel",
)
_FALLBACK_VERSION = "0+bundled"

if not BUNDLED:
    from mvlsib import __version__ as TOOLKIT_VERSION
    from mvlsib.atomic import atomic_open
    from mvlsib.errors import MvlsibError
    from mvlsib.topics import TOPICS
else:  # pragma: no cover - exercised through the bundled evaluate.py subprocess test
    TOPICS = _FALLBACK_TOPICS
    try:  # written into the bundle by bundle.py
        from ._bundle_info import VERSION as TOOLKIT_VERSION
    except ImportError:
        TOOLKIT_VERSION = _FALLBACK_VERSION

    class MvlsibError(Exception):
        """A problem with the user's input or environment, stated so that they can fix it."""

    @contextlib.contextmanager
    def atomic_open(path, mode: str = "w", **kwargs) -> Iterator[IO]:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp's 0600 is not what a plain open() gives
        if "b" not in mode:
            kwargs.setdefault("encoding", "utf-8")
            kwargs.setdefault("newline", "\n")
        try:
            with open(tmp, mode, **kwargs) as fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


# Set by the bundled evaluate.py to the release's own mvl_sib module.
LOADER = None


def loader(data: str | os.PathLike[str] | None = None):
    """The MVL-SIB loader module (``mvl_sib``): the release's copy or the toolkit's."""
    global LOADER
    if LOADER is not None:
        return LOADER
    if not BUNDLED:
        from mvlsib.builder import mvl_sib

        LOADER = mvl_sib
        return LOADER
    candidate = Path(data or ".") / "mvl_sib.py"  # pragma: no cover - bundled path
    if candidate.is_file():
        spec = importlib.util.spec_from_file_location("mvl_sib", candidate)
        module = importlib.util.module_from_spec(spec)
        sys.modules["mvl_sib"] = module
        spec.loader.exec_module(module)
        LOADER = module
        return LOADER
    try:
        import mvl_sib  # type: ignore[import-not-found]
    except ImportError as exc:
        raise MvlsibError(
            f"cannot find the MVL-SIB loader: no mvl_sib.py in {candidate.parent} and none importable; "
            "run evaluate.py from a release folder or pass --data RELEASE_FOLDER"
        ) from exc
    LOADER = mvl_sib
    return LOADER
