"""LLaVA-1.5 as llava-hf ships it (``llava-hf/llava-1.5-7b-hf``): CLIP tower + Llama, one ``<image>``
per image in the rendered text, expanded by the processor to one token per patch.

The real template renders **all images of a turn first, then all its text** (each text part
followed by a space), so a prompt that interleaves images and text loses its order: the
evaluator must cope with that, which is why this family exists here.
"""

from __future__ import annotations

from pathlib import Path

FAMILY = "llava_1_5"
KIND = "generative"
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


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        CLIPImageProcessor,
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    from mvlsib.testing.families._common import favour_letters, save, train_fast_tokenizer

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
    vision = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=IMAGE_SIZE,
        patch_size=PATCH_SIZE,
        projection_dim=32,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,  # as the real config
    )
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config).eval()
    favour_letters(model, tokenizer)
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return save(model, processor, Path(out_dir))
