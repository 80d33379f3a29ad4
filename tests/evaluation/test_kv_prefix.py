"""KV-prefix reuse (``--kv-prefix``): the text prefix a batch shares is computed once per run and
its cache reused with the padding moved between prefix and suffix. Per family that allows it, on
real prompts of a release built from ../shared/sib-200, answers and first-step logits equal the
plain path's; a planted difference switches it off; Qwen's mrope families are refused."""

from __future__ import annotations

import pytest
import torch
from support import prefix_ordered_requests, release_requests, tiny_hf_backend
from support.families import GENERATIVE, model_dir, texts  # noqa: F401  (shared fixtures)

from mvlsib.evaluation.backends import make_backend
from mvlsib.evaluation.backends.hf.kv_prefix import KV_PREFIX_TYPES, PrefixCache, sliding_window, split_at_prefix
from mvlsib.evaluation.backends.hf.loading import move_inputs
from mvlsib.evaluation.run.schedule import prefix_order

pytestmark = pytest.mark.eval

MODEL_TYPE = {"llava_1_5": "llava"}
# Tiny Gemma 3's attention window (64 tokens) is shorter than every prompt: it never reuses (tested below).
REUSING = [n for n in GENERATIVE if MODEL_TYPE.get(n, n) in KV_PREFIX_TYPES and n not in ("mllama", "gemma3")]


@pytest.fixture(scope="module")
def prompts(release_dir):
    return prefix_ordered_requests(release_dir)


def test_the_padding_moves_between_prefix_and_suffix_and_positions_stay():
    pad = 0
    rows = [[5, 6, 7, 8, 9, 10, 11, 12, 13], [5, 6, 7, 8, 20, 21], [5, 6, 7, 8, 30, 31, 32, 33]]
    width = max(map(len, rows))
    ids = torch.tensor([[pad] * (width - len(r)) + r for r in rows])
    mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in rows])
    types = ids * 10  # another sequence tensor (e.g. Gemma 3's token_type_ids) moves the same way
    prefix, batch = split_at_prefix(
        {"input_ids": ids, "attention_mask": mask, "token_type_ids": types, "pixel_values": torch.ones(2, 3)},
        4,
        {"input_ids", "attention_mask", "token_type_ids"},
        pad,
    )
    assert prefix["input_ids"].tolist() == [[5, 6, 7, 8]] and prefix["attention_mask"].tolist() == [[1] * 4]
    assert torch.equal(batch["pixel_values"], torch.ones(2, 3))  # not a sequence tensor: untouched
    for i, row in enumerate(rows):
        kept = batch["attention_mask"][i].bool()
        assert batch["input_ids"][i][kept].tolist() == row
        assert batch["token_type_ids"][i][kept].tolist() == [t * 10 for t in row]
        assert batch["input_ids"][i][:4].tolist() == [5, 6, 7, 8]
        # generate's positions (mask cumsum) of a row's own tokens are those of the row alone
        positions = batch["attention_mask"][i].cumsum(-1) - 1
        assert positions[kept].tolist() == list(range(len(row)))


@pytest.mark.parametrize("name", REUSING)
def test_reused_prefix_gives_the_plain_answers_and_logits(name, model_dir, prompts):
    reqs, images = prompts
    want = tiny_hf_backend(model_dir(name), images).generate(reqs)
    backend = tiny_hf_backend(model_dir(name), images, kv_prefix=True)
    assert backend.generate(reqs) == want
    assert backend.describe()["kv_prefix"] == "on"
    stats = backend.stats
    assert stats.kv_prefix_batches >= 1  # batches after the self-check really used it
    assert stats.prefix_tokens_reused > stats.prefix_tokens_computed > 0
    # First-step logits of a batch continued from the prefix cache equal the plain batch's.
    idx, inputs = backend.build_batches(reqs)[0]
    has_images = bool(reqs[idx[0]].image_ids)
    inputs = move_inputs(inputs, "cpu", torch.float32)
    length = backend.prefixes.length(inputs, has_images)
    assert length >= 8
    settings = {**backend.decoding(1), "output_logits": True, "return_dict_in_generate": True}
    with torch.inference_mode():
        ours, _ = backend.prefixes.generate(inputs, length, has_images, settings)
        theirs = backend.model.generate(**inputs, **settings)
    assert torch.allclose(ours.logits[0], theirs.logits[0], rtol=1e-4, atol=1e-4), float(
        (ours.logits[0] - theirs.logits[0]).abs().max()
    )


