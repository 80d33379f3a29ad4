"""The hf backend on the tiny LLaVA: cached per-image inputs are exactly the processor's."""

from __future__ import annotations

import pytest
import torch
from PIL import Image

from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.run.prompts import build_prompt

pytestmark = pytest.mark.eval


@pytest.fixture(scope="module")
def images(topic_photos_dir):
    """Real topic photographs (different sizes), decoded once."""
    files = sorted(p for p in topic_photos_dir.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))[:6]
    assert len(files) == 6
    out = {}
    for i, f in enumerate(files):
        with Image.open(f) as im:
            im = im.convert("RGB")
            im.thumbnail((480, 480))  # real photos, bounded like the release's images, so the test stays quick
            out[f"img{i}"] = im
    return out


@pytest.fixture(scope="module")
def backend(tiny_llava, images):
    b = make_backend("hf", model=str(tiny_llava), batch_size=3, device="cpu", max_new_tokens=4)
    b.set_images(images)
    return b


def _requests():
    out = []
    sentences = [
        "The tournament was played in a round-robin format.",
        "Mutation adds new genetic variation.",
        "السياحة مهمة",
        "Pests can spoil food.",
    ]
    for i in range(5):
        p = build_prompt("i2s", [f"img{j}" for j in range(i % 3 + 1)], sentences)
        out.append(Request(f"i2s-{i}", tuple(p.messages()), p.image_ids))
        p = build_prompt("s2i", sentences[: i % 3 + 1], [f"img{(i + j) % 6}" for j in range(4)])
        out.append(Request(f"s2i-{i}", tuple(p.messages()), p.image_ids))
        p = build_prompt("s2t", sentences[: i + 1 if i < 4 else 1], ["sports", "travel", "health", "politics"])
        out.append(Request(f"s2t-{i}", tuple(p.messages()), p.image_ids))
    return out


def test_batched_inputs_equal_per_prompt_processor_calls(backend, images):
    """A batch is exactly its prompts processed one by one (one image list per prompt), collated."""
    from mvlsib.evaluation.backends.hf.inputs import compare_batched, infer_layout

    reqs = [r for r in _requests() if r.image_ids][:4]
    texts = [backend.batcher.chat_text(r) for r in reqs]
    singles = [
        backend.processor(text=[t], images=[[images[i] for i in r.image_ids]], return_tensors="pt")
        for t, r in zip(texts, reqs)
    ]
    batches = backend.build_batches(reqs)
    for idx, inputs in batches:
        ref = backend.processor(
            text=[texts[i] for i in idx],
            images=[[images[j] for j in reqs[i].image_ids] for i in idx],
            padding=True,
            return_tensors="pt",
        )
        assert (
            compare_batched(
                [dict(singles[i]) for i in idx],
                dict(ref),
                infer_layout([dict(singles[i]) for i in idx], dict(ref)),
                backend.tokenizer.pad_token_id,
            )
            == []
        )
        assert set(inputs) == set(ref)
        for name in ref:
            assert torch.equal(inputs[name], ref[name]), name
        # image tokens per row: images x tokens per image (25 for this LLaVA), in prompt order
        image_token = backend.tokenizer.convert_tokens_to_ids("<image>")
        for row, i in zip(inputs["input_ids"], idx):
            assert int((row == image_token).sum()) == 25 * len(reqs[i].image_ids)
    assert sorted(i for idx, _ in batches for i in idx) == list(range(len(reqs)))


def test_generate_batched_with_cache_matches_uncached(tiny_llava, images):
    reqs = _requests()
    backend = make_backend("hf", model=str(tiny_llava), batch_size=3, device="cpu", max_new_tokens=4)
    backend.set_images(images)
    ours = backend.generate(reqs)
    assert len(ours) == len(reqs) and all(isinstance(r, str) for r in ours)
    # each distinct image tuple preprocessed once, however many prompts show it
    tuples = {r.image_ids for r in reqs if r.image_ids}
    assert backend.stats.images_preprocessed <= sum(len(t) for t in tuples)
    again = backend.generate(reqs)
    assert again == ours
    assert backend.stats.image_cache_hits >= len([r for r in reqs if r.image_ids])
    plain = make_backend("hf", model=str(tiny_llava), batch_size=3, device="cpu", max_new_tokens=4, cache_images=False)
    plain.set_images(images)
    assert plain.generate(reqs) == ours
    assert plain.stats.images_preprocessed == 0


