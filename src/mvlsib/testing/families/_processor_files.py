"""Writing a processor that carries a video processor, without constructing it.

In transformers 5 without torchvision, constructing (or loading) any processor that has a
``video_processor`` fails in the processor's argument class check, although the video
processor's own class builds and serialises fine: only *running* it needs torchvision. A
family whose real processor has one (SmolVLM, LLaVA-OneVision) therefore writes the files
that ``ProcessorMixin.save_pretrained`` would write: the tokenizer's files, ``processor_config.json``
with each sub-processor's ``to_dict()`` nested under its attribute name plus the processor's
own keyword arguments and ``processor_class``, and ``chat_template.jinja``. Loading it back
needs torchvision or the tests' never-called stand-in (``tests/fakes/``).
"""

from __future__ import annotations

import json
from pathlib import Path

from mvlsib.atomic import atomic_open


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
