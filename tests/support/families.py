"""The tiny VLM families' shared fixtures, tables and checks: used by the family tests of the eval
session (tests/evaluation/test_families.py) and of its torchvision families (tests/torchvision_families/).

Per family: a batch equals its prompts processed one by one (one image list per prompt); image tokens per
row are the prompt's images' tokens, in prompt order; s2i images follow their letters; one BOS; answers
at batch size 8 equal those at batch size 1; the full ``mvlsib-eval run`` and ``verify-images`` exit 0.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from PIL import Image
from tiny_models.families import family, family_names, needs
from tiny_models.llava import sib_sentences

from mvlsib.evaluation.backends import Request, make_backend
from mvlsib.evaluation.backends.hf.inputs import (
    compare_batched,
    differences_beyond_padding,
    infer_layout,
    placement_errors,
)
from mvlsib.evaluation.run.prompts import build_prompt
from support import EVAL_LANGUAGES

# Chat models; PaliGemma (no chat template: a prefix LM) is refused with a message instead.
CHAT = [
    n
    for n in family_names()
    if getattr(family(n), "KIND", "generative") == "generative"
    and getattr(family(n), "CHAT_TEMPLATE", "") is not None
    and not hasattr(family(n), "KNOWN_LIBRARY_FAILURE")
]
# Families whose model fails inside the library itself (Llama 4 in transformers 5.24): the evaluator must say
# so in one line, which tests/torchvision_families checks.
LIBRARY_FAILURES = [n for n in family_names() if hasattr(family(n), "KNOWN_LIBRARY_FAILURE")]
# Families whose processors need torchvision are checked by tests/torchvision_families/, which runs these
# same checks once, in the same eval session; the rest are checked here.
GENERATIVE = [n for n in CHAT if not needs(n)]
TORCHVISION = [n for n in CHAT if needs(n)]
NO_TEMPLATE = [n for n in family_names() if getattr(family(n), "CHAT_TEMPLATE", "") is None and not needs(n)]
SENTENCES = [
    "The tournament was played in a round-robin format.",
    "Mutation adds new genetic variation.",
    "السياحة مهمة للاقتصاد",
    "Pests can spoil food.",
]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def texts(sib_dir):
    return sib_sentences(sib_dir, EVAL_LANGUAGES, limit=60) + SENTENCES


@pytest.fixture(scope="module")
def photos(topic_photos_dir):
    files = sorted(p for p in topic_photos_dir.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))[:6]
    out = {}
    for i, f in enumerate(files):
        with Image.open(f) as im:
            im = im.convert("RGB")
            im.thumbnail((480, 480))  # bounded like the release's images (640 x 480)
            out[f"img{i}"] = im
    return out


# LLaVA-OneVision's multi-image protocol, as in its reference implementation and transformers: no
# anyres tiling when a prompt has several images, each image is its base view plus one newline token.
MULTI_IMAGE_TOKENS = {"llava_onevision": lambda n: n * (family("llava_onevision").NUM_IMAGE_TOKENS + 1)}

# What each family's real template writes for an image, and whether it keeps images in place
# (docs/model_families.md): independent facts the backend's findings are checked against.
IMAGE_MARKER = {
    "qwen2_vl": "<|vision_start|><|image_pad|><|vision_end|>",
    "qwen2_5_vl": "<|vision_start|><|image_pad|><|vision_end|>",
    "qwen3_vl": "<|vision_start|><|image_pad|><|vision_end|>",
    "qwen3_vl_thinking": "<|vision_start|><|image_pad|><|vision_end|>",
    "qwen3_5": "<|vision_start|><|image_pad|><|vision_end|>",
    "gemma3": "<start_of_image>",
    "idefics3": "<image>",
    "smolvlm": "<image>",
    "mllama": "<|image|>",
    "internvl": "<IMG_CONTEXT>",
    "internvl3_5": "<IMG_CONTEXT>",
    "llava_1_5": "<image>",
    "llava_next": "<image>",
    "llava_onevision": "<image>",
    "mistral3": "[IMG]",
    "lfm2_vl": "<image>",
    "glm4v": "<|begin_of_image|><|image|><|end_of_image|>",
    "gemma4": "<|image|>",  # written as "\n\n<|image|>\n\n", and the text parts around it are trimmed
    "ovis2": "<image>",  # written as "<image>\n"; plain text for the tokenizer, expanded by the processor
    "molmo2": "<|image|>",  # the template moves them first, numbered: rendered inline with the processor's token
    "gemma3n": "<image_soft_token>",  # the processor expands it into <start_of_image> ... <end_of_image>
    "perception_lm": "<|image|>",  # all images first, then the text parts trimmed and glued
}
IMAGES_FIRST = {"llava_1_5", "llava_next", "llava_onevision", "molmo2", "perception_lm"}

_BUILT: dict[str, Path] = {}


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, texts):
    def get(name: str) -> Path:
        if name not in _BUILT:
            _BUILT[name] = family(name).build(tmp_path_factory.mktemp(name), texts, seed=0)
        return _BUILT[name]

    return get


def sample_requests() -> list[Request]:
    out = []
    topics = ["sports", "travel", "health", "politics"]
    for i, k in enumerate((1, 3, 5)):
        p = build_prompt("i2s", [f"img{(i + j) % 6}" for j in range(k)], SENTENCES)
        out.append(Request(f"i2s-{k}", tuple(p.messages()), p.image_ids))
        p = build_prompt("s2i", SENTENCES[: min(k, 4)], [f"img{(i + j) % 6}" for j in range(4)])
        out.append(Request(f"s2i-{k}", tuple(p.messages()), p.image_ids))
        p = build_prompt("s2t", SENTENCES[: min(k, 4)], topics)
        out.append(Request(f"s2t-{k}", tuple(p.messages()), p.image_ids))
    p = build_prompt("t2s", ["sports"], SENTENCES)
    out.append(Request("t2s-1", tuple(p.messages()), p.image_ids))
    return out


def _image_token_id(processor, name: str | None = None) -> int:
    """The token the model fills with an image's features: the family module's ``FILLED_TOKEN`` where its
    processor expands the placeholder into other tokens or the placeholder is only text, else the processor's."""
    filled = getattr(family(name), "FILLED_TOKEN", None) if name else None
    if filled:
        return int(processor.tokenizer.convert_tokens_to_ids(filled))
    token_id = getattr(processor, "image_token_id", None)
    if token_id is None:
        token_id = processor.tokenizer.convert_tokens_to_ids(processor.image_token)
    return int(token_id)