def test_batching_sorts_and_restores_order(tiny_llava, images):
    reqs = _requests()[:6]
    one = make_backend("hf", model=str(tiny_llava), batch_size=1, device="cpu", max_new_tokens=4)
    one.set_images(images)
    singles = one.generate(reqs)
    assert one.stats.generate_calls == len(reqs)
    # Reversed input order gives the same answers per request.
    assert one.generate(list(reversed(reqs))) == list(reversed(singles))


def test_describe_and_errors(backend, tmp_path):
    d = backend.describe()
    assert d["model_class"] == "LlavaForConditionalGeneration" and d["trust_remote_code"] is False
    assert d["decoding"] == "greedy" and d["dtype"] == "float32"
    assert d["generation"]["repetition_penalty"] == 1.0 and d["generation"]["do_sample"] is False
    with pytest.raises(MvlsibError, match="cannot load"):
        make_backend("hf", model=str(tmp_path / "nothing-here"), device="cpu")
    with pytest.raises(MvlsibError, match="not in the image table"):
        backend.generate([Request("x", tuple(build_prompt("i2s", ["nope"], list("abcd")).messages()), ("nope",))])


def test_refuses_pickle_weights(tiny_llava, tmp_path):
    """safetensors only: a checkpoint with just pytorch_model.bin is refused."""
    import shutil

    from transformers import AutoModelForImageTextToText

    bin_dir = tmp_path / "bin-model"
    shutil.copytree(tiny_llava, bin_dir)
    model = AutoModelForImageTextToText.from_pretrained(tiny_llava)
    (bin_dir / "model.safetensors").unlink()
    torch.save(model.state_dict(), bin_dir / "pytorch_model.bin")
    with pytest.raises(MvlsibError, match="safetensors"):
        make_backend("hf", model=str(bin_dir), device="cpu")


def test_custom_code_runs_only_with_trust_remote_code(tiny_llava, tmp_path):
    """A checkpoint with its own Python code: refused (code not run) unless --trust-remote-code."""
    import json
    import shutil

    model_dir = tmp_path / "custom"
    shutil.copytree(tiny_llava, model_dir)
    config = json.loads((model_dir / "config.json").read_text("utf-8"))
    config["model_type"] = "mvlsib-custom"
    config["auto_map"] = {
        "AutoConfig": "configuration_custom.CustomConfig",
        "AutoModelForImageTextToText": "modeling_custom.CustomModel",
    }
    (model_dir / "config.json").write_text(json.dumps(config), encoding="utf-8")
    marker = "import pathlib\npathlib.Path(__file__).with_name('EXECUTED').write_text('ran')\n"
    (model_dir / "configuration_custom.py").write_text(
        marker + "from transformers import LlavaConfig\n\n\nclass CustomConfig(LlavaConfig):\n"
        "    model_type = 'mvlsib-custom'\n",
        encoding="utf-8",
    )
    (model_dir / "modeling_custom.py").write_text(
        marker + "from transformers import LlavaForConditionalGeneration\n\n"
        "from .configuration_custom import CustomConfig\n\n\n"
        "class CustomModel(LlavaForConditionalGeneration):\n    config_class = CustomConfig\n",
        encoding="utf-8",
    )
    with pytest.raises(MvlsibError, match="--trust-remote-code"):
        make_backend("hf", model=str(model_dir), device="cpu")
    assert not (model_dir / "EXECUTED").exists()
    trusted = make_backend("hf", model=str(model_dir), device="cpu", trust_remote_code=True)
    assert trusted.describe()["trust_remote_code"] is True
    assert type(trusted.model).__name__ == "CustomModel"


def test_a_processor_whose_batches_differ_runs_prompts_one_at_a_time(tiny_llava, images, monkeypatch, capsys):
    """The self-check is the guard: when a batch would differ from its prompts processed one by
    one, that kind of prompt runs alone (same answers), and stderr says why."""
    from mvlsib.evaluation.backends.hf import batching

    reqs = _requests()[:6]
    reference = make_backend("hf", model=str(tiny_llava), batch_size=1, device="cpu", max_new_tokens=4)
    reference.set_images(images)
    monkeypatch.setattr(batching, "compare_batched", lambda *a, **k: ["pixel_values (image) differs"])
    monkeypatch.setattr(batching, "differences_beyond_padding", lambda *a, **k: ["pixel_values (image) differs"])
    guarded = make_backend("hf", model=str(tiny_llava), batch_size=3, device="cpu", max_new_tokens=4)
    guarded.set_images(images)
    assert guarded.generate(reqs) == reference.generate(reqs)
    assert guarded.stats.unbatched_prompts == len(reqs)
    assert "run one at a time" in capsys.readouterr().err
