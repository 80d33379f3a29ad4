"""SmolVLM2 (``HuggingFaceTB/SmolVLM2-256M-Video-Instruct`` and siblings, ``SmolVLMForConditionalGeneration``):
the Idefics3 recipe on SmolLM2, with its own processor that also carries a video processor.

The template starts with a literal ``<|im_start|>`` (SmolLM2's BOS) and the tokenizer adds none;
images stay in place as ``<image>``; the role separator is ``":"`` when the turn opens with an
image, else ``": "``. Each ``<image>`` expands like Idefics3's (tile grid + global view), but
``<global-img>`` and the ``<row_r_col_c>`` tags are single added tokens in SmolVLM's vocabulary.
Loading the processor needs ``num2words`` (the processor refuses to start without it) and a
video processor, whose transformers class needs torchvision to *run*; tests load it with the
never-called stand-in in ``tests/support/fakes/``.
"""

from __future__ import annotations

from pathlib import Path

from ._common import TINY_VISION, finish, tiny_llama_text, train_fast_tokenizer
from ._processor_files import save_processor_files

FAMILY = "smolvlm"
KIND = "generative"
TEMPLATE_SOURCE = (
    "HuggingFaceTB/SmolVLM2-256M-Video-Instruct chat_template.json (430 bytes), verbatim as in "
    "huggingface/transformers tests/models/smolvlm/test_processing_smolvlm.py prepare_processor_dict (whose "
    "tiny processor is 'created from HuggingFaceTB/SmolVLM2-256M-Video-Instruct'); transformers' own "
    "DEFAULT_CHAT_TEMPLATE (with <video>) replaces it only when a message holds a video"
)

CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}"
    "{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n"
    "{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)

# SmolLM2's first three tokens, then SmolVLM's added vision tokens (real ids 0-2, 49152-49190, 49279).
SPECIAL_TOKENS = (
    ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<global-img>"]
    + [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
    + ["<fake_token_around_image>", "<image>", "<end_of_utterance>"]
)
TILE = 32  # the tower's input size: the real one is 512
PATCH_SIZE = 4  # 8 x 8 patches per tile ...
SCALE_FACTOR = 4  # ... pixel-shuffled 4 x 4 (as the real 256M/500M models) to 4 <image> tokens per tile
IMAGE_SEQ_LEN = (TILE // PATCH_SIZE) ** 2 // SCALE_FACTOR**2
MAX_TILES_PER_SIDE = 2


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        LlamaConfig,
        SmolVLMConfig,
        SmolVLMForConditionalGeneration,
        SmolVLMImageProcessor,
        SmolVLMVisionConfig,
    )

    # The real class (not the top-level dummy that stands for it without torchvision): building and
    # saving its config needs no torchvision, only processing videos does.
    from transformers.models.smolvlm.video_processing_smolvlm import SmolVLMVideoProcessor

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        bos_token="<|im_start|>",
        eos_token="<end_of_utterance>",
        pad_token="<|im_end|>",
        unk_token="<|endoftext|>",
        extra_special_tokens={
            "fake_image_token": "<fake_token_around_image>",
            "image_token": "<image>",
            "end_of_utterance_token": "<end_of_utterance>",
            "global_image_token": "<global-img>",
        },
    )
    image_processor = SmolVLMImageProcessor(
        size={"longest_edge": MAX_TILES_PER_SIDE * TILE},
        max_image_size={"longest_edge": TILE},
        do_image_splitting=True,
    )
    video_processor = SmolVLMVideoProcessor(
        size={"longest_edge": TILE},
        max_image_size={"longest_edge": TILE},
    )
    vision = SmolVLMVisionConfig(**TINY_VISION, image_size=TILE, patch_size=PATCH_SIZE)
    text = LlamaConfig(**tiny_llama_text(tokenizer, num_key_value_heads=2))
    config = SmolVLMConfig(
        vision_config=vision,
        text_config=text,
        scale_factor=SCALE_FACTOR,
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = SmolVLMForConditionalGeneration(config).eval()
    finish(model, tokenizer)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    # SmolVLMProcessor(...) cannot be constructed without torchvision (see _processor_files).
    save_processor_files(
        out,
        processor_class="SmolVLMProcessor",
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        components={"image_processor": image_processor, "video_processor": video_processor},
        image_seq_len=IMAGE_SEQ_LEN,
    )
    return out
