"""Zero-shot topic classification with a dual encoder (CLIP, SigLIP, ... : image and text towers).

The generative backends live in :mod:`mvlsib.evaluation.backends`; a dual encoder does
not generate text, so it needs this small scorer instead. As in CLIP's and
Babel-ImageNet's zero-shot setup, each class is the mean of the L2-normalised text
embeddings of a few prompt templates filled with the class name (renormalised), and an
image is assigned to the class with the highest cosine similarity. The margin is the
own topic's similarity minus the best other topic's (positive when the image passes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends.hf.loading import (
    apply_threads,
    is_image_text_to_text,
    load_config,
    move_inputs,
    resolve_runtime,
)

# Short, topic-neutral templates; English, also used with translated topic names.
TEMPLATES: tuple[str, ...] = (
    "a picture about {}.",
    "an image showing {}.",
    "a photo related to {}.",
    "an illustration of the topic {}.",
    "{}",
)


def model_kind(model: str, revision: str | None = None, trust_remote_code: bool = False) -> str:
    """``"generative"`` (image-text-to-text) or ``"dual"`` (separate image and text towers), from the config."""
    config = load_config(model, revision, trust_remote_code)  # the evaluator's: same checks, same message
    if is_image_text_to_text(config):
        return "generative"
    if getattr(config, "vision_config", None) is not None and getattr(config, "text_config", None) is not None:
        return "dual"
    raise MvlsibError(
        f"model {model!r} (model_type {getattr(config, 'model_type', '')!r}) is neither an image-text-to-text "
        "model nor a dual encoder with vision_config and text_config (CLIP/SigLIP-style); verify-images cannot use it"
    )


def features(output: Any):
    """The embedding tensor of ``get_image_features``/``get_text_features`` (a tensor or a model output)."""
    if hasattr(output, "pooler_output"):
        return output.pooler_output
    if hasattr(output, "image_embeds"):
        return output.image_embeds
    if hasattr(output, "text_embeds"):
        return output.text_embeds
    return output


def text_defaults(model: str, common: dict[str, Any], model_class: str) -> dict[str, Any]:
    """How the model's own processor tokenizes texts (padding, max_length, truncation).

    SigLIP 2's processor pads to 64 tokens while its tokenizer's ``model_max_length`` is
    larger; SigLIP's text tower has no attention mask, so the padding length changes the
    embedding: texts must look as they did in training. A processor that declares no text
    defaults (SigLIP 1, CLIP) gets the family's convention: SigLIP pads to the tokenizer's
    ``model_max_length`` (64 in its checkpoints), others pad to the longest text.
    """
    defaults: dict[str, Any] = {}
    try:
        from transformers import AutoProcessor

        processor = AutoProcessor.from_pretrained(model, **common)
    except Exception:  # no processor (a tokenizer and an image processor only): the convention below
        processor = None
    if processor is not None and hasattr(processor, "tokenizer"):
        # What processor(text=...) itself would use: its declared defaults merged as it merges them.
        try:
            merged = processor._merge_kwargs(
                processor.valid_processor_kwargs, tokenizer_init_kwargs=processor.tokenizer.init_kwargs
            )
            defaults = dict(merged["text_kwargs"])
        except Exception:  # an older processor API: the class-level declarations
            declared = getattr(type(processor), "text_kwargs", None)
            defaults = dict(declared) if isinstance(declared, dict) else {}
    if defaults.get("padding") in (None, False, "do_not_pad"):  # nothing declared: batches must still pad
        defaults["padding"] = "max_length" if "siglip" in model_class.lower() else True
    defaults.setdefault("truncation", True)
    return {k: defaults[k] for k in ("padding", "truncation", "max_length") if k in defaults}


class DualEncoder:
    """A CLIP/SigLIP-style ``AutoModel`` with ``get_image_features`` and ``get_text_features``."""

    name = "hf-dual-encoder"

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        batch_size: int = 32,
        device: str = "auto",
        dtype: str = "auto",
        trust_remote_code: bool = False,
        threads: int = 0,
    ) -> None:
        import torch
        from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

        device, dtype = resolve_runtime(batch_size, device, dtype)
        apply_threads(threads, device)
        self.model_id, self.revision, self.batch_size = model, revision, batch_size
        self.device, self.dtype, self.trust_remote_code = device, dtype, trust_remote_code
        common = {"revision": revision or "main", "trust_remote_code": trust_remote_code}
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model, **common)
            self.image_processor = AutoImageProcessor.from_pretrained(model, **common)
            self.model = AutoModel.from_pretrained(model, use_safetensors=True, dtype=getattr(torch, dtype), **common)
        except (OSError, ValueError) as exc:
            raise MvlsibError(
                f"cannot load dual encoder {model!r}: {exc}. It must be a local folder or Hub id with "
                "safetensors weights, a tokenizer and an image processor."
            ) from exc
        for method in ("get_image_features", "get_text_features"):
            if not hasattr(self.model, method):
                raise MvlsibError(f"{model}: {type(self.model).__name__} has no {method}; not a dual encoder")
        self.model.to(device).eval()
        self.text_kwargs = text_defaults(model, common, type(self.model).__name__)

    def _to_device(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        return move_inputs(inputs, self.device, self.model.dtype)

    def text_embeddings(self, texts: Sequence[str]):
        """L2-normalised text embeddings (float32, on the CPU), one row per text."""
        import torch

        rows = []
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start : start + self.batch_size])
            inputs = self.tokenizer(chunk, **self.text_kwargs, return_tensors="pt")
            inputs.pop("token_type_ids", None)
            with torch.inference_mode():
                emb = features(self.model.get_text_features(**self._to_device(inputs)))
            rows.append(torch.nn.functional.normalize(emb.float(), dim=-1).cpu())
        return torch.cat(rows)

    def class_embeddings(self, names: Sequence[str], templates: Sequence[str] = TEMPLATES):
        """One embedding per class name: the renormalised mean over the templates."""
        import torch

        emb = self.text_embeddings([t.format(n) for n in names for t in templates])
        emb = emb.view(len(names), len(templates), -1).mean(1)
        return torch.nn.functional.normalize(emb, dim=-1)

    def image_embeddings(self, images: Sequence[Any], progress=None):
        """L2-normalised image embeddings (float32, CPU), one row per PIL image."""
        import torch

        rows = []
        for start in range(0, len(images), self.batch_size):
            chunk = list(images[start : start + self.batch_size])
            inputs = self.image_processor(chunk, return_tensors="pt")
            with torch.inference_mode():
                emb = features(self.model.get_image_features(**self._to_device(inputs)))
            rows.append(torch.nn.functional.normalize(emb.float(), dim=-1).cpu())
            if progress is not None:
                progress.update(len(chunk))
        return torch.cat(rows)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "hf",
            "kind": "dual",
            "model": self.model_id,
            "model_revision": self.revision or getattr(self.model.config, "_commit_hash", None),
            "model_class": type(self.model).__name__,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "templates": list(TEMPLATES),
            "text_kwargs": self.text_kwargs,
            "trust_remote_code": self.trust_remote_code,
        }

    def close(self) -> None:
        del self.model
