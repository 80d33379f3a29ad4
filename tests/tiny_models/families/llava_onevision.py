"""LLaVA-OneVision as llava-hf ships it (``llava-hf/llava-onevision-qwen2-0.5b-ov-hf`` and siblings):
SigLIP tower + Qwen2, "anyres_max_9" images (base view + grid of crops, pooled back when large).

The ChatML-style template renders **all images of a turn first** (``<image>\\n`` each), then
videos, then the text parts joined with nothing in between; it writes no system turn and no
BOS (Qwen2 has none). Each ``<image>`` expands to base-view tokens + grid tokens with one
newline token per grid row, depending on the photo's size. The processor also carries a
video processor whose transformers class needs torchvision to run, so loading it here needs
the tests' never-called stand-in (``tests/support/fakes/``).
"""

from __future__ import annotations

from pathlib import Path

from ._common import TINY_VISION, WIDE_ATTENTION, finish, train_fast_tokenizer
from ._processor_files import save_processor_files

FAMILY = "llava_onevision"
KIND = "generative"
WIDE = True
TEMPLATE_SOURCE = (
    "llava-hf/llava-onevision-qwen2-*-ov-hf chat template, verbatim from huggingface/transformers "
    "src/transformers/models/llava_onevision/convert_llava_onevision_weights_to_hf.py (chat_template, "
    "which the conversion passes to the processor it saves); 824 bytes as chat_template.json, as in "
    "llava-hf-derived checkpoints such as AIML-TUDA/LlavaGuard-v1.2-0.5B-OV-hf"
)

CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n'}}{# Render all images first #}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\n' }}{% endfor %}"
    "{# Render all video then #}{% for content in message['content'] | selectattr('type', 'equalto', 'video') %}"
    "{{ '<video>\n' }}{% endfor %}{# Render all text next #}{% if message['role'] != 'assistant' %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ content['text'] }}{% endfor %}"
    "{% else %}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{% generation %}"
    "{{ content['text'] }}{% endgeneration %}{% endfor %}{% endif %}{{'<|im_end|>' + '\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

# Qwen2's specials and the two tokens the conversion adds.
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"]
BASE = 24  # the real base view is 384
PATCH_SIZE = 12  # 2 x 2 patches per view (the real one: 27 x 27 of 14 px = 729 tokens)
NUM_IMAGE_TOKENS = (BASE // PATCH_SIZE) ** 2
# The real pinpoints are every [384 i, 384 j] for i, j in 1..6; scaled by 24 / 384.
GRID_PINPOINTS = [[BASE * i, BASE * j] for i in range(1, 7) for j in range(1, 7)]


def build(out_dir: Path, texts: list[str], *, seed: int = 0, wide: bool = False) -> Path:
    import torch
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionImageProcessor,
        Qwen2Config,
        SiglipVisionConfig,
    )

    # The real class, not the top-level dummy that stands for it without torchvision: building and
    # serialising its config needs no torchvision, only processing videos does.
    from transformers.models.llava_onevision.video_processing_llava_onevision import LlavaOnevisionVideoProcessor

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        extra_special_tokens={"image_token": "<image>", "video_token": "<video>"},
    )
    image_processor = LlavaOnevisionImageProcessor(
        size={"height": BASE, "width": BASE},
        image_grid_pinpoints=GRID_PINPOINTS,
    )
    video_processor = LlavaOnevisionVideoProcessor(size={"height": BASE, "width": BASE})
    vision = SiglipVisionConfig(**TINY_VISION, image_size=BASE, patch_size=PATCH_SIZE, vision_use_head=False)
    text = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        max_position_embeddings=4096,
        **(WIDE_ATTENTION if wide else {"num_attention_heads": 4, "num_key_value_heads": 2}),
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = LlavaOnevisionConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"),
        image_grid_pinpoints=GRID_PINPOINTS,
        vision_feature_select_strategy="full",
        vision_aspect_ratio="anyres_max_9",
        use_image_newline_parameter=True,
    )
    torch.manual_seed(seed)
    model = LlavaOnevisionForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    # LlavaOnevisionProcessor(...) cannot be constructed without torchvision (see _processor_files).
    save_processor_files(
        out,
        processor_class="LlavaOnevisionProcessor",
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        components={"image_processor": image_processor, "video_processor": video_processor},
        num_image_tokens=NUM_IMAGE_TOKENS,
        vision_feature_select_strategy="full",
        vision_aspect_ratio="anyres_max_9",
        image_token="<image>",
        video_token="<video>",
    )
    return out
