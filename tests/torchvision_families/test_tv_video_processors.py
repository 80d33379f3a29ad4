"""The families whose processors carry a video processor get the same inputs with the real video
processors (here, where torchvision runs) as through the main suite's never-called stand-in.

The main test environment cannot install torchvision, so there the processors of Qwen2-VL, Qwen2.5-VL,
Qwen3-VL(-Thinking), InternVL, SmolVLM and LLaVA-OneVision load with ``tests/fakes/video_processor.py``
in place of their video processor. Their tiny builders save the video processor's config, so the same
folders load here with the real classes. Per family, for every request of the family checks
(``tests/evaluation/test_families.py``), the inputs made by the hf backend's own rendering and
processor call are compared three ways:

- here, real video processor vs the stand-in forced in its place: the same interpreter and image
  processor classes, so every tensor is bit-identical (the video processor never touches an image prompt);
- here vs the main environment (the stand-in, CPU torch, the PIL image processors that transformers
  picks where torchvision is missing): every integer tensor (``input_ids``, masks, grids, sizes) is
  identical, and pixel values differ by at most one 8-bit level after normalisation (the PIL and
  torchvision resizes round a few pixels differently: ~0.2% of the values differ by that level, the rest
  by float rounding below 1e-4).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from support import REPO, subprocess_env

STAND_IN_FAMILIES = [
    "internvl",
    "llava_onevision",
    "qwen2_5_vl",
    "qwen2_vl",
    "qwen3_vl",
    "qwen3_vl_thinking",
    "smolvlm",
]
STAND_IN = "NeverCalledVideoProcessor"


def _main_python() -> str:
    """The main test environment's interpreter: the one this venv was made from (``MVLSIB_MAIN_PYTHON``
    overrides). It must run transformers and must not have torchvision, or it is not the stand-in path."""
    python = os.environ.get("MVLSIB_MAIN_PYTHON") or getattr(sys, "_base_executable", "")
    code = "import importlib.util, torch, transformers; assert importlib.util.find_spec('torchvision') is None"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300) if python else None
    if done is None or done.returncode != 0:
        message = f"no main test interpreter without torchvision found ({python or 'none'}); set MVLSIB_MAIN_PYTHON"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return python


@pytest.fixture(scope="module")
def main_python() -> str:
    return _main_python()


@pytest.fixture(scope="module")
def texts(sib_dir: Path) -> list[str]:
    from evaluation.test_families import SENTENCES
    from support import EVAL_LANGUAGES
    from tiny_models.llava import sib_sentences

    return sib_sentences(sib_dir, EVAL_LANGUAGES, limit=60) + SENTENCES


def _inputs(python: str, model: Path, dest: Path, *mode: str) -> tuple[str, dict]:
    from safetensors import safe_open

    env = subprocess_env(PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO / "tests")]), OMP_NUM_THREADS="1")
    args = [python, "-m", "torchvision_families.stand_in_inputs", str(model), str(dest), *mode]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    with safe_open(str(dest), "pt") as f:
        return f.metadata()["video_processor"], {key: f.get_tensor(key) for key in f.keys()}


def _one_level(processor) -> float:
    """One 8-bit level of a pixel after rescaling and normalisation, in the widest channel."""
    image = processor.image_processor
    return 1.0 / (255 * min(image.image_std)) if getattr(image, "do_normalize", True) else 1.0 / 255


@pytest.mark.parametrize("name", STAND_IN_FAMILIES)
def test_the_real_video_processor_gives_the_inputs_of_the_stand_in(name, texts, main_python, tmp_path):
    from tiny_models.families import build_family
    from torchvision_families.stand_in_inputs import inputs_per_request
    from transformers import AutoProcessor

    model = build_family(name, tmp_path / name, texts, seed=0)
    real = inputs_per_request(str(model))
    real_video = real.pop("video_processor")
    assert real_video.endswith("VideoProcessor") and real_video != STAND_IN, real_video

    forced_video, forced = _inputs(sys.executable, model, tmp_path / "forced.safetensors", "stand-in")
    assert forced_video == STAND_IN and sorted(forced) == sorted(real)
    assert [key for key in real if not torch.equal(real[key], forced[key])] == []

    main_video, main = _inputs(main_python, model, tmp_path / "main.safetensors")
    assert main_video == STAND_IN and sorted(main) == sorted(real)
    assert any(key.endswith("/pixel_values") for key in real) and any(key.endswith("/input_ids") for key in real)
    level = _one_level(AutoProcessor.from_pretrained(model))
    for key in real:
        assert real[key].shape == main[key].shape and real[key].dtype == main[key].dtype, key
        if real[key].is_floating_point():
            gap = (real[key] - main[key]).abs()
            worst, off_by_a_level = float(gap.max()), float((gap > 1e-4).float().mean())
            assert worst <= level * 1.001 and off_by_a_level < 0.01, (key, worst, level, off_by_a_level)
        else:
            assert torch.equal(real[key], main[key]), key