def test_a_planted_cache_difference_switches_reuse_off(model_dir, prompts, capsys, monkeypatch):
    reqs, images = prompts
    want = tiny_hf_backend(model_dir("llava_1_5"), images).generate(reqs)
    honest = PrefixCache.for_batch

    def spoiled(self, model, prefix, rows):
        cache = honest(self, model, prefix, rows)
        for layer in cache.layers:
            layer.values = layer.values + 0.5  # a misaligned or stale prefix looks like this
        return cache

    monkeypatch.setattr(PrefixCache, "for_batch", spoiled)
    backend = tiny_hf_backend(model_dir("llava_1_5"), images, kv_prefix=True)
    capsys.readouterr()
    assert backend.generate(reqs) == want
    assert "KV-prefix reuse is off for this run" in capsys.readouterr().err
    assert backend.describe()["kv_prefix"].startswith("off (self-check:")
    assert backend.stats.kv_prefix_batches == 0


def test_mrope_families_and_the_default_do_not_reuse(model_dir, prompts):
    reqs, images = prompts
    qwen = tiny_hf_backend(model_dir("qwen2_vl"), images, kv_prefix=True)
    assert qwen.prefixes.cache is None and "cannot continue from a shared prefix cache" in qwen.describe()["kv_prefix"]
    assert tiny_hf_backend(model_dir("llava_1_5"), images).describe()["kv_prefix"] == "off (--kv-prefix not given)"


def test_a_batch_longer_than_the_attention_window_is_not_reused(model_dir, prompts):
    """A sliding window counts cache positions: padding moved between prefix and suffix would push
    the prefix out of a suffix token's window (tiny Gemma 3 answered differently on one of 420
    prompts before this rule, after its self-check had passed)."""
    reqs, images = prompts
    backend = tiny_hf_backend(model_dir("gemma3"), images, kv_prefix=True)
    assert sliding_window(backend.model.config) == 64
    idx, inputs = backend.build_batches(reqs)[0]
    assert inputs["input_ids"].shape[1] > 64
    assert backend.prefixes.length(inputs, bool(reqs[idx[0]].image_ids)) == 0
    assert backend.generate(reqs) == tiny_hf_backend(model_dir("gemma3"), images).generate(reqs)
    assert backend.describe()["kv_prefix"].startswith("unused")
    assert backend.stats.kv_prefix_batches == 0


def test_which_configs_have_a_window():
    from transformers import Gemma3TextConfig, LlamaConfig, MistralConfig, Qwen2Config

    assert sliding_window(LlamaConfig()) is None
    assert sliding_window(Qwen2Config(sliding_window=4096, use_sliding_window=False)) is None
    assert sliding_window(MistralConfig(sliding_window=4096)) == 4096
    assert sliding_window(Gemma3TextConfig(sliding_window=512)) == 512


@pytest.fixture(scope="module")
def i2s_prompts(release_dir):
    """i2s k=3 and k=1 for 3 instances in both languages, in prefix order: each instance's prompts
    (same instruction, same reference images, options in another language) are neighbours."""
    reqs, images = release_requests(release_dir, [("i2s", 3), ("i2s", 1)], per_language=3)
    return prefix_order(reqs, messages_of=lambda r: r.messages), images


