"""A never-called stand-in for the video processor of processors that insist on one (test-only).

Why: SmolVLM's and LLaVA-OneVision's processors (and Qwen-VL's, InternVL's, ...) take a
``video_processor``. In transformers 5 the video processor classes need torchvision, which is
not installed here and cannot be (the PyPI wheel breaks the CPU torch). Without it
``AutoProcessor.from_pretrained`` fails twice: ``AutoVideoProcessor`` finds no usable class,
and the processor's argument check cannot resolve ``VideoProcessorMixin``. The evaluator never
passes videos, so the video processor is never *called*; the stand-in only has to exist.

What it does, and nothing more (see ``install``):
- ``AutoVideoProcessor.from_pretrained`` returns a ``NeverCalledVideoProcessor`` holding
  the folder's saved video-processor config (processors read attributes such as ``fps`` and
  ``num_frames`` from it while rendering chat templates);
- ``ProcessorMixin.check_argument_for_proper_class`` accepts that stand-in for the
  ``video_processor`` argument and defers to the real check for everything else.
Calling the stand-in or any of its processing/saving methods raises ``AssertionError``, so a
test that really needed a video processor fails loudly instead of passing on fake output.

Use: ``import fakes.video_processor`` installs it for the rest of the process (test modules and
``CliRunner``-invoked commands then load such processors); for a child process,
``python -m fakes.video_processor <mvlsib args>`` installs it and runs ``python -m mvlsib``.
Nothing is installed where torchvision is available: the real video processors work there.
Project code (``src/``) never imports this.
"""

from __future__ import annotations

import contextlib
import runpy
import sys
from collections.abc import Iterator

_saved: dict = {}


def _refuse(*args, **kwargs):
    raise AssertionError(
        "the never-called video processor stand-in was called: MVL-SIB never sends videos "
        "(tests/fakes/video_processor.py)"
    )


def _stand_in_class():
    from transformers.utils import PushToHubMixin

    class NeverCalledVideoProcessor(PushToHubMixin):
        """Carries a video processor's saved settings as attributes; refuses to process anything.

        It subclasses ``PushToHubMixin`` only so that the processor's ``repr``/``to_dict`` (which
        transformers builds eagerly for a log line while loading) serialises it as its config.
        """

        # Every entry point that would touch a video.
        __call__ = preprocess = _preprocess = sample_frames = fetch_videos = save_pretrained = _refuse

        def __init__(self, config: dict | None = None):
            self._config = dict(config or {})
            self.__dict__.update(self._config)
            # Read with plain attribute access by some processors even when no video is given.
            for name in ("fps", "num_frames"):
                self.__dict__.setdefault(name, None)

        def to_dict(self) -> dict:
            return dict(self._config)

    return NeverCalledVideoProcessor


def install(force: bool = False) -> None:
    """Install the two hooks (idempotent; nothing to do where torchvision works, unless ``force``: the
    torchvision venv's comparison of the stand-in path with the real video processors)."""
    from transformers.utils import is_torchvision_available

    if "check" in _saved or (is_torchvision_available() and not force):
        return
    from transformers.models.auto.video_processing_auto import AutoVideoProcessor, get_video_processor_config
    from transformers.processing_utils import ProcessorMixin

    original_check = ProcessorMixin.check_argument_for_proper_class
    stand_in = _saved.setdefault("class", _stand_in_class())

    def from_pretrained(pretrained_model_name_or_path, *args, **kwargs):
        keep = {k: v for k, v in kwargs.items() if k in ("cache_dir", "revision", "local_files_only", "subfolder")}
        return stand_in(get_video_processor_config(pretrained_model_name_or_path, **keep))

    def check_argument_for_proper_class(self, argument_name, argument):
        if isinstance(argument, stand_in):
            return stand_in
        return original_check(self, argument_name, argument)

    _saved["from_pretrained"] = AutoVideoProcessor.__dict__["from_pretrained"]
    _saved["check"] = ProcessorMixin.__dict__["check_argument_for_proper_class"]
    AutoVideoProcessor.from_pretrained = staticmethod(from_pretrained)
    ProcessorMixin.check_argument_for_proper_class = check_argument_for_proper_class


def uninstall() -> None:
    if "check" not in _saved:
        return
    from transformers.models.auto.video_processing_auto import AutoVideoProcessor
    from transformers.processing_utils import ProcessorMixin

    AutoVideoProcessor.from_pretrained = _saved.pop("from_pretrained")
    ProcessorMixin.check_argument_for_proper_class = _saved.pop("check")


@contextlib.contextmanager
def never_called_video_processor() -> Iterator[None]:
    installed_here = "check" not in _saved
    install()
    try:
        yield
    finally:
        if installed_here:
            uninstall()


def __getattr__(name: str):
    if name == "NeverCalledVideoProcessor":
        return _saved.setdefault("class", _stand_in_class())
    raise AttributeError(name)


install()

if __name__ == "__main__":
    # A child process (CLI test): install, then run the package's CLI with the remaining arguments.
    install()
    sys.argv = ["mvlsib", *sys.argv[1:]]
    runpy.run_module("mvlsib", run_name="__main__", alter_sys=True)
