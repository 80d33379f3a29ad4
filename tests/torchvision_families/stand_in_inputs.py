"""The inputs the evaluator gives a model for the family checks' requests, written to a safetensors file.

Run on the same model folder (``python -m torchvision_families.stand_in_inputs MODEL OUT [stand-in]``,
with ``src`` and ``tests`` on ``PYTHONPATH``) by the main test environment (no torchvision: the processor
loads with the never-called video-processor stand-in, ``tests/fakes/video_processor.py``) and by the
torchvision venv (the real video processor; with ``stand-in``, the stand-in forced in its place).
``test_tv_video_processors.py`` compares them.
"""

from __future__ import annotations

import sys

import fakes.video_processor  # (installs the stand-in where torchvision is missing; else nothing)


def inputs_per_request(model: str) -> dict:
    """``{"<request key>/<input name>": tensor}`` for every request of the family checks, each prompt
    through the hf backend's own chat rendering and processor call (one prompt, its image list)."""
    from evaluation import test_families as checks
    from PIL import Image
    from support import TOPIC_PHOTOS

    from mvlsib.evaluation.backends import make_backend

    files = sorted(p for p in TOPIC_PHOTOS.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png"))[:6]
    photos = {}
    for i, f in enumerate(files):  # as the family checks' ``photos`` fixture
        with Image.open(f) as im:
            im = im.convert("RGB")
            im.thumbnail((480, 480))
            photos[f"img{i}"] = im
    backend = make_backend("hf", model=model, batch_size=1, device="cpu", max_new_tokens=1, feature_cache_mb=0)
    out = {}
    for req in checks._requests():
        text = backend.batcher.chat_text(req)
        images = [[photos[i] for i in req.image_ids]] if req.image_ids else None
        for name, value in backend.batcher.call_processor([text], images).items():
            if hasattr(value, "contiguous"):
                out[f"{req.key}/{name}"] = value.contiguous()
    out["video_processor"] = type(getattr(backend.processor, "video_processor", None)).__name__
    return out


def main(model: str, dest: str, mode: str = "") -> None:
    from safetensors.torch import save_file

    if mode == "stand-in":
        fakes.video_processor.install(force=True)
    tensors = inputs_per_request(model)
    video = tensors.pop("video_processor")
    save_file(tensors, dest, metadata={"video_processor": video})


if __name__ == "__main__":
    main(*sys.argv[1:])
