"""The evaluator and verify-images give correct inputs to the families whose processors need torchvision.

The checks are those of ``tests/evaluation/test_families.py`` (``support.families``' functions): a batch
equals its prompts processed one by one, image tokens per row equal the family's own processor's
count in prompt order, s2i images follow their letters, one BOS, batch size 8 answers what batch
size 1 answers, and ``mvlsib-eval run`` (all tasks, k 1,3,5) and ``verify-images`` exit 0. Collected
only where torchvision runs (``conftest.py``).
"""

from __future__ import annotations

import pytest
from support import families as checks
from support import one_line_cli_error
from support.families import model_dir, one_thread, photos, texts  # noqa: F401  (shared fixtures)


def _has_what_it_needs(name: str) -> None:
    """The venv must provide every package the family NEEDS (torchvision, timm): a missing one fails here,
    naming it, instead of skipping the family or failing deep inside transformers."""
    from tiny_models.families import missing

    assert missing(name) == [], f"{name} needs {missing(name)}: the eval session installs them (nox -s eval)"


@pytest.mark.parametrize("name", checks.TORCHVISION)
def test_inputs_are_right(name, model_dir, photos):
    _has_what_it_needs(name)
    checks.check_inputs(name, model_dir, photos)


@pytest.mark.parametrize("name", checks.TORCHVISION)
def test_eval_run_and_verify_images_exit_0(name, model_dir, release_dir, pool_dir, tmp_path):
    _has_what_it_needs(name)
    checks.check_eval_run_and_verify_images(name, model_dir, release_dir, pool_dir, tmp_path)


def test_the_torchvision_families_are_the_ones_the_docs_name():
    from tiny_models.families import needs

    assert needs("gemma3n") == needs("perception_lm") == ("torchvision", "timm") and needs("gemma4") == ("torchvision",)
    assert {"gemma4", "mistral3", "lfm2_vl", "internvl3_5", "ovis2", "gemma3n", "perception_lm"} <= set(
        checks.TORCHVISION
    )
    assert checks.LIBRARY_FAILURES == ["llama4"]


@pytest.mark.parametrize("name", checks.LIBRARY_FAILURES)
def test_a_model_failing_inside_transformers_is_one_line_naming_family_and_version(
    name,
    model_dir,
    release_dir,
    pool_dir,
    tmp_path,
):
    """Llama 4's forward fails inside transformers 5.24 whatever the input: both commands say so in one
    line (family, library, version, the library's own message), exit 2, no traceback."""
    import transformers
    from tiny_models.families import family

    from mvlsib.cli import build_cli, eval_cli

    model = model_dir(name)
    small = tmp_path / "pool"
    checks.small_pool(pool_dir, small)
    run = ["run", "--data", release_dir, "--out", tmp_path / "run", "--tasks", "s2t,i2s", "--k", "1"]
    run += ["--languages", "eng_Latn", "--limit", "1", "--no-progress"]
    verify = ["verify-images", "--pool", small, "--out", tmp_path / "verify", "--rotations", "1", "--allow-fail"]
    verify += ["--no-progress"]
    for cli, args in ((eval_cli, run), (build_cli, verify)):
        line = one_line_cli_error(cli, *args, "--model", model, "--device", "cpu")
        assert f"the model's own code failed ({name}, " in line, line
        assert f"transformers {transformers.__version__}" in line and family(name).KNOWN_LIBRARY_FAILURE in line


@pytest.mark.parametrize(
    "name", ["gemma4", "lfm2_vl", "glm4v", "mistral3", "gemma3n", "perception_lm", "ovis2", "molmo2"]
)
def test_cached_image_features_give_the_plain_answers(name, model_dir, release_dir):
    """The per-image feature cache (``patches`` units: a row of patches with its positions / shape and
    mask; GLM-4.1V's ``grid`` units: an image's patch rows with its grid; Mistral 3's ``sized`` units:
    an image cut to its own size; Gemma 3n's and Ovis2's ``rows``: an image, a tile, Ovis2's indicator
    embeddings kept; PerceptionLM's ``flat`` units: a tile; Molmo2's ``crops``: an image's crops with its
    own token pooling) passes its self-check and answers what the plain path answers, reusing features
    across prompts."""
    from support import release_requests

    from mvlsib.evaluation.backends import make_backend

    reqs, images = release_requests(release_dir, [("i2s", 1), ("i2s", 3), ("s2i", 1)])

    def backend(**kw):
        b = make_backend("hf", model=str(model_dir(name)), batch_size=4, device="cpu", max_new_tokens=3, **kw)
        b.set_images(images)
        return b

    plain, cached = backend(feature_cache_mb=0), backend()
    assert cached.generate(reqs) == plain.generate(reqs)
    assert cached.describe()["image_feature_cache"]["mode"].startswith("on ("), cached.describe()
    assert cached.stats.image_features_reused > cached.stats.image_features_computed > 0


