"""Tiny random-weight SigLIP 2 (NaFlex: variable patch grids with ``pixel_attention_mask``).

Its processor pads texts to ``max_length=64`` by default (``Siglip2ProcessorKwargs``), while
the tokenizer's own ``model_max_length`` is larger in real checkpoints: a dual encoder that
pads to the tokenizer's length feeds the model texts it never saw in training.
"""

from __future__ import annotations

from pathlib import Path

from ._dual import save, tokenizer_for, towers

FAMILY = "siglip2"
KIND = "dual_encoder"
TEMPLATE_SOURCE = "none (a dual encoder has no chat template)"
CHAT_TEMPLATE = ""
TOKENIZER_MAX_LENGTH = 1024  # as large as in real checkpoints' tokenizer config, unlike the processor's 64


def build(out_dir: Path, texts: list[str], *, seed: int = 0) -> Path:
    import torch
    from transformers import Siglip2Config, Siglip2ImageProcessor, Siglip2Model, Siglip2Processor

    tokenizer = tokenizer_for(texts, model_max_length=TOKENIZER_MAX_LENGTH)
    text, vision = towers(len(tokenizer), tokenizer.pad_token_id, tokenizer.eos_token_id)
    config = Siglip2Config(text_config=text, vision_config={**vision, "patch_size": 8, "num_patches": 16})
    torch.manual_seed(seed)
    model = Siglip2Model(config).eval()
    image_processor = Siglip2ImageProcessor(patch_size=8, max_num_patches=16)
    return save(model, Siglip2Processor(image_processor=image_processor, tokenizer=tokenizer), Path(out_dir))
