"""A test-only, never-called stand-in for transformers' video processors.

Why: in transformers 5 every processor that *can* take videos (Qwen2-VL, Qwen2.5-VL,
Qwen3-VL, InternVL, LLaVA-OneVision, ...) needs a video processor to be constructed, and
all video processors require torchvision, which cannot be installed here (its PyPI build
breaks the CPU torch). Without it ``AutoProcessor.from_pretrained`` fails even though MVL-SIB
never passes a video. Issue #10 allows "a test-only stand-in that is never called"; this is it.
The project code knows nothing of it (the family builders write processor files directly,
see ``mvlsib/testing/families/_processor_files.py``).

What it changes, only while torchvision is missing, and nothing else:

* ``AutoVideoProcessor.from_pretrained`` returns a ``NeverCalledVideoProcessor``;
* ``VideoProcessorMixin`` (the base class a processor checks its ``video_processor`` against)
  is made resolvable by name, as it is when torchvision is installed.

The stand-in raises ``AssertionError`` if anything tries to process a video with it.

Use: ``import fakes.video_processor`` installs it (so a CliRunner-invoked command in the same
process sees it); ``uninstall()`` undoes it; ``stand_in()`` is a context manager. For a
subprocess, run ``python -c "import fakes.video_processor, runpy; runpy.run_module('mvlsib', run_name='__main__')" ...``
with ``tests`` on PYTHONPATH.
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Iterator

import transformers.processing_utils as _processing
from transformers.utils import is_torchvision_available
from transformers.video_processing_utils import VideoProcessorMixin

# The submodule itself: the package-level name is a torchvision-requiring dummy.
_auto_video = importlib.import_module("transformers.models.auto.video_processing_auto")
_MISSING = object()
_saved: dict[str, object] = {}


class NeverCalledVideoProcessor(VideoProcessorMixin):
    """Satisfies the processor's type check; any attempt to use it fails loudly."""

    def __init__(self, *args, **kwargs):  # deliberately no super().__init__: it needs torchvision
        self.loaded_from = args[0] if args else None

    def _refuse(self, *args, **kwargs):
        raise AssertionError(
            "the test-only NeverCalledVideoProcessor was called: MVL-SIB never sends videos "
            "(tests/fakes/video_processor.py)"
        )

    __call__ = preprocess = _refuse

    def to_dict(self):
        return {"video_processor_type": type(self).__name__}

    def to_json_string(self):
        return '{"video_processor_type": "%s"}\n' % type(self).__name__

    def __repr__(self):
        return f"{type(self).__name__}()"


def _from_pretrained(*args, **kwargs):
    return NeverCalledVideoProcessor(*args[1:] if args and args[0] is _auto_video.AutoVideoProcessor else args)


def installed() -> bool:
    return bool(_saved)


def install() -> None:
    if is_torchvision_available() or installed():
        return  # the real video processors work; nothing to stand in for
    module = _processing.transformers_module
    _saved["from_pretrained"] = _auto_video.AutoVideoProcessor.__dict__["from_pretrained"]
    _saved["mixin"] = module.__dict__.get("VideoProcessorMixin", _MISSING)
    _auto_video.AutoVideoProcessor.from_pretrained = staticmethod(_from_pretrained)
    setattr(module, "VideoProcessorMixin", VideoProcessorMixin)


def uninstall() -> None:
    if not installed():
        return
    module = _processing.transformers_module
    _auto_video.AutoVideoProcessor.from_pretrained = _saved.pop("from_pretrained")
    mixin = _saved.pop("mixin")
    if mixin is _MISSING:
        delattr(module, "VideoProcessorMixin")
    else:
        setattr(module, "VideoProcessorMixin", mixin)


@contextlib.contextmanager
def stand_in() -> Iterator[None]:
    was = installed()
    install()
    try:
        yield
    finally:
        if not was:
            uninstall()


install()
