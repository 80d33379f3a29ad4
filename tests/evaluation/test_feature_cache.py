"""Image features once per image (``hf.feature_cache.FeatureCache``): per family, on real prompts of a
release built from ../shared/sib-200, the cached path gives the plain path's answers and
first-step logits; each image goes through the vision tower once; a planted difference
switches the cache off; the cache stays within its byte bound.

The tiny family models come from ``support.families`` (built once per process there).
"""

from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner
from support import release_requests
from support.families import GENERATIVE, model_dir, texts  # noqa: F401  (shared fixtures)

from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import make_backend
from mvlsib.evaluation.backends.hf.feature_units import ADAPTERS
from mvlsib.evaluation.backends.hf.loading import move_inputs

pytestmark = pytest.mark.eval

# Chat families whose model type has a feature split (the thinking variant is Qwen3-VL again).
MODEL_TYPE = {"llava_1_5": "llava"}  # the others' family name is their config's model_type
CACHED = [n for n in GENERATIVE if "thinking" not in n and MODEL_TYPE.get(n, n) in ADAPTERS]


@pytest.fixture(scope="module")
def release_prompts(release_dir):
    """i2s k=1,3 and s2i k=1 for 2 instances in both languages: every image repeats across languages."""
    return release_requests(release_dir, [("i2s", 1), ("i2s", 3), ("s2i", 1)])


def _backend(model, images, **kw):
    # Qwen3.5's template turns thinking on: its budget kept as small as the answers'.
    b = make_backend(
        "hf", model=str(model), batch_size=4, device="cpu", max_new_tokens=3, thinking_max_new_tokens=3, **kw
    )
    b.set_images(images)
    return b


def test_every_cached_family_is_tested():
    assert set(CACHED) == {
        "llava_1_5",
        "llava_next",
        "llava_onevision",
        "gemma3",
        "internvl",
        "idefics3",
        "smolvlm",
        "qwen2_vl",
        "qwen2_5_vl",
        "qwen3_vl",
        "qwen3_5",
    }


@pytest.mark.parametrize("name", CACHED)
def test_cached_features_give_the_plain_answers_and_logits(name, model_dir, release_prompts):
    reqs, images = release_prompts
    plain = _backend(model_dir(name), images, feature_cache_mb=0)
    cached = _backend(model_dir(name), images)
    want = plain.generate(reqs)
    assert cached.generate(reqs) == want
    mode = cached.describe()["image_feature_cache"]["mode"]
    assert mode.startswith("on ("), mode
    assert plain.describe()["image_feature_cache"]["mode"] == "off (--feature-cache-mb 0)"
    stats = cached.stats
    assert stats.image_features_reused > stats.image_features_computed > 0
    # First-step logits of a batch whose features all come from the cache equal the plain model's.
    idx, inputs = next((i, x) for i, x in cached.build_batches(reqs) if any(k.startswith("pixel") for k in x))
    inputs = move_inputs(inputs, "cpu", torch.float32)
    computed = stats.image_features_computed
    settings = {**cached.decoding(1), "output_logits": True, "return_dict_in_generate": True}
    with torch.inference_mode():
        ours = cached.model.generate(**inputs, **settings).logits[0]
        theirs = plain.model.generate(**inputs, **settings).logits[0]
    assert stats.image_features_computed == computed, "every unit of this batch must come from the cache"
    assert torch.allclose(ours, theirs, rtol=1e-4, atol=1e-5), float((ours - theirs).abs().max())


@pytest.mark.parametrize("name", ["llava_1_5", "qwen2_vl", "gemma3"])
def test_each_distinct_image_goes_through_the_vision_tower_once(name, model_dir, release_prompts):
    """For these families a unit is an image whatever the prompt: passes = distinct images."""
    reqs, images = release_prompts
    backend = _backend(model_dir(name), images)
    backend.generate(reqs)
    shown = sum(len(r.image_ids) for r in reqs)
    distinct = len({i for r in reqs for i in r.image_ids})
    assert distinct < shown / 2  # the run really repeats images
    assert backend.stats.image_features_computed == distinct
    assert backend.stats.image_features_computed + backend.stats.image_features_reused == shown
    # The self-check's plain runs (at most 3 batches of 4 prompts) are counted apart.
    assert 0 < backend.stats.image_features_plain <= 3 * 4 * 3


