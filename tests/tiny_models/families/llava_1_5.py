"""LLaVA-1.5 as llava-hf ships it (``llava-hf/llava-1.5-7b-hf``): CLIP tower + Llama, one ``<image>``
per image in the rendered text, expanded by the processor to one token per patch.

The real template renders **all images of a turn first, then all its text** (each text part
followed by a space), so a prompt that interleaves images and text loses its order: the
evaluator must cope with that, which is why this family exists here.
"""

from __future__ import annotations

from pathlib import Path

from ._common import TINY_VISION, WIDE_ATTENTION, finish, save, tiny_llama_text, train_fast_tokenizer

FAMILY = "llava_1_5"
KIND = "generative"
WIDE = True
TEMPLATE_SOURCE = (
    "llava-hf/llava-1.5-7b-hf chat_template.json (701 bytes; the same text is in FriendliAI/llava-1.5-7b-hf, "
    "'Duplicate from llava-hf/llava-1.5-7b-hf', and in huggingface/transformers "
    "tests/models/llava/test_processing_llava.py prepare_processor_dict)"
)

# Verbatim; the Jinja comments are part of the shipped text.
CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}{% endif %}"
    "{# Render all images first #}{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}"
    "{{ '<image>\n' }}{% endfor %}{# Render all text next #}{% if message['role'] != 'assistant' %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ content['text'] + ' '}}"
    "{% endfor %}{% else %}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{% generation %}{{ content['text'] + ' '}}{% endgeneration %}{% endfor %}{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)

# The real Llama-2 tokenizer's specials plus llava-hf's added <image> and <pad>.
SPECIAL_TOKENS = ["<unk>", "<s>", "</s>", "<image>", "<pad>"]
IMAGE_SIZE = 24
PATCH_SIZE = 6  # (24 / 6)^2 = 16 image tokens (CLS dropped by the "default" strategy)


def build(out_dir: Path, texts: list[str], *, seed: int = 0, wide: bool = False) -> Path:
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        add_bos_token=True,  # the real Llama tokenizer prepends <s>; the template does not write it
        extra_special_tokens={"image_token": "<image>"},
    )
    image_processor = CLIPImageProcessor(
        size={"shortest_edge": IMAGE_SIZE},
        crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # as in the real processor_config.json (CLIP's CLS)
        chat_template=CHAT_TEMPLATE,
    )
    vision = CLIPVisionConfig(**TINY_VISION, image_size=IMAGE_SIZE, patch_size=PATCH_SIZE, projection_dim=32)
    text = LlamaConfig(**tiny_llama_text(tokenizer, **(WIDE_ATTENTION if wide else {})))
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,  # as the real config
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    return save(model, processor, Path(out_dir))
