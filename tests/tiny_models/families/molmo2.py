"""Molmo2 (``allenai/Molmo2-4B``, ``-8B``, ``-O-7B``; ``Molmo2ForConditionalGeneration``, native in transformers 5.24):
a SigLIP-style vision tower whose patch features (two layers concatenated) are attention-pooled 2x2 into image
tokens, and a Qwen3 (or OLMo) text model.

Real protocol kept: the template puts **every image first**, before the conversation (one image: ``<|image|>``;
several: ``Image 1<|image|>Image 2<|image|>...``), then the ChatML turns; the text parts of a message are
joined with a space; there is no system role (roles must alternate user/assistant) and no BOS in the
template. The tokenizer's BOS is ``<|im_end|>`` (the conversion script sets ``bos_token = eos_token`` for a
tokenizer without one) and ``Molmo2Processor`` *prepends it as text* to every prompt that does not start with
it, so the prompt's first ``<|im_end|>`` is that BOS and the user turn's own ``<|im_end|>`` follows. The
processor expands ``<|image|>`` into a low-resolution view (``<low_res_im_start>``, rows of ``<im_patch>``,
``<im_end>``) and a high-resolution view of overlapping crops (``<im_start>``, rows of ``<im_patch>`` each
ended by ``<im_col>``, ``<im_end>``); the model fills the ``<im_patch>`` positions. The image processor's
``image_token_pooling`` indexes the crops of the whole call, so per-prompt calls carry different offsets
than one batched call. The processor carries a video processor: it needs torchvision.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from ._common import finish, train_fast_tokenizer

FAMILY = "molmo2"
KIND = "generative"
NEEDS = ("torchvision",)
# The token the model fills with image features (the processor expands <|image|> into rows of it around
# view and crop markers): what the family checks count.
FILLED_TOKEN = "<im_patch>"
TEMPLATE_SOURCE = (
    "allenai/molmo2 olmo/hf_model/convert_molmo2_to_hf.py CHAT_TEMPLATE (commit d2c3055c, the template the "
    "conversion writes into every allenai/Molmo2-* checkpoint; a public copy of the Molmo2-4B checkpoint, "
    "albud1978/CV src/models/Molmo2-4B/chat_template.jinja, reads the same, 3,169 characters), stored verbatim "
    "in molmo2_convert_chat_template.jinja; BOS = EOS = "
    "<|im_end|>, left padding and the processor's token settings from the same script and the Molmo2-4B "
    "checkpoint's special_tokens_map.json / config.json"
)
TEMPLATE_SHA256 = "ec66862fda57dc1aef90a21b2a0f64c18a280e2483206449bd251a73b8993101"
# Verbatim; do not "fix" it: the evaluator must cope with what users really get.
CHAT_TEMPLATE = files(__package__).joinpath("molmo2_convert_chat_template.jinja").read_text(encoding="utf-8")

# Qwen3's control tokens, then Molmo2's image and video tokens (real ids 151936-151945), in the real order.
SPECIAL_TOKENS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<im_start>",
    "<im_end>",
    "<im_patch>",
    "<im_col>",
    "<low_res_im_start>",
    "<|image|>",
    "<im_low>",
    "<frame_start>",
    "<frame_end>",
    "<|video|>",
]
CROP = 56  # real 378
PATCH_SIZE = 14  # as the real tower
POOLING = [2, 2]  # as the real image pooling
MAX_CROPS = 2  # real 8


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        Molmo2AdapterConfig,
        Molmo2Config,
        Molmo2ForConditionalGeneration,
        Molmo2ImageProcessor,
        Molmo2Processor,
        Molmo2TextConfig,
        Molmo2VideoProcessor,
        Molmo2VisionConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        bos_token="<|im_end|>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
        extra_special_tokens={"image_token": "<|image|>", "video_token": "<|video|>"},
    )
    size = {"height": CROP, "width": CROP}
    image_processor = Molmo2ImageProcessor(
        size=size, patch_size=PATCH_SIZE, pooling_size=POOLING, max_crops=MAX_CROPS, overlap_margins=[1, 1]
    )
    video_processor = Molmo2VideoProcessor(size=size, patch_size=PATCH_SIZE, pooling_size=[3, 3], num_frames=4)
    processor = Molmo2Processor(
        image_processor=image_processor,
        video_processor=video_processor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        # As the Molmo2-4B checkpoint's processor: col tokens in the crops, none in the low-resolution view.
        image_use_col_tokens=True,
        use_single_crop_col_tokens=False,
        use_single_crop_start_token=True,
        video_use_col_tokens=False,
        use_frame_special_tokens=False,
    )
    ids = {t: tokenizer.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
    vision = Molmo2VisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=16,
        image_size=[CROP, CROP],
        patch_size=PATCH_SIZE,
    )
    adapter = Molmo2AdapterConfig(
        vision_feature_layer=[-1, -2],
        hidden_size=32,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=16,
        intermediate_size=64,
        text_hidden_size=64,
    )
    text = Molmo2TextConfig(
        hidden_size=64,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=16,
        vocab_size=len(tokenizer),
        additional_vocab_size=0,
        num_hidden_layers=2,
        intermediate_size=128,
        max_position_embeddings=4096,
    )
    config = Molmo2Config(
        vision_config=vision,
        adapter_config=adapter,
        text_config=text,
        image_start_token_id=ids["<im_start>"],
        low_res_image_start_token_id=ids["<low_res_im_start>"],
        image_end_token_id=ids["<im_end>"],
        image_patch_id=ids["<im_patch>"],
        frame_start_token_id=ids["<frame_start>"],
        frame_end_token_id=ids["<frame_end>"],
    )
    torch.manual_seed(seed)
    model = Molmo2ForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
