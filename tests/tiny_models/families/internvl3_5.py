"""InternVL 3.5 in the Hugging Face format (``OpenGVLab/InternVL3_5-{1B..14B}-HF``, ``InternVLForConditionalGeneration``):
the InternVL architecture with a **Qwen3** text model (q/k norms, explicit head_dim), built with the real
processor classes (``InternVLProcessor``, ``GotOcr2ImageProcessor``, the real ``InternVLVideoProcessor``).

What differs from ``internvl`` (InternVL3, Qwen2.5 text model) is the text model and the tokenizer's
``<think>``/``</think>`` (single, non-special tokens, as in Qwen3's tokenizer): InternVL 3.5's thinking
mode is switched on by a system prompt (the model card's ``R1_SYSTEM_PROMPT``) and the model answers
``<think>…</think>`` then the answer, which ``parsing.REASONING_MARKERS`` already reads.

Template: the InternVL-HF template of transformers' conversion script (the one ``internvl`` stores). The
-HF checkpoints' own ``chat_template.jinja`` was **not** reachable in any public copy searched (the Hub
repositories themselves are not reachable from here; the versions of transformers' converter found name
only InternVL2.5/3 checkpoints), so whether 3.5-HF ships exactly this string is not shown; what this module
tests is the 3.5 architecture under the InternVL processor and that template (docs/model_families.md).
Tiny sizes as ``internvl``: 56-pixel tiles, 4 tokens per tile, at most 3 tiles + a thumbnail.
"""

from __future__ import annotations

from pathlib import Path

from . import _qwen
from .internvl import CHAT_TEMPLATE as INTERNVL_HF_TEMPLATE
from .internvl import IMAGE_PROCESSOR, IMAGE_SEQ_LENGTH, VIDEO_PROCESSOR, model_for, tokenizer_for

FAMILY = "internvl3_5"
KIND = "generative"
NEEDS = ("torchvision",)
TEMPLATE_SOURCE = (
    "huggingface/transformers src/transformers/models/internvl/convert_internvl_weights_to_hf.py (chat_template, "
    "as the internvl module stores it); the OpenGVLab/InternVL3_5-*-HF checkpoints' own chat_template.jinja was "
    "not reachable, so it is not shown to be this string"
)
CHAT_TEMPLATE = INTERNVL_HF_TEMPLATE


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    from tokenizers import AddedToken
    from transformers import GotOcr2ImageProcessor, InternVLProcessor, InternVLVideoProcessor

    tokenizer = tokenizer_for(texts, padding_side="left")
    # Qwen3's <think>/</think> (and tool-call tags): single tokens, not special, so decoding keeps them.
    tokenizer.add_tokens([AddedToken(t, normalized=False, special=False) for t in _qwen.PLAIN_ADDED_TOKENS])
    model = model_for(tokenizer, {"model_type": "qwen3", "head_dim": 16}, seed=seed)
    processor = InternVLProcessor(
        image_processor=GotOcr2ImageProcessor(**IMAGE_PROCESSOR),
        tokenizer=tokenizer,
        video_processor=InternVLVideoProcessor(**VIDEO_PROCESSOR),
        chat_template=CHAT_TEMPLATE,
        image_seq_length=IMAGE_SEQ_LENGTH,
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    processor.save_pretrained(out)
    return out
