"""LLaVA-NeXT / LLaVA-1.6 as llava-hf ships it (``llava-hf/llava-v1.6-mistral-7b-hf``): CLIP tower +
Mistral, "anyres" images (a base view plus a grid of crops chosen from ``image_grid_pinpoints``).

The Mistral template wraps the user turn in ``[INST] ... [/INST]``, renders **all images first**
(``<image>\\n`` each) and then the text parts joined with nothing in between; it writes no BOS
(the tokenizer prepends ``<s>``). Each ``<image>`` expands to a number of tokens that depends
on the photo's size and aspect ratio (base view + unpadded grid features + one newline token
per grid row), so two photos of different shapes get different counts.
"""

from __future__ import annotations

from pathlib import Path

from ._common import TINY_VISION, finish, save, train_fast_tokenizer

FAMILY = "llava_next"
KIND = "generative"
TEMPLATE_SOURCE = (
    "llava-hf/llava-v1.6-mistral-7b-hf chat_template.json after its Hub commits 'fix escape char' and "
    "'support system msg' (Sep 2024): system branch, assistant turns closed with '</s> '; verbatim as the "
    "'llava-next' key of optimum-intel's COMPLEX_CHAT_TEMPLATES (which also keeps the older '<\\\\s> ' "
    "revision); openvinotoolkit/openvino.genai lists the same image/text layout for llava-v1.6-mistral"
)

CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'system' %}"
    "{{ '<<SYS>>\n' + message['content'][0]['text'] + '\n<</SYS>>\n\n' }}"
    "{% elif message['role'] == 'user' %}{{ '[INST] ' }}{# Render all images first #}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\n' }}{% endfor %}"
    "{# Render all text next #}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{ content['text'] }}{% endfor %}{{' [/INST]' }}{% elif message['role'] == 'assistant' %}"
    "{{ ' ' + message['content'][0]['text'] + '</s> '}}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}"
)

SPECIAL_TOKENS = ["<unk>", "<s>", "</s>", "<image>", "<pad>"]
BASE = 24  # the real base view is 336
PATCH_SIZE = 12  # 2 x 2 patches per view (the real one: 24 x 24 of 14 px)
# The real pinpoints [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]], scaled by 24 / 336.
GRID_PINPOINTS = [[24, 48], [48, 24], [48, 48], [72, 24], [24, 72]]


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlavaNextConfig,
        LlavaNextForConditionalGeneration,
        LlavaNextImageProcessor,
        LlavaNextProcessor,
        MistralConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        add_bos_token=True,  # the Mistral tokenizer prepends <s>; the template does not write it
        extra_special_tokens={"image_token": "<image>"},
    )
    image_processor = LlavaNextImageProcessor(
        size={"shortest_edge": BASE},
        crop_size={"height": BASE, "width": BASE},
        image_grid_pinpoints=GRID_PINPOINTS,
    )
    processor = LlavaNextProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # CLIP's CLS, as in the real processor_config.json
        chat_template=CHAT_TEMPLATE,
    )
    vision = CLIPVisionConfig(**TINY_VISION, image_size=BASE, patch_size=PATCH_SIZE, projection_dim=32)
    text = MistralConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = LlavaNextConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids("<image>"),
        image_grid_pinpoints=GRID_PINPOINTS,
        vision_feature_select_strategy="default",
        vision_feature_layer=-2,
        image_seq_length=(BASE // PATCH_SIZE) ** 2,
    )
    torch.manual_seed(seed)
    model = LlavaNextForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    return save(model, processor, Path(out_dir))
