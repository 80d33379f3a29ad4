"""Write a processor folder without instantiating the processor class.

transformers 5 refuses to construct a processor that has a video processor (Qwen-VL,
InternVL, ...) unless torchvision is installed. The files a real checkpoint ships are plain
JSON/Jinja, so the builders write them directly, exactly as ``ProcessorMixin.save_pretrained``
would (``processor_config.json`` with the image processor nested, the tokenizer files,
``chat_template.jinja``), and the folder loads as a user's does (the eval session has torchvision).
"""

from __future__ import annotations

import json
from pathlib import Path

from mvlsib.atomic import atomic_open


def write_processor(
    out: Path,
    *,
    processor_class: str,
    image_processor,
    image_processor_type: str,
    tokenizer,
    chat_template: str,
    video_processor: dict | None = None,
    **processor_kwargs,
) -> None:
    """``video_processor``: the saved video-processor config (``video_config``) for processors that carry
    one; without it such a folder loads nowhere with torchvision (``AutoVideoProcessor`` finds no config)."""
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out)
    image = image_processor.to_dict()
    # The PIL fallback class names itself; checkpoints name the default class, which
    # AutoImageProcessor maps back to the PIL backend when torchvision is missing.
    image["image_processor_type"] = image_processor_type
    config = {"image_processor": image, "processor_class": processor_class, **processor_kwargs}
    if video_processor is not None:
        config["video_processor"] = dict(video_processor)
    with atomic_open(out / "processor_config.json") as fh:
        fh.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    with atomic_open(out / "chat_template.jinja") as fh:
        fh.write(chat_template)


def video_config(video_processor_type: str, **settings) -> dict:
    """A saved video-processor config: its class and the settings that differ from the class defaults.

    For video processor classes that cannot even be imported without torchvision (Qwen2-VL's,
    InternVL's), so their ``to_dict()`` is out of reach here; loading fills in the class defaults, as
    for a checkpoint that ships only part of a config. (Qwen2-VL / Qwen2.5-VL checkpoints ship no
    video config at all: transformers builds their video processor from ``preprocessor_config.json``,
    the image processor's settings, which is what their builders pass here.)"""
    return {**settings, "video_processor_type": video_processor_type}


# The same files for a processor with several components (image and video processor, ...),
# each nested under its attribute name (SmolVLM, LLaVA-OneVision).
def save_processor_files(
    out: Path,
    *,
    processor_class: str,
    tokenizer,
    chat_template: str,
    components: dict,
    **processor_kwargs,
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(out)
    config = {name: component.to_dict() for name, component in components.items()}
    config.update(processor_kwargs)
    config["processor_class"] = processor_class
    with atomic_open(out / "processor_config.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    with atomic_open(out / "chat_template.jinja", "w", encoding="utf-8") as f:
        f.write(chat_template)