def test_mistral3_units_of_different_sizes_give_the_towers_own_features(model_dir):
    """Mistral 3's ``sized`` units: images of different shapes in one call (zero-padded to the largest),
    cut to their own size, cached and re-padded in another call's company, give the features the
    model's own ``get_image_features`` gives for the same call."""
    import numpy as np
    import torch
    from PIL import Image
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from mvlsib.evaluation.backends.base import BackendStats
    from mvlsib.evaluation.backends.hf.feature_cache import FeatureCache
    from mvlsib.evaluation.backends.hf.feature_units import adapter_for

    processor = AutoProcessor.from_pretrained(model_dir("mistral3"))
    model = AutoModelForImageTextToText.from_pretrained(model_dir("mistral3")).eval()
    rng = np.random.default_rng(0)
    pictures = [
        Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)) for h, w in ((48, 96), (96, 40), (64, 64))
    ]
    pixels = processor.image_processor(pictures, return_tensors="pt")
    assert len({tuple(s) for s in pixels["image_sizes"].tolist()}) == 3  # three shapes, padded to one
    own = model.base_model.get_image_features
    stats = BackendStats()
    cache = FeatureCache(model, adapter_for(model), 2**26, stats)
    with torch.inference_mode():
        for order in ([0, 1], [2, 1, 0]):  # the second call reuses 0 and 1 beside a new, larger neighbour
            call = processor.image_processor([pictures[i] for i in order], return_tensors="pt")
            want = own(pixel_values=call["pixel_values"], image_sizes=call["image_sizes"]).pooler_output
            got = model.base_model.get_image_features(
                pixel_values=call["pixel_values"], image_sizes=call["image_sizes"]
            ).pooler_output
            assert len(got) == len(want) == len(order)
            for a, b in zip(got, want):
                assert a.shape == b.shape and torch.allclose(a, b, atol=1e-5), float((a - b).abs().max())
    cache.remove()
    assert stats.image_features_computed == 3 and stats.image_features_reused == 2


@pytest.mark.parametrize("name", ["gemma3n", "perception_lm", "ovis2", "molmo2"])
def test_units_cut_from_one_call_give_the_towers_own_features(name, model_dir):
    """The units of a call of several images (Ovis2: tiles; PerceptionLM: a thumbnail and tiles each;
    Molmo2: crops indexed by the pooling of the whole call), cached and put back in another call's
    company and order, give the features the model's own ``get_image_features`` gives for that call."""
    import inspect

    import numpy as np
    import torch
    from PIL import Image
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from mvlsib.evaluation.backends.base import BackendStats
    from mvlsib.evaluation.backends.hf.feature_cache import FeatureCache
    from mvlsib.evaluation.backends.hf.feature_units import adapter_for

    processor = AutoProcessor.from_pretrained(model_dir(name))
    model = AutoModelForImageTextToText.from_pretrained(model_dir(name)).eval()
    rng = np.random.default_rng(0)
    shapes = ((48, 96), (96, 40), (64, 64)) if name == "molmo2" else ((64, 64),) * 3
    pictures = [Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)) for h, w in shapes]
    own = model.base_model.get_image_features
    wanted = set(inspect.signature(own).parameters) - {"kwargs"}
    stats = BackendStats()
    cache = FeatureCache(model, adapter_for(model), 2**26, stats)
    units = []
    with torch.inference_mode():
        for order in ([0, 1], [2, 1, 0]):  # the second call reuses 0 and 1 beside a new neighbour, in another order
            call = processor.image_processor([pictures[i] for i in order], return_tensors="pt")
            call = {k: v for k, v in call.items() if k in wanted}
            units.append(len(cache.adapter.units(dict(call)).keys))
            want = own(**call)
            got = model.base_model.get_image_features(**call)
            assert len(got.pooler_output) == len(want.pooler_output)
            for a, b in zip(got.pooler_output, want.pooler_output):
                assert a.shape == b.shape and torch.allclose(a, b, atol=1e-5), float((a - b).abs().max())
            if name == "ovis2":
                assert torch.equal(got.visual_indicator_features, want.visual_indicator_features)
    cache.remove()
    first, second = units
    assert stats.image_features_computed == second and stats.image_features_reused == first


def test_ovis2_with_random_visual_tokens_is_refused_with_the_reason(model_dir, tmp_path):
    """Ovis2's ``tokenize_function`` ``gumbel_argmax`` draws its visual tokens at random on every call:
    the feature cache refuses it before any batch and says why."""
    import json
    import shutil

    from mvlsib.evaluation.backends import make_backend

    copy = tmp_path / "ovis2-gumbel"
    shutil.copytree(model_dir("ovis2"), copy)
    config = json.loads((copy / "config.json").read_text())
    assert config["vision_config"].get("tokenize_function", "softmax") == "softmax"
    config["vision_config"]["tokenize_function"] = "gumbel_argmax"
    (copy / "config.json").write_text(json.dumps(config, indent=2))
    backend = make_backend("hf", model=str(copy), batch_size=4, device="cpu", max_new_tokens=3)
    assert backend.features.cache is None
    mode = backend.describe()["image_feature_cache"]["mode"]
    assert mode.startswith("off (Ovis2 with vision_config.tokenize_function 'gumbel_argmax' draws"), mode
