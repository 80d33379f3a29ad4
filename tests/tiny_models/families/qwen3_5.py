"""Tiny random-weight Qwen3.5 (``Qwen3_5ForConditionalGeneration``) with the real Qwen3.5-9B template.

Real protocol kept: the hybrid text model (Gated DeltaNet linear-attention layers beside full-attention
ones, partial rotary mrope), the Qwen3-VL-style vision tower (16-pixel patches merged 2x2) and its
processor (``Qwen3VLProcessor``: each image in place as ``<|vision_start|><|image_pad|><|vision_end|>``,
one ``<|image_pad|>`` per merged patch), ChatML turns without a default system turn. The template's
generation prompt **opens a thinking block** (``<|im_start|>assistant\\n<think>\\n``) unless
``enable_thinking`` is false, which writes an empty closed block ``<think>\\n\\n</think>\\n\\n``.
``<think>``/``</think>`` are plain added tokens (not special), as in the Qwen tokenizers.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from . import _common, _qwen
from ._processor_files import save_processor_files

FAMILY = "qwen3_5"
KIND = "generative"
TEMPLATE_SOURCE = (
    "Hub Qwen/Qwen3.5-9B chat_template.jinja (7756 bytes, sha256 a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca"
    "099c28f715, the digest several public projects pin as the official revision), stored verbatim in "
    "qwen3_5_9b.jinja; rebuilt from public copies of the same template and checked against that digest"
)
# Verbatim (no trailing newline, as the Hub file); do not "fix" it.
CHAT_TEMPLATE = files(__package__).joinpath("qwen3_5_9b.jinja").read_text(encoding="utf-8")
TEMPLATE_SHA256 = "a4aee8afcf2e0711942cf848899be66016f8d14a889ff9ede07bca099c28f715"

PATCH_SIZE = 16
MERGE_SIZE = 2


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration

    tokenizer = _qwen.qwen_tokenizer(texts)
    text = _qwen.text_kwargs(tokenizer)
    text.pop("bos_token_id")
    config = Qwen3_5Config(
        text_config={
            **text,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "head_dim": 32,
            "layer_types": ["linear_attention", "full_attention"],
            "linear_num_key_heads": 2,
            "linear_num_value_heads": 2,
            "linear_key_head_dim": 16,
            "linear_value_head_dim": 16,
            # a quarter of the head rotates, its half split over (t, h, w) as in the real config
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 10000000.0,
                "partial_rotary_factor": 0.25,
                "mrope_section": [2, 1, 1],
                "mrope_interleaved": True,
            },
        },
        vision_config=_qwen.vision_tower(
            text["hidden_size"],
            PATCH_SIZE,
            MERGE_SIZE,
            num_position_embeddings=256,
        ),
        **_qwen.vision_token_ids(tokenizer),
    )
    torch.manual_seed(seed)
    model = Qwen3_5ForConditionalGeneration(config).eval()
    # The real class, not the top-level placeholder that stands for it without torchvision: building and
    # saving its config needs no torchvision, only processing videos does.
    from transformers.models.qwen3_vl.video_processing_qwen3_vl import Qwen3VLVideoProcessor

    image_processor = _qwen.image_processor(PATCH_SIZE, MERGE_SIZE)
    image_processor.image_mean = [0.5, 0.5, 0.5]
    image_processor.image_std = [0.5, 0.5, 0.5]
    image = image_processor.to_dict()
    image["image_processor_type"] = "Qwen2VLImageProcessor"  # what the checkpoints name (see _processor_files)
    video_processor = Qwen3VLVideoProcessor(patch_size=PATCH_SIZE, merge_size=MERGE_SIZE, temporal_patch_size=2)
    _common.finish(model, tokenizer, eos=[tokenizer.eos_token_id, tokenizer.pad_token_id])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    # With the video processor's config beside the image processor's, the folder loads as a user's does.
    save_processor_files(
        out,
        processor_class="Qwen3VLProcessor",
        tokenizer=tokenizer,
        chat_template=CHAT_TEMPLATE,
        components={"image_processor": _Saved(image), "video_processor": video_processor},
    )
    return out


class _Saved:
    """A component whose saved form is already known."""

    def __init__(self, config: dict):
        self.config = config

    def to_dict(self) -> dict:
        return dict(self.config)
