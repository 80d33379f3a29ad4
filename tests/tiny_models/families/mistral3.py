"""Mistral 3 (``mistralai/Mistral-Small-3.1-24B-Instruct-2503``, ``Mistral3ForConditionalGeneration``): a Pixtral
vision tower whose patches are merged 2x2, a Mistral text model, and the Pixtral processor.

Real protocol kept: the template writes ``{{- bos_token }}`` and a ``[SYSTEM_PROMPT]...[/SYSTEM_PROMPT]``
block with the default system message (which names today's date: ``strftime_now``) when the
conversation has none; the user turn is ``[INST]...[/INST]`` with each image in place as ``[IMG]``;
text parts are not trimmed. The processor expands each ``[IMG]`` into rows of ``[IMG]`` tokens (one per
2x2 merge of patches) each ended by ``[IMG_BREAK]``, the last by ``[IMG_END]``, the image resized to
keep its aspect ratio within ``longest_edge``. The tokenizer here also prepends ``<s>`` (the harder
case: the evaluator must not send two BOS). ``PixtralProcessor`` requires torchvision.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from ._common import TINY_VISION, WIDE_ATTENTION, finish, tiny_llama_text, train_fast_tokenizer

FAMILY = "mistral3"
KIND = "generative"
WIDE = True
NEEDS = ("torchvision",)
TEMPLATE_SOURCE = (
    "ggml-org/llama.cpp models/templates/mistralai-Mistral-Small-3.1-24B-Instruct-2503.jinja (the "
    "checkpoint's chat template), stored verbatim in mistral_small_3_1_instruct_2503.jinja"
)
# Verbatim; do not "fix" it: the evaluator must cope with what users really get.
CHAT_TEMPLATE = files(__package__).joinpath("mistral_small_3_1_instruct_2503.jinja").read_text(encoding="utf-8")

# The Tekken vocabulary's control tokens in their real order (ids 0-19).
SPECIAL_TOKENS = [
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
]
PATCH_SIZE = 4  # the real tower's patches are 14 pixels
MERGE = 2  # as the real spatial_merge_size
LONGEST_EDGE = 32  # real 1540: at most (32 / 8)^2 = 16 [IMG] tokens per image here


def build(out_dir: Path, texts: list[str], *, seed: int = 0, wide: bool = False) -> Path:
    import torch
    from transformers import (
        Mistral3Config,
        Mistral3ForConditionalGeneration,
        MistralConfig,
        PixtralImageProcessor,
        PixtralProcessor,
        PixtralVisionConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        add_bos_token=True,
        padding_side="left",
    )
    image_processor = PixtralImageProcessor(
        size={"longest_edge": LONGEST_EDGE}, patch_size={"height": PATCH_SIZE, "width": PATCH_SIZE}
    )
    processor = PixtralProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        spatial_merge_size=MERGE,
        chat_template=CHAT_TEMPLATE,
    )
    vision = PixtralVisionConfig(
        **TINY_VISION, image_size=LONGEST_EDGE, patch_size=PATCH_SIZE, head_dim=TINY_VISION["hidden_size"] // 2
    )
    attention = WIDE_ATTENTION if wide else {"num_key_value_heads": 2, "head_dim": 16}
    text = MistralConfig(**tiny_llama_text(tokenizer, **attention, sliding_window=None))
    config = Mistral3Config(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("[IMG]"),
        spatial_merge_size=MERGE,
        vision_feature_layer=-1,
    )
    torch.manual_seed(seed)
    model = Mistral3ForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
