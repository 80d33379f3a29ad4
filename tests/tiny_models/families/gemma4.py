"""Gemma 4 (``google/gemma-4-31B-it`` and siblings, ``Gemma4ForConditionalGeneration``): a variable-resolution
vision tower whose patches are pooled 3x3 into soft tokens, a Gemma 4 text model with sliding and global layers.

Real protocol kept: the template writes ``{{ bos_token }}`` itself and the real tokenizer adds none
(``add_bos_token=False``); each image is ``\\n\\n<|image|>\\n\\n`` in place, text parts are ``trim``med; the
processor expands ``<|image|>`` into ``<|image>`` + n x ``<|image|>`` + ``<image|>``, n = the image's own
soft-token count (aspect ratio kept, at most ``max_soft_tokens``). Without thinking the generation prompt
ends with an empty thought channel ``<|turn>model\\n<|channel>thought\\n<channel|>``; with
``enable_thinking=True`` the system turn starts with ``<|think|>`` and the model opens
``<|channel>thought ... <channel|>`` in its response. All Gemma 4 markers are *special* tokens
(``extra_special_tokens`` of the real conversion script), so decoding with ``skip_special_tokens=True``
drops the thought channel's delimiters. The processor carries a video processor and an audio
feature extractor: loading it needs torchvision.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from ._common import finish, train_fast_tokenizer

FAMILY = "gemma4"
KIND = "generative"
NEEDS = ("torchvision",)
TEMPLATE_SOURCE = (
    "ggml-org/llama.cpp models/templates/google-gemma-4-31B-it-interleaved.jinja (the google/gemma-4-31B-it "
    "chat template), stored verbatim in gemma4_31b_it_interleaved.jinja; tokenizer special tokens, "
    "add_bos_token=False, left padding and the stop tokens from huggingface/transformers "
    "src/transformers/models/gemma4/convert_gemma4_weights.py"
)
# Verbatim; do not "fix" it: the evaluator must cope with what users really get.
CHAT_TEMPLATE = files(__package__).joinpath("gemma4_31b_it_interleaved.jinja").read_text(encoding="utf-8")

# The conversion script's extra_special_tokens, by attribute name (real ids 255999, 258880-258884, ...).
EXTRA_SPECIAL_TOKENS = {
    "image_token": "<|image|>",
    "boi_token": "<|image>",
    "eoi_token": "<image|>",
    "audio_token": "<|audio|>",
    "boa_token": "<|audio>",
    "eoa_token": "<audio|>",
    "sot_token": "<|turn>",
    "eot_token": "<turn|>",
    "soc_token": "<|channel>",
    "eoc_token": "<channel|>",
    "think_token": "<|think|>",
    "escape_token": '<|"|>',
    "str_token": "<|tool_response>",
    "etr_token": "<tool_response|>",
    "stc_token": "<|tool_call>",
    "etc_token": "<tool_call|>",
    "std_token": "<|tool>",
    "etd_token": "<tool|>",
}
SPECIAL_TOKENS = ["<pad>", "<eos>", "<bos>", "<unk>", *EXTRA_SPECIAL_TOKENS.values(), "<|video|>"]
PATCH_SIZE = 4  # the real tower uses 16-pixel patches; 4 keeps the tiny images small
POOLING = 3  # as the real checkpoints: 3 x 3 patches pool into one soft token
MAX_SOFT_TOKENS = 70  # the smallest budget the image processor accepts (real default 280)


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import (
        Gemma4AudioFeatureExtractor,
        Gemma4Config,
        Gemma4ForConditionalGeneration,
        Gemma4ImageProcessor,
        Gemma4Processor,
        Gemma4TextConfig,
        Gemma4VideoProcessor,
        Gemma4VisionConfig,
    )

    tokenizer = train_fast_tokenizer(
        texts,
        SPECIAL_TOKENS,
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
        unk_token="<unk>",
        add_bos_token=False,  # the template writes <bos>
        padding_side="left",
        extra_special_tokens=EXTRA_SPECIAL_TOKENS,
    )
    image_processor = Gemma4ImageProcessor(
        patch_size=PATCH_SIZE, max_soft_tokens=MAX_SOFT_TOKENS, pooling_kernel_size=POOLING, do_normalize=False
    )
    video_processor = Gemma4VideoProcessor(
        patch_size=PATCH_SIZE, max_soft_tokens=MAX_SOFT_TOKENS, pooling_kernel_size=POOLING
    )
    processor = Gemma4Processor(
        feature_extractor=Gemma4AudioFeatureExtractor(),
        image_processor=image_processor,
        video_processor=video_processor,
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        image_seq_length=MAX_SOFT_TOKENS,
    )
    ids = tokenizer.convert_tokens_to_ids
    stops = [tokenizer.eos_token_id, ids("<turn|>"), ids("<|tool_response>")]  # the conversion script's
    # The 31B layout, shrunk: 5 sliding layers then a global one is cut to one of each; keys double as
    # values on global layers (attention_k_eq_v) and vision tokens attend both ways, as in the 31B config.
    text = Gemma4TextConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        layer_types=["sliding_attention", "full_attention"],
        num_attention_heads=4,
        num_key_value_heads=2,
        num_global_key_value_heads=1,
        head_dim=16,
        global_head_dim=32,
        attention_k_eq_v=True,
        use_bidirectional_attention="vision",
        hidden_size_per_layer_input=0,
        sliding_window=64,
        final_logit_softcapping=30.0,
        max_position_embeddings=4096,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=stops,
    )
    vision = Gemma4VisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        head_dim=16,
        global_head_dim=16,
        patch_size=PATCH_SIZE,
        pooling_kernel_size=POOLING,
        position_embedding_size=1024,
        default_output_length=MAX_SOFT_TOKENS,
        standardize=True,
    )
    config = Gemma4Config(
        text_config=text,
        vision_config=vision,
        image_token_id=tokenizer.image_token_id,
        boi_token_id=ids("<|image>"),
        eoi_token_id=ids("<image|>"),
        video_token_id=ids("<|video|>"),
        audio_token_id=ids("<|audio|>"),
        boa_token_id=ids("<|audio>"),
        eoa_token_index=ids("<audio|>"),
        vision_soft_tokens_per_image=MAX_SOFT_TOKENS,
    )
    torch.manual_seed(seed)
    model = Gemma4ForConditionalGeneration(config).eval()
    finish(model, tokenizer, eos=stops)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
