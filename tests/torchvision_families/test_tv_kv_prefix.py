"""KV-prefix reuse (``--kv-prefix``) for the families whose processors need torchvision.

Gemma 4, Mistral 3, Gemma 3n (per-layer inputs, KV-shared layers, sliding layers) and PerceptionLM
continue from a shared prefix cache: with reuse on, every answer equals the plain path's, the self-checks of both kinds of prefix (text only; through an i2s reference set's
images) pass, and later batches really take their prefix from the cache. Qwen3.5 (gated-delta
"linear_attention" layers) and LFM2-VL (short "conv" layers) carry a state from token to token
that the padding moved between prefix and suffix would run through: they are refused before any
batch, with the reason in ``describe()``, and answer as the plain path does.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from support import prefix_ordered_requests, tiny_hf_backend
from support.families import model_dir, one_thread, texts  # noqa: F401  (shared fixtures)

from mvlsib.evaluation.backends.hf.kv_prefix import sliding_window
from mvlsib.evaluation.backends.hf.loading import move_inputs

# The tiny Gemma 4's own window (64 tokens) is shorter than every MVL-SIB prompt, so it never reuses
# a prefix (as tiny Gemma 3); a copy with a window longer than these prompts (up to 694 tokens, the
# tiny processor's images being large) does. A real checkpoint reuses only batches that fit its window.
GEMMA4_WINDOW = 1024


@pytest.fixture(scope="module")
def prompts(release_dir):
    return prefix_ordered_requests(release_dir)


# The tiny Gemma 3n's window (512) is shorter than its i2s prompts (256 tokens an image).
OWN_WINDOW = {"gemma4": 64, "gemma3n": 512}


def _reusing_model(name, model_dir, tmp_path):
    if name not in OWN_WINDOW:
        return model_dir(name)
    widened = tmp_path / f"{name}-window"
    shutil.copytree(model_dir(name), widened)
    config = json.loads((widened / "config.json").read_text())
    assert config["text_config"]["sliding_window"] == OWN_WINDOW[name]
    config["text_config"]["sliding_window"] = GEMMA4_WINDOW
    (widened / "config.json").write_text(json.dumps(config, indent=2))
    return widened


@pytest.mark.parametrize("name", ["gemma4", "mistral3", "gemma3n", "perception_lm"])
def test_reused_prefix_gives_the_plain_answers(name, model_dir, prompts, tmp_path):
    reqs, images = prompts
    model = _reusing_model(name, model_dir, tmp_path)
    want = tiny_hf_backend(model, images).generate(reqs)
    backend = tiny_hf_backend(model, images, kv_prefix=True)
    assert backend.generate(reqs) == want
    described = backend.describe()
    assert (described["kv_prefix"], described["kv_prefix_images"]) == ("on", "on"), described
    stats = backend.stats
    assert stats.kv_prefix_batches >= 1  # batches after the self-checks really used it
    assert stats.kv_prefix_image_batches >= 1  # some of them through an i2s set's images
    assert stats.prefix_tokens_reused > stats.prefix_tokens_computed > 0
    # A row whose padding was moved between prefix and suffix continues exactly as alone: the first
    # step's logits of every row (padded ones included) equal the plain batch's.
    for idx, inputs in backend.build_batches(reqs):
        has_images = bool(reqs[idx[0]].image_ids)
        inputs = move_inputs(inputs, "cpu", torch.float32)
        length = backend.prefixes.length(inputs, has_images)
        if length and int((inputs["attention_mask"] == 0).sum()):
            break
    else:
        pytest.fail("no batch with padding shares a prefix")
    settings = {**backend.decoding(1), "output_logits": True, "return_dict_in_generate": True}
    with torch.inference_mode():
        ours, _ = backend.prefixes.generate(inputs, length, has_images, settings)
        theirs = backend.model.generate(**inputs, **settings)
    assert torch.allclose(ours.logits[0], theirs.logits[0], rtol=1e-5, atol=1e-5), float(
        (ours.logits[0] - theirs.logits[0]).abs().max()
    )


def test_tiny_gemma4s_own_window_is_shorter_than_every_prompt(model_dir, prompts):
    """The sliding-window rule (``sliding_window``) holds for Gemma 4's layer types too: a batch that
    does not fit the window whole runs the plain way."""
    reqs, images = prompts
    backend = tiny_hf_backend(model_dir("gemma4"), images, kv_prefix=True)
    assert sliding_window(backend.model.config) == 64
    for idx, inputs in backend.build_batches(reqs):
        assert backend.prefixes.length(inputs, bool(reqs[idx[0]].image_ids)) == 0


@pytest.mark.parametrize(("name", "kind"), [("qwen3_5", "linear_attention"), ("lfm2_vl", "conv")])
def test_families_with_a_recurrent_state_are_refused_with_the_reason(name, kind, model_dir, prompts):
    reqs, images = prompts
    want = tiny_hf_backend(model_dir(name), images).generate(reqs)
    backend = tiny_hf_backend(model_dir(name), images, kv_prefix=True)
    assert backend.prefixes.cache is None
    reason = backend.describe()["kv_prefix"]
    assert reason.startswith(f"off (model type '{name}' has layers with a state carried from token to token ({kind})")
    assert "padding moved between a shared prefix" in reason
    assert backend.generate(reqs) == want
    assert backend.stats.prefix_tokens_computed == 0 and backend.stats.kv_prefix_batches == 0
