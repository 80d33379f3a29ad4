"""LFM2-VL (``LiquidAI/LFM2-VL-1.6B`` and siblings, ``Lfm2VlForConditionalGeneration``): a SigLIP 2 (NaFlex) tower,
pixel-unshuffled 2x2 into image tokens, an LFM2 text model (short convolutions and attention layers).

Real protocol kept: the template writes ``{{bos_token}}`` (the processor tokenizes with
``add_special_tokens=False``), ChatML turns, each image in place as ``<image>``, no default system
turn. The processor expands ``<image>`` into ``<|image_start|>`` ... ``<|image_end|>``: a small image is
resized (aspect ratio kept, within ``min_image_tokens``..``max_image_tokens``); a large one is split into
tiles, each ``<|img_row_r_col_c|>`` + its tokens, then ``<|img_thumbnail|>`` + the thumbnail's tokens.
``Lfm2VlImageProcessor`` requires torchvision.
"""

from __future__ import annotations

from pathlib import Path

from ._common import TINY_VISION, finish, train_fast_tokenizer

FAMILY = "lfm2_vl"
KIND = "generative"
NEEDS = ("torchvision",)
TEMPLATE_SOURCE = (
    "LiquidAI/LFM2-VL-1.6B chat template as huggingface/transformers tests/models/lfm2_vl/"
    "test_processing_lfm2_vl.py prepare_processor_dict() gives it (its processor is loaded from "
    "LiquidAI/LFM2-VL-1.6B with this chat_template)"
)
CHAT_TEMPLATE = (
    "{{bos_token}}{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\n'}}"
    "{% if message['content'] is string %}"
    "{{ message['content'] }}"
    "{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' %}"
    "{{ '<image>' }}"
    "{% elif content['type'] == 'text' %}"
    "{{ content['text'] }}"
    "{% endif %}"
    "{% endfor %}"
    "{% endif %}"
    "{{'<|im_end|>\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}"
    "{{'<|im_start|>assistant\n' }}"
    "{% endif %}"
)

MAX_TILES = 4  # real 10
SPECIAL_TOKENS = (
    ["<|pad|>", "<|startoftext|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>"]
    + ["<|image_start|>", "<|image_end|>", "<|img_thumbnail|>"]
    + [f"<|img_row_{r}_col_{c}|>" for r in range(1, MAX_TILES + 1) for c in range(1, MAX_TILES + 1)]
)
PATCH_SIZE = 4  # the real encoder's patches are 16 pixels
DOWNSAMPLE = 2  # as the real downsample_factor
TILE = 16  # real 512: 4 image tokens per tile here
MIN_IMAGE_TOKENS, MAX_IMAGE_TOKENS = 4, 16  # real 64, 256


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        Lfm2Config,
        Lfm2VlConfig,
        Lfm2VlForConditionalGeneration,
        Lfm2VlImageProcessor,
        Lfm2VlProcessor,
        Siglip2VisionConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        bos_token="<|startoftext|>",
        eos_token="<|im_end|>",
        pad_token="<|pad|>",
        padding_side="left",
        extra_special_tokens={"image_token": "<image>"},
    )
    image_processor = Lfm2VlImageProcessor(
        encoder_patch_size=PATCH_SIZE,
        downsample_factor=DOWNSAMPLE,
        tile_size=TILE,
        min_tiles=2,
        max_tiles=MAX_TILES,
        min_image_tokens=MIN_IMAGE_TOKENS,
        max_image_tokens=MAX_IMAGE_TOKENS,
        do_image_splitting=True,
        use_thumbnail=True,
    )
    processor = Lfm2VlProcessor(image_processor=image_processor, tokenizer=tokenizer, chat_template=CHAT_TEMPLATE)
    vision = Siglip2VisionConfig(**TINY_VISION, patch_size=PATCH_SIZE, num_patches=image_processor.max_num_patches)
    text = Lfm2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        layer_types=["conv", "full_attention"],
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    config = Lfm2VlConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        downsample_factor=DOWNSAMPLE,
        projector_hidden_size=64,
    )
    torch.manual_seed(seed)
    model = Lfm2VlForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