def check_inputs(name, model_dir, photos):
    # A thinking template gets a small budget here: the random model never closes its block.
    backend = make_backend(
        "hf", model=str(model_dir(name)), batch_size=8, device="cpu", max_new_tokens=3, thinking_max_new_tokens=6
    )
    backend.set_images(photos)
    reqs = sample_requests()
    texts = [backend.batcher.chat_text(r) for r in reqs]
    placeholder = backend.renderer.placeholder
    assert placeholder == IMAGE_MARKER[name]
    assert backend.renderer.mode == ("inline" if name in IMAGES_FIRST else "native")
    for text, req in zip(texts, reqs):
        assert placement_errors(text, placeholder, req.messages) == []
        if req.key.startswith("s2i"):  # each option image right after its letter
            for letter in "ABCD":
                assert re.search(re.escape(f"{letter}.") + r"\s*" + re.escape(placeholder), text), (letter, text)
    # The inner (plain) processor, one prompt at a time: the reference.
    processor = backend.processor
    inner = backend.batcher.inner_image_processor
    processor.image_processor = inner
    singles = []
    for text, req in zip(texts, reqs):
        singles.append(
            backend.batcher.call_processor([text], [[photos[i] for i in req.image_ids]] if req.image_ids else None)
        )
    processor.image_processor = inner  # build_batches re-installs nothing: the memo was swapped out above
    image_token = _image_token_id(processor, name)
    bos = processor.tokenizer.bos_token_id
    eos = processor.tokenizer.eos_token_id
    batches = backend.build_batches(reqs)
    assert sorted(i for idx, _ in batches for i in idx) == list(range(len(reqs)))
    assert any(len(idx) > 1 for idx, _ in batches), "prompts must really be batched"
    for idx, inputs in batches:
        group = [singles[i] for i in idx]
        layout = infer_layout(group, inputs)
        if backend.batcher.batched[bool(reqs[idx[0]].image_ids)] == "processor":  # the processor pads its own way
            assert differences_beyond_padding(group, inputs, layout) == []
        else:
            assert compare_batched(group, inputs, layout, processor.tokenizer.pad_token_id) == []
        for row_pos, i in enumerate(idx):
            mask = inputs["attention_mask"][row_pos].bool()
            ids = inputs["input_ids"][row_pos][mask]
            assert torch.equal(ids, singles[i]["input_ids"][0])
            n_images = len(reqs[i].image_ids)
            n_tokens = int((ids == image_token).sum())
            if n_images:
                per_image = [
                    int(
                        (
                            backend.batcher.call_processor(
                                [
                                    backend.batcher.chat_text(
                                        Request("one", tuple(build_prompt("i2s", [im], SENTENCES).messages()), (im,))
                                    )
                                ],
                                [[photos[im]]],
                            )["input_ids"]
                            == image_token
                        ).sum()
                    )
                    for im in reqs[i].image_ids
                ]
                want = (
                    MULTI_IMAGE_TOKENS[name](n_images)
                    if name in MULTI_IMAGE_TOKENS and n_images > 1
                    else sum(per_image)
                )
                assert n_tokens == want > 0, (reqs[i].key, n_tokens, per_image)
            else:
                assert n_tokens == 0
            if bos is not None:  # one BOS, never two
                # Where BOS is also the turn end (Molmo2: <|im_end|>), only a leading run of it is BOS.
                n_bos = int((ids == bos).sum()) if bos != eos else _leading_run(ids, bos)
                assert n_bos <= 1, reqs[i].key
                if texts[i].startswith(processor.tokenizer.bos_token) or ids[0] == bos:
                    assert ids[0] == bos and n_bos == 1
    # Batch size 8 answers what batch size 1 answers.
    eight = backend.generate(reqs)
    one = make_backend(
        "hf", model=str(model_dir(name)), batch_size=1, device="cpu", max_new_tokens=3, thinking_max_new_tokens=6
    )
    one.set_images(photos)
    assert one.generate(reqs) == eight
    described = backend.describe()
    assert described["rendering"] in ("native", "inline") and described["generation"]["do_sample"] is False