@pytest.mark.parametrize("name", REUSING)
def test_a_prefix_through_the_shared_images_gives_the_plain_answers_and_logits(name, model_dir, i2s_prompts):
    """Batches of prompts showing the same images with every image in the shared prefix: the prefix
    cache holds the images (the tower runs once for the batch) and the suffixes are text."""
    reqs, images = i2s_prompts
    want = make_backend(
        "hf", model=str(model_dir(name)), batch_size=2, device="cpu", max_new_tokens=3, feature_cache_mb=0
    )
    want.set_images(images)
    plain = want.generate(reqs)
    backend = make_backend(
        "hf",
        model=str(model_dir(name)),
        batch_size=2,
        device="cpu",
        max_new_tokens=3,
        feature_cache_mb=0,
        kv_prefix=True,
    )
    backend.set_images(images)
    assert backend.generate(reqs) == plain
    described = backend.describe()
    assert described["kv_prefix_images"] == "on", described
    assert backend.stats.kv_prefix_image_batches >= 3  # 2 self-checked, the rest reused
    # batched by image set (length order alone would pair prompts of different instances)
    assert all(len({reqs[i].image_ids for i in idx}) == 1 for idx, _ in backend.build_batches(reqs))
    # First-step logits of a batch continued from a prefix cache holding the images equal the plain batch's.
    idx, inputs = next((idx, x) for idx, x in backend.build_batches(reqs) if len({reqs[i].image_ids for i in idx}) == 1)
    inputs = move_inputs(inputs, "cpu", torch.float32)
    length = backend.prefixes.length(inputs, True, same_images=True)
    assert backend.prefixes.has_images(inputs, length)
    assert length > backend.prefixes.length(inputs, True)  # further than the text before the first image
    settings = {**backend.decoding(1), "output_logits": True, "return_dict_in_generate": True}
    with torch.inference_mode():
        ours, _ = backend.prefixes.generate(inputs, length, True, settings, image_ids=reqs[idx[0]].image_ids)
        theirs = backend.model.generate(**inputs, **settings)
    assert torch.allclose(ours.logits[0], theirs.logits[0], rtol=1e-4, atol=1e-4), float(
        (ours.logits[0] - theirs.logits[0]).abs().max()
    )


def test_prompts_with_other_images_do_not_share_an_image_prefix(model_dir, i2s_prompts):
    """Image placeholders are the same tokens for any image: only the request's image ids tell two
    reference sets apart, so a batch of different images keeps its prefix before the first image."""
    reqs, images = i2s_prompts
    backend = make_backend(
        "hf",
        model=str(model_dir("llava_1_5")),
        batch_size=2,
        device="cpu",
        max_new_tokens=3,
        feature_cache_mb=0,
        kv_prefix=True,
    )
    backend.set_images(images)
    mixed = [r for r in reqs if r.key.startswith("i2s|1|")]
    mixed = [mixed[0], next(r for r in mixed if r.image_ids != mixed[0].image_ids)]
    ((idx, inputs),) = backend.build_batches(mixed)
    inputs = move_inputs(inputs, "cpu", torch.float32)
    through = backend.prefixes.length(inputs, True, same_images=True)  # as if they were the same images
    assert backend.prefixes.has_images(inputs, through)  # the placeholder tokens alone would allow it
    text_only = backend.prefixes.length(inputs, True, same_images=False)
    assert text_only < through and not backend.prefixes.has_images(inputs, text_only)
    a = backend.prefixes.cache
    one = a.for_batch(
        backend.model,
        {"input_ids": inputs["input_ids"][:1, -3:], "attention_mask": inputs["attention_mask"][:1, -3:]},
        1,
        ("x",),
    )
    assert len(a._entries) == 1
    a.for_batch(
        backend.model,
        {"input_ids": inputs["input_ids"][:1, -3:], "attention_mask": inputs["attention_mask"][:1, -3:]},
        1,
        ("y",),
    )
    assert len(a._entries) == 2 and one is not None  # same tokens, other images: another entry


def test_a_planted_difference_in_an_image_prefix_turns_only_that_kind_off(model_dir, i2s_prompts, capsys, monkeypatch):
    reqs, images = i2s_prompts
    plain = tiny_hf_backend(model_dir("llava_1_5"), images)
    want = plain.generate(reqs)
    honest = PrefixCache.for_batch

    def spoiled(self, model, prefix, rows, image_ids=()):
        cache = honest(self, model, prefix, rows, image_ids)
        if image_ids:  # only caches that hold images
            for layer in cache.layers:
                layer.values = layer.values + 0.5
        return cache

    monkeypatch.setattr(PrefixCache, "for_batch", spoiled)
    backend = make_backend(
        "hf",
        model=str(model_dir("llava_1_5")),
        batch_size=2,
        device="cpu",
        max_new_tokens=3,
        feature_cache_mb=0,
        kv_prefix=True,
    )
    backend.set_images(images)
    capsys.readouterr()
    assert backend.generate(reqs) == want
    assert "KV-prefix reuse through images is off for this run" in capsys.readouterr().err
    described = backend.describe()
    assert described["kv_prefix_images"].startswith("off (self-check:")
    assert not described["kv_prefix"].startswith("off")  # text prefixes keep their own verdict
    assert backend.stats.kv_prefix_image_batches == 1  # the one checked batch, never used after
