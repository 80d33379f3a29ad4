"""Llama 4 (``meta-llama/Llama-4-Scout-17B-16E-Instruct``, ``Llama4ForConditionalGeneration``): a tiled vision
encoder with pixel shuffle, a mixture-of-experts text model with chunked attention.

The template is the one ``Llama4Processor`` carries as its default (the checkpoints' template): it
writes ``{{- bos_token }}``, ``<|header_start|>user<|header_end|>\\n\\n`` turns and each image in place as
``<|image|>``; the processor expands it into ``<|image_start|>`` + tiles of ``<|patch|>`` tokens with
tile separators + ``<|image|>`` + the global view + ``<|image_end|>``. ``Llama4ImageProcessor`` requires
torchvision. In transformers 5.24 the model's own forward pass fails on every call
(``'MoeCausalLMOutputWithPast' object has no attribute 'image_outputs'``); this family is kept to
check that the evaluator says so in one line (``KNOWN_LIBRARY_FAILURE``).
"""

from __future__ import annotations

from pathlib import Path

from ._common import finish, train_fast_tokenizer

FAMILY = "llama4"
KIND = "generative"
NEEDS = ("torchvision",)
TEMPLATE_SOURCE = (
    "the chat_template default of huggingface/transformers src/transformers/models/llama4/processing_llama4.py "
    "(Llama4Processor), read from the installed transformers at build time"
)
# The failure transformers 5.24 raises inside Llama4ForConditionalGeneration.forward, whatever the input.
KNOWN_LIBRARY_FAILURE = "image_outputs"

SPECIAL_TOKENS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|finetune_right_pad|>",
    "<|header_start|>",
    "<|header_end|>",
    "<|eom|>",
    "<|eot|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|image_start|>",
    "<|image_end|>",
    "<|image|>",
    "<|patch|>",
    "<|tile_x_separator|>",
    "<|tile_y_separator|>",
]
TILE = 16  # real 336
PATCH_SIZE = 4  # real 14


def chat_template() -> str:
    from transformers.models.llama4 import processing_llama4

    return processing_llama4.chat_template


def __getattr__(name: str):
    # The template lives in transformers: read it only when asked (importing this module stays light).
    if name == "CHAT_TEMPLATE":
        return chat_template()
    raise AttributeError(name)


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        Llama4Config,
        Llama4ForConditionalGeneration,
        Llama4ImageProcessor,
        Llama4Processor,
        Llama4TextConfig,
        Llama4VisionConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        bos_token="<|begin_of_text|>",
        eos_token="<|eot|>",
        pad_token="<|finetune_right_pad|>",
        padding_side="left",
    )
    image_processor = Llama4ImageProcessor(size={"height": TILE, "width": TILE}, max_patches=4)
    processor = Llama4Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        pixel_shuffle_ratio=0.5,
        chat_template=chat_template(),
    )
    ids = tokenizer.convert_tokens_to_ids
    vision = Llama4VisionConfig(
        hidden_size=32,
        intermediate_size=128,  # = hidden size x 4: the pixel-shuffled width, as 1408 -> 5632 in the real tower
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=TILE,
        patch_size=PATCH_SIZE,
        vision_output_dim=64,
        projector_input_dim=64,
        projector_output_dim=64,
        pixel_shuffle_ratio=0.5,
    )
    text = Llama4TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=64,
        intermediate_size_mlp=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        num_local_experts=2,
        num_experts_per_tok=1,
        attention_chunk_size=64,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = Llama4Config(
        vision_config=vision,
        text_config=text,
        boi_token_index=ids("<|image_start|>"),
        eoi_token_index=ids("<|image_end|>"),
        image_token_index=ids("<|patch|>"),
    )
    torch.manual_seed(seed)
    model = Llama4ForConditionalGeneration(config).eval()
    finish(model, tokenizer, eos=[tokenizer.eos_token_id, ids("<|eom|>"), ids("<|end_of_text|>")])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