def _leading_run(ids, token_id: int) -> int:
    n = 0
    while n < len(ids) and int(ids[n]) == token_id:
        n += 1
    return n


def check_eval_run_and_verify_images(name, model_dir, release_dir, pool_dir, tmp_path):
    from mvlsib.cli import build_cli, eval_cli

    model = model_dir(name)
    out = tmp_path / "run"
    result = CliRunner().invoke(
        eval_cli,
        [
            "run",
            "--data",
            str(release_dir),
            "--model",
            str(model),
            "--out",
            str(out),
            "--tasks",
            "i2s,s2i,t2s,s2t",
            "--k",
            "1,3,5",
            "--languages",
            EVAL_LANGUAGES[0],
            "--limit",
            "2",
            "--device",
            "cpu",
            "--no-progress",
            "--thinking-max-new-tokens",
            "6",
        ],
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    config = json.loads((out / "config.json").read_text("utf-8"))
    assert config["complete"] and config["backend"]["rendering"] in ("native", "inline")
    lines = (out / "predictions.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 2 * (3 + 3 + 1 + 3)
    # verify-images on one image per topic, one option order.
    small = tmp_path / "pool"
    small_pool(pool_dir, small)
    result = CliRunner().invoke(
        build_cli,
        [
            "verify-images",
            "--model",
            str(model),
            "--pool",
            str(small),
            "--out",
            str(tmp_path / "verify"),
            "--rotations",
            "1",
            "--allow-fail",
            "--device",
            "cpu",
            "--thinking-max-new-tokens",
            "6",
        ],
    )
    assert result.exit_code == 0, result.output + repr(result.exception)
    report = json.loads((tmp_path / "verify" / "report.json").read_text("utf-8"))
    assert report


def small_pool(pool_dir: Path, dest: Path) -> None:
    import csv

    with (pool_dir / "manifest.csv").open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.DictReader(fh))
    keep, seen = [], set()
    for row in rows:
        if row["topic"] not in seen:
            seen.add(row["topic"])
            keep.append(row)
    dest.mkdir(parents=True)
    for row in keep:
        target = dest / row["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(pool_dir / row["file"], target)
    with (dest / "manifest.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(keep)
