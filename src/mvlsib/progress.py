"""The one way a command draws a progress bar: on a terminal (or a notebook) only.

Every bar of the toolkit and of a release's evaluator comes from ``bar`` (tests/architecture
keeps ``tqdm`` out of every other module). A bar that is not asked for, or whose stream is not a
terminal (a CI log, a file, a pipe), draws nothing: redrawn lines would fill a log with cursor
movements. tqdm is imported when a bar is made, so a module that only may draw one stays light.
"""

from __future__ import annotations

import sys
from typing import Any


def tqdm_class() -> Any:
    """tqdm's bar for a terminal or a notebook, as ``tqdm.auto`` picks it, without the asyncio
    import ``tqdm.auto`` adds (12 ms on every build; no stage iterates asynchronously)."""
    import warnings

    from tqdm import TqdmExperimentalWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmExperimentalWarning)  # as tqdm.auto does
        from tqdm.autonotebook import tqdm
    return tqdm


def draws(enabled: bool, stream: Any = None) -> bool:
    """Whether a bar asked for (``enabled``) on ``stream`` (stderr by default) is drawn."""
    if not enabled:
        return False
    cls = tqdm_class()
    if cls.__module__.startswith("tqdm.notebook"):  # a notebook shows its widget, not the stream
        return True
    stream = sys.stderr if stream is None else stream
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def bar(iterable: Any = None, *, enabled: bool = True, file: Any = None, **kwargs: Any) -> Any:
    """A tqdm bar over ``iterable`` (or with ``total=``) that draws only where ``draws`` says."""
    stream = sys.stderr if file is None else file
    return tqdm_class()(iterable, file=stream, disable=not draws(enabled, stream), **kwargs)


def bar_class(enabled: bool) -> Any:
    """A tqdm class for libraries that make their own bars (``snapshot_download(tqdm_class=...)``)."""
    cls = tqdm_class()
    shown = draws(enabled)

    class Bar(cls):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = kwargs.get("disable", False) or not shown
            super().__init__(*args, **kwargs)

    return Bar