def test_a_planted_feature_difference_switches_the_cache_off(model_dir, release_prompts, capsys):
    reqs, images = release_prompts
    plain = _backend(model_dir("llava_1_5"), images, feature_cache_mb=0)
    want = plain.generate(reqs)
    bad = _backend(model_dir("llava_1_5"), images)
    adapter = bad.features.cache.adapter
    honest = adapter.assemble

    def spoiled(features, grouping, template):  # what a wrong split or a stale entry would look like
        return honest([tuple(f + 0.5 for f in unit) for unit in features], grouping, template)

    adapter.assemble = spoiled
    capsys.readouterr()
    assert bad.generate(reqs) == want  # answers come from the plain path after the check
    err = capsys.readouterr().err
    assert "feature cache is off for this run" in err and "with cached image features" in err
    mode = bad.describe()["image_feature_cache"]["mode"]
    assert mode.startswith("off (self-check:"), mode
    assert bad.features.cache.enabled is False and len(bad.features.cache) == 0
    # After the switch every image goes through the tower: the plain count covers every image shown.
    assert bad.stats.image_features_plain >= sum(len(r.image_ids) for r in reqs)


def test_an_error_in_the_cached_path_switches_the_cache_off(model_dir, release_prompts, capsys):
    """A call the units do not rebuild (here: assembling fails) is refused like a difference: the
    self-check's plain answers are kept, the cache is off for the run, the reason recorded."""
    reqs, images = release_prompts
    want = _backend(model_dir("llava_1_5"), images, feature_cache_mb=0).generate(reqs)
    bad = _backend(model_dir("llava_1_5"), images)

    def broken(*_):
        raise TypeError("an output this adapter cannot rebuild")

    bad.features.cache.adapter.assemble = broken
    capsys.readouterr()
    assert bad.generate(reqs) == want
    assert "feature cache is off for this run" in capsys.readouterr().err
    mode = bad.describe()["image_feature_cache"]["mode"]
    assert mode.startswith("off (self-check: TypeError: an output this adapter cannot rebuild"), mode
    assert bad.features.cache.enabled is False and len(bad.features.cache) == 0


def test_the_cache_stays_within_its_byte_bound(model_dir, release_prompts):
    reqs, images = release_prompts
    backend = _backend(model_dir("llava_1_5"), images)
    want = _backend(model_dir("llava_1_5"), images, feature_cache_mb=0).generate(reqs)
    backend.generate(reqs[:1])  # one unit's size
    cache = backend.features.cache
    one = cache.size_bytes // len(cache)
    backend.set_images(images)  # a fresh cache
    cache.max_bytes = 2 * one
    assert backend.generate(reqs) == want
    assert len(cache) <= 2 and cache.size_bytes <= 2 * one
    distinct = len({i for r in reqs for i in r.image_ids})
    assert backend.stats.image_features_computed > distinct  # evicted features were computed again


def test_families_without_a_split_run_the_plain_path(model_dir, release_prompts):
    reqs, images = release_prompts
    backend = _backend(model_dir("mllama"), images)
    assert backend.features.cache is None
    assert backend.describe()["image_feature_cache"]["mode"].startswith("off (no per-image feature split")
    with pytest.raises(MvlsibError, match="--feature-cache-mb"):
        _backend(model_dir("llava_1_5"), images, feature_cache_mb=-1)


def test_close_gives_the_model_its_own_method_back(model_dir, release_prompts):
    reqs, images = release_prompts
    backend = _backend(model_dir("llava_1_5"), images)
    base = backend.model.base_model
    assert "get_image_features" in base.__dict__
    backend.features.cache.remove()
    assert "get_image_features" not in base.__dict__


def test_the_option_is_documented_in_help():
    from mvlsib.cli import eval_cli

    result = CliRunner().invoke(eval_cli, ["run", "--help"], terminal_width=200)
    assert result.exit_code == 0 and "--feature-cache-mb" in result.output


def test_the_adapter_table_names_concrete_adapters_each_documented():
    """One table: every family's entry is a ``Family`` whose adapter can be built, and each unit
    kind in it is described in the module's docstring under its name."""
    import inspect as _inspect

    from mvlsib.evaluation.backends.hf import feature_units

    kinds = set()
    for model_type, family in ADAPTERS.items():
        assert isinstance(family, feature_units.Family), model_type
        assert issubclass(family.adapter, feature_units.Adapter), model_type
        assert not _inspect.isabstract(family.adapter), model_type
        kinds.add(family.adapter.name)
    for kind in kinds:
        assert f"- ``{kind}`` (" in feature_units.__doc__, kind
