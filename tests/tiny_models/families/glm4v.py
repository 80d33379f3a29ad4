"""GLM-4.1V (``zai-org/GLM-4.1V-9B-Thinking``, ``Glm4vForConditionalGeneration``): a ViT with 14-pixel patches
merged 2x2 (3D-RoPE and interpolated 2D position embeddings) and a GLM-4 text model with mrope.

Real protocol kept: the template writes ``[gMASK]<sop>`` itself (the tokenizer has no BOS and adds
nothing), turns are ``<|user|>\\n`` / ``<|assistant|>\\n`` without end-of-turn markers, each image is in
place as ``<|begin_of_image|><|image|><|end_of_image|>`` and text parts are written as they are. The
generation prompt is ``<|assistant|>\\n``: it opens no thinking block, yet the Thinking model always
thinks -- it writes ``<think>...</think><answer>...</answer>`` itself. The template knows no
``enable_thinking``. The processor expands ``<|image|>`` into one ``<|image|>`` per 2x2 merge of patches
(its grid, ``image_grid_thw``), and returns ``mm_token_type_ids`` beside the input ids. Stop tokens are
``<|endoftext|>``, ``<|user|>`` and ``<|observation|>`` (the checkpoint's ``generation_config.json``).
The processor carries a video processor (``Glm4vVideoProcessor``), and ``Glm4vImageProcessor`` is a
torchvision backend: loading the processor needs torchvision.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from ._common import finish, train_fast_tokenizer

FAMILY = "glm4v"
KIND = "generative"
NEEDS = ("torchvision",)
TEMPLATE_SOURCE = (
    "the chat template of zai-org/GLM-4.1V-9B-Thinking at revision 3c1471e51dc811b589d4d12b1c1c7c1c941267c2, "
    "as Yangjunjie-Lin/vlm-synergy-qualification reports/atomic_v2/renderer_validation.md records it "
    "(official_chat_template, read from the checkpoint's Glm4vProcessor) with its sha256 "
    "(5232dbe7..., of the template's JSON string form), stored verbatim in glm4_1v_9b_thinking.jinja (a prompt the "
    "real processor rendered, recorded there by hash, is reproduced byte for byte); "
    "tokenizer special tokens, no BOS, left padding: the checkpoint's tokenizer as printed in "
    "zai-org/GLM-V issue #95 and ai-bot-pro/achatbot PR #168"
)
# Verbatim (no trailing newline); do not "fix" it: the evaluator must cope with what users really get.
CHAT_TEMPLATE = files(__package__).joinpath("glm4_1v_9b_thinking.jinja").read_text(encoding="utf-8")
# sha256 of json.dumps(CHAT_TEMPLATE), as the public record gives it.
TEMPLATE_JSON_SHA256 = "5232dbe7ee947df4d2009f2b262b70a22d4f2d2f0590e2af4ef2a78096171e90"

# The checkpoint tokenizer's additional_special_tokens, in their id order (151329...).
SPECIAL_TOKENS = [
    "<|endoftext|>",
    "[MASK]",
    "[gMASK]",
    "[sMASK]",
    "<sop>",
    "<eop>",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|observation|>",
    "<|begin_of_image|>",
    "<|end_of_image|>",
    "<|begin_of_video|>",
    "<|end_of_video|>",
    "<|image|>",
    "<|video|>",
]
# Single tokens of the Thinking model's output format that the tokenizer does not list as special,
# so a decode with skip_special_tokens=True keeps them.
PLAIN_ADDED_TOKENS = ["<think>", "</think>", "<answer>", "</answer>", "<|begin_of_box|>", "<|end_of_box|>"]
STOPS = ["<|endoftext|>", "<|user|>", "<|observation|>"]  # generation_config.json eos_token_id
PATCH_SIZE = 14  # as the real tower
MERGE_SIZE = 2
MAX_MERGED = 4  # at most 4 x 4 merged patches: <= 16 image tokens (the real budget is far larger)


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from tokenizers import AddedToken
    from transformers import (
        Glm4vConfig,
        Glm4vForConditionalGeneration,
        Glm4vImageProcessor,
        Glm4vProcessor,
        Glm4vVideoProcessor,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )
    tokenizer.add_tokens([AddedToken(t, normalized=False, special=False) for t in PLAIN_ADDED_TOKENS])
    ids = tokenizer.convert_tokens_to_ids
    unit = PATCH_SIZE * MERGE_SIZE
    # smart_resize counts the two temporal copies of an image: the pixel budget is 2 x h x w.
    size = {"shortest_edge": 2 * unit * unit, "longest_edge": 2 * (MAX_MERGED * unit) ** 2}
    image_processor = Glm4vImageProcessor(
        size=size, patch_size=PATCH_SIZE, merge_size=MERGE_SIZE, temporal_patch_size=2
    )
    video_processor = Glm4vVideoProcessor(
        size=size, patch_size=PATCH_SIZE, merge_size=MERGE_SIZE, temporal_patch_size=2
    )
    processor = Glm4vProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=video_processor,
        chat_template=CHAT_TEMPLATE,
    )
    stops = [ids(t) for t in STOPS]
    config = Glm4vConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "pad_token_id": tokenizer.pad_token_id,
            # half of each 16-dim head rotates, its half split over (t, h, w) as the real [8, 12, 12] of 128
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "partial_rotary_factor": 0.5,
                "mrope_section": [2, 1, 1],
            },
        },
        vision_config={
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "image_size": 4 * unit,  # position embeddings of a 8 x 8 patch grid, interpolated per image
            "patch_size": PATCH_SIZE,
            "spatial_merge_size": MERGE_SIZE,
            "temporal_patch_size": 2,
            "out_hidden_size": 64,
        },
        image_token_id=ids("<|image|>"),
        video_token_id=ids("<|video|>"),
        image_start_token_id=ids("<|begin_of_image|>"),
        image_end_token_id=ids("<|end_of_image|>"),
        video_start_token_id=ids("<|begin_of_video|>"),
        video_end_token_id=ids("<|end_of_video|>"),
    )
    torch.manual_seed(seed)
    model = Glm4vForConditionalGeneration(config).eval()
    finish(model, tokenizer, eos=stops)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
