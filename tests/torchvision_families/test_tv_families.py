"""The evaluator and verify-images give correct inputs to the families whose processors need torchvision.

The checks are those of ``tests/evaluation/test_families.py`` (its functions, called here): a batch
equals its prompts processed one by one, image tokens per row equal the family's own processor's
count in prompt order, s2i images follow their letters, one BOS, batch size 8 answers what batch
size 1 answers, and ``mvlsib-eval run`` (all tasks, k 1,3,5) and ``verify-images`` exit 0. Collected
only where torchvision runs (``conftest.py``).
"""

from __future__ import annotations

import pytest
from evaluation import test_families as checks
from evaluation.test_families import model_dir, one_thread, photos, texts  # noqa: F401  (shared fixtures)


@pytest.mark.parametrize("name", checks.TORCHVISION)
def test_inputs_are_right(name, model_dir, photos):  # noqa: F811
    checks.test_inputs_are_right(name, model_dir, photos)


@pytest.mark.parametrize("name", checks.TORCHVISION)
def test_eval_run_and_verify_images_exit_0(name, model_dir, release_dir, pool_dir, tmp_path):  # noqa: F811
    checks.test_eval_run_and_verify_images_exit_0(name, model_dir, release_dir, pool_dir, tmp_path)


def test_the_torchvision_families_are_the_ones_the_docs_name():
    assert {"gemma4"} <= set(checks.TORCHVISION)
