"""The progress bar class of the build's stages."""

from __future__ import annotations


def tqdm_class():
    """tqdm's bar for a terminal or a notebook, as ``tqdm.auto`` picks it, without the asyncio
    import ``tqdm.auto`` adds (12 ms on every build; no stage iterates asynchronously)."""
    import warnings

    from tqdm import TqdmExperimentalWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmExperimentalWarning)  # as tqdm.auto does
        from tqdm.autonotebook import tqdm
    return tqdm
