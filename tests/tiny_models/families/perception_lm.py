"""PerceptionLM (``facebook/Perception-LM-1B`` / ``-3B`` / ``-8B``, ``PerceptionLMForConditionalGeneration``): a
Perception Encoder ViT (a timm ``vit_pe_core_*`` network behind ``TimmWrapperModel``), a two-layer projector
with 2x2 average pooling, and a Llama 3 text model.

Real protocol kept: the template writes ``{{- bos_token }}`` and a default system turn when the conversation
has none, then Llama 3 header turns in which **all images of a turn come first** (``<|image|>`` each,
then videos), followed by the turn's text parts, each ``trim``med and glued together. The tokenizer also
adds ``<|begin_of_text|>`` (the real one's post-processor does). The processor (``thumb+tile``) cuts each
image into a grid of tiles plus a thumbnail and expands ``<|image|>`` into
``(tile / patch / pooling)^2`` tokens per tile, nothing around them. The image processor requires
torchvision and the vision tower timm.
"""

from __future__ import annotations

from pathlib import Path

from ._common import finish, tiny_llama_text, train_fast_tokenizer

FAMILY = "perception_lm"
KIND = "generative"
NEEDS = ("torchvision", "timm")
TEMPLATE_SOURCE = (
    "huggingface/transformers src/transformers/models/perception_lm/convert_perception_lm_weights_to_hf.py "
    "(CHAT_TEMPLATE, which the conversion gives the PerceptionLMProcessor it saves for the facebook/Perception-LM-* "
    "checkpoints)"
)
# Verbatim: the converter's Python string (its "\\n" are backslash-n inside Jinja string literals, which
# Jinja reads as newlines; the two bare "\n" are newlines between Jinja tags). Do not "fix" it.
CHAT_TEMPLATE = (
    "{{- bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "    {%- set system_message = messages[0]['content']|trim %}\n"
    "    {%- set messages = messages[1:] %}\n"
    "{%- else %}"
    "    {%- set system_message = 'You are a helpful language and vision assistant. You are able to understand the "
    "visual content that the user provides, and assist the user with a variety of tasks using natural language.' %}"
    "{%- endif %}"
    "{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}"
    "{{- system_message }}"
    "{{- '<|eot_id|>' }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'image') %}"
    "{{ '<|image|>' }}"
    "{%- endfor %}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'video') %}"
    "{{ '<|video|>' }}"
    "{%- endfor %}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{- content['text'] | trim }}"
    "{%- endfor %}"
    "{{'<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)

# The converter's DEFAULT_SPECIAL_TOKENS, first ten (the Llama 3 control tokens in their order).
SPECIAL_TOKENS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|image|>",
    "<|video|>",
    "<|reserved_special_token_2|>",
    "<|reserved_special_token_3|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|reserved_special_token_4|>",
    "<|eot_id|>",
]
PATCH_SIZE = 14  # as the real Perception Encoder
POOLING = 2  # as the real processor's pooling_ratio / projector_pooling_ratio
TILE = 56  # real 448: (56 / 14 / 2)^2 = 4 image tokens per tile
MAX_TILES = 4  # real 36: at most a 2x2 grid + the thumbnail, 20 tokens per image


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        LlamaConfig,
        PerceptionLMConfig,
        PerceptionLMForConditionalGeneration,
        PerceptionLMImageProcessor,
        PerceptionLMProcessor,
        PerceptionLMVideoProcessor,
        TimmWrapperConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        bos_token="<|begin_of_text|>",
        eos_token="<|eot_id|>",
        pad_token="<|end_of_text|>",
        add_bos_token=True,
        padding_side="left",
        extra_special_tokens={"image_token": "<|image|>", "video_token": "<|video|>"},
    )
    # As the converter's image_preprocessor_config, at the tiny tile size.
    image_processor = PerceptionLMImageProcessor(
        vision_input_type="thumb+tile",
        tile_size=TILE,
        max_num_tiles=MAX_TILES,
        max_frame_tiles=1,
        size={"height": TILE, "width": TILE},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
    )
    video_processor = PerceptionLMVideoProcessor(size={"height": TILE, "width": TILE})
    processor = PerceptionLMProcessor(
        image_processor=image_processor,
        video_processor=video_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        pooling_ratio=POOLING,
        chat_template=CHAT_TEMPLATE,
    )
    # The converter's model_args for the timm Perception Encoder, at a tiny width and depth.
    grid = TILE // PATCH_SIZE
    vision = TimmWrapperConfig(
        architecture="vit_pe_core_large_patch14_336",
        model_args={
            "embed_dim": 32,
            "depth": 2,
            "num_heads": 2,
            "img_size": (TILE, TILE),
            "global_pool": "",
            "use_post_transformer_norm": False,
            "init_values": 0.1,
            "ref_feat_shape": (grid, grid),
        },
        num_labels=0,
    )
    text = LlamaConfig(
        **tiny_llama_text(
            tokenizer, eos_token_id=[tokenizer.convert_tokens_to_ids(t) for t in ("<|end_of_text|>", "<|eot_id|>")]
        )
    )
    config = PerceptionLMConfig(
        vision_config=vision,
        text_config=text,
        vision_use_cls_token=True,
        projector_pooling_ratio=POOLING,
        image_token_id=tokenizer.convert_tokens_to_ids("<|image|>"),
        video_token_id=tokenizer.convert_tokens_to_ids("<|video|>"),
    )
    torch.manual_seed(seed)
    model = PerceptionLMForConditionalGeneration(config).eval()
    finish(model, tokenizer, eos=list(text.eos_token_id))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
