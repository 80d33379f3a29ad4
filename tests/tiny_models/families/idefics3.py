"""Idefics3 (``HuggingFaceM4/Idefics3-8B-Llama3``): SigLIP-like tower with pixel-shuffle connector,
Llama 3 text model, images split into a grid of tiles plus a downscaled global view.

The template starts with a literal ``<|begin_of_text|>`` and the Llama 3 tokenizer prepends
another one; images stay in place as ``<image>``; the role separator is ``":"`` (no space)
when the turn's first part is an image, else ``": "``. The processor expands each
``<image>`` to, per tile, ``<fake_token_around_image><row_r_col_c>`` + ``image_seq_len`` ×
``<image>`` (rows separated by ``\\n``), then ``\\n\\n<fake_token_around_image><global-img>`` +
``image_seq_len`` × ``<image><fake_token_around_image>``. In Idefics3 ``<global-img>`` and the
``<row_r_col_c>`` tags are ordinary text (the real vocabulary only adds
``<end_of_utterance>``, ``<image>``, ``<fake_token_around_image>`` to Llama 3's).
"""

from __future__ import annotations

from pathlib import Path

from ._common import TINY_VISION, WIDE_ATTENTION, finish, save, tiny_llama_text, train_fast_tokenizer

FAMILY = "idefics3"
KIND = "generative"
WIDE = True
TEMPLATE_SOURCE = (
    "HuggingFaceM4/Idefics3-8B-Llama3 processor_config.json, 'chat_template' (Hub revision "
    "92a708af3b96e7fe9aeac5d439a1f64083868a05); huggingface/transformers "
    "tests/models/idefics3/test_processing_idefics3.py::test_apply_chat_template asserts its rendering"
)

CHAT_TEMPLATE = (
    "<|begin_of_text|>{% for message in messages %}{{message['role'].capitalize()}}"
    "{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n"
    "{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)

SPECIAL_TOKENS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|finetune_right_pad_id|>",
    "<end_of_utterance>",
    "<image>",
    "<fake_token_around_image>",
]
TILE = 32  # the tower's input size: the real one is 364
PATCH_SIZE = 8  # 4 x 4 patches per tile ...
SCALE_FACTOR = 2  # ... pixel-shuffled 2 x 2 (as the real model) to 4 <image> tokens per tile
IMAGE_SEQ_LEN = (TILE // PATCH_SIZE) ** 2 // SCALE_FACTOR**2
MAX_TILES_PER_SIDE = 2  # size.longest_edge = 2 x tile (the real one is 4 x 364)


def build(out_dir: Path, texts: list[str], *, seed: int = 0, wide: bool = False) -> Path:
    import torch
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessor,
        Idefics3Processor,
        Idefics3VisionConfig,
        LlamaConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        bos_token="<|begin_of_text|>",
        eos_token="<|end_of_text|>",
        pad_token="<|finetune_right_pad_id|>",
        unk_token="<|end_of_text|>",
        add_bos_token=True,  # Llama 3's tokenizer prepends <|begin_of_text|> though the template writes one
    )
    image_processor = Idefics3ImageProcessor(
        size={"longest_edge": MAX_TILES_PER_SIDE * TILE},
        max_image_size={"longest_edge": TILE},
        do_image_splitting=True,
    )
    processor = Idefics3Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        image_seq_len=IMAGE_SEQ_LEN,
        chat_template=CHAT_TEMPLATE,
    )
    vision = Idefics3VisionConfig(**TINY_VISION, image_size=TILE, patch_size=PATCH_SIZE)
    end_of_utterance = tokenizer.convert_tokens_to_ids("<end_of_utterance>")
    text = LlamaConfig(**tiny_llama_text(tokenizer, **(WIDE_ATTENTION if wide else {"num_key_value_heads": 2})))
    config = Idefics3Config(
        vision_config=vision,
        text_config=text,
        scale_factor=SCALE_FACTOR,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Idefics3ForConditionalGeneration(config).eval()
    # The chat model ends its turn with <end_of_utterance>.
    finish(model, tokenizer, eos=[end_of_utterance, tokenizer.eos_token_id])
    return save(model, processor, Path(out_dir))
