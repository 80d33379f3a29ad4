"""Tiny random-weight SigLIP (dual encoder: image and text towers, sigmoid loss).

As in google/siglip-* checkpoints, the tokenizer's ``model_max_length`` is 64 and texts are
padded to it (``padding="max_length"``: SigLIP was trained that way and its text tower has no
attention mask); the processor itself declares no text defaults.
"""

from __future__ import annotations

from pathlib import Path

from ._dual import TEXT_LENGTH, save, tokenizer_for, towers

FAMILY = "siglip"
KIND = "dual_encoder"
TEMPLATE_SOURCE = "none (a dual encoder has no chat template)"
CHAT_TEMPLATE = ""


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

    tokenizer = tokenizer_for(texts, model_max_length=TEXT_LENGTH)
    text, vision = towers(len(tokenizer), tokenizer.pad_token_id, tokenizer.eos_token_id)
    config = SiglipConfig(text_config=text, vision_config={**vision, "image_size": 32, "patch_size": 8})
    torch.manual_seed(seed)
    model = SiglipModel(config).eval()
    image_processor = SiglipImageProcessor(size={"height": 32, "width": 32})
    return save(model, SiglipProcessor(image_processor=image_processor, tokenizer=tokenizer), Path(out_dir))
