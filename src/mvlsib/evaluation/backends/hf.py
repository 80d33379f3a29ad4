"""Hugging Face transformers backend: ``AutoProcessor`` + ``AutoModelForImageTextToText``.

Speed comes from three things the naive loop (one ``generate`` per prompt, images
re-processed per prompt) lacks:

1. each image is preprocessed once: its ``pixel_values`` (and whatever else the image
   processor returns) and its expanded image-token string are cached per image id;
   a batch's inputs are assembled from the cache exactly as the processor would
   (placeholder expansion through ``processor.get_text_with_replacements``, tensors
   concatenated in prompt order). A self-check on the first batch compares the
   assembly with a direct ``processor(text=..., images=...)`` call and falls back to
   the direct call (images still decoded once) for processors where they differ;
2. requests are sorted by token length and batched with left padding;
3. greedy decoding of a few new tokens, in bf16 on CUDA when present.
"""

from __future__ import annotations

import sys
from typing import Any

from .._compat import MvlsibError
from .base import Backend, BackendOption, Request

DTYPES = ("auto", "bfloat16", "float16", "float32")


def resolve_runtime(batch_size: int, device: str, dtype: str) -> tuple[str, str]:
    """Check --batch-size/--device/--dtype and resolve "auto": CUDA + bf16 when present, else CPU float32.

    Under torchrun/accelerate (``LOCAL_RANK`` set) "auto" is the rank's own GPU.

    Shared by every local-model user (this backend, verify-images' dual encoders).
    """
    import os
    import re

    import torch

    if batch_size < 1:
        raise MvlsibError(f"--batch-size must be at least 1, got {batch_size}")
    if dtype not in DTYPES:
        raise MvlsibError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if not re.fullmatch(r"auto|cpu|cuda(:[0-9]+)?", device):
        raise MvlsibError(f"--device must be auto, cpu, cuda or cuda:N, got {device!r}")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
        local_rank = os.environ.get("LOCAL_RANK", "")
        if device == "cuda" and local_rank.isdigit():
            # One process per GPU under torchrun/accelerate: each rank takes its own device.
            device = f"cuda:{int(local_rank) % torch.cuda.device_count()}"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise MvlsibError("--device cuda was asked for but torch sees no CUDA device; use --device cpu")
    if dtype == "auto":
        dtype = "bfloat16" if device.startswith("cuda") else "float32"
    return device, dtype


def move_inputs(inputs: Any, device: str, dtype: Any) -> dict[str, Any]:
    """Processor outputs on ``device``; floating-point tensors (pixels) in the model's ``dtype``."""
    import torch

    return {
        k: (v.to(device, dtype=dtype) if torch.is_floating_point(v) else v.to(device)) if hasattr(v, "to") else v
        for k, v in inputs.items()
    }


def _hf_content(messages: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    # Chat templates only need to know *where* an image goes; pixels come from the cache.
    out = []
    for message in messages:
        parts = []
        for part in message["content"]:
            parts.append({"type": "image"} if part["type"] == "image" else {"type": "text", "text": part["text"]})
        out.append({"role": message["role"], "content": parts})
    return out


class HFBackend(Backend):
    name = "hf"
    OPTIONS = (
        BackendOption("revision", "revision", str, None, "hf: model branch, tag or commit (all hf models)."),
        BackendOption("batch-size", "batch_size", int, 8, "hf: prompts (dual encoders: images) per forward pass."),
        BackendOption("device", "device", str, "auto",
                      "hf: auto (CUDA when present, the rank's own GPU under torchrun/accelerate, else CPU), "
                      "cpu, cuda or cuda:N."),
        BackendOption("dtype", "dtype", str, "auto", "hf: weights dtype; auto = bfloat16 on CUDA, float32 on CPU.",
                      choices=DTYPES),
        BackendOption("trust-remote-code", "trust_remote_code", bool, False,
                      "hf: allow the model's own Python code from its repo to run (off by default: it is "
                      "arbitrary code; only for models you trust)."),
    )

    def __init__(
        self,
        model: str,
        revision: str | None = None,
        batch_size: int = 8,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 8,
        trust_remote_code: bool = False,
        cache_images: bool = True,
    ) -> None:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        device, dtype = resolve_runtime(batch_size, device, dtype)
        self.model_id = model
        self.revision = revision
        self.batch_size = batch_size
        self.preferred_chunk = batch_size * 8
        self.device = device
        self.dtype = dtype
        self.max_new_tokens = max_new_tokens
        self.trust_remote_code = trust_remote_code
        self.cache_images = cache_images
        common = {"revision": revision or "main", "trust_remote_code": trust_remote_code}
        try:
            self.processor = AutoProcessor.from_pretrained(model, **common)
            self.model = AutoModelForImageTextToText.from_pretrained(
                model, use_safetensors=True, dtype=getattr(torch, dtype), **common
            )
        except (OSError, ValueError) as exc:
            raise MvlsibError(
                f"cannot load model {model!r}{f' at revision {revision}' if revision else ''}: {exc}. "
                "The model must be a local folder or Hub id with safetensors weights and a processor; "
                "models with custom code need --trust-remote-code."
            ) from exc
        self.model.to(device).eval()
        self.tokenizer = getattr(self.processor, "tokenizer", None)
        if self.tokenizer is None:
            raise MvlsibError(f"{model}: the processor has no tokenizer; not a vision-language chat model")
        # Left padding: every sequence's last token is the one generation continues from.
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._cache: dict[str, tuple[dict[str, Any], str]] = {}
        self._checked = {"image": False, "text": False}
        self.images: dict[str, Any] = {}
        self.stats = {"images_preprocessed": 0, "generate_calls": 0, "fallback_batches": 0}

    # ------------------------------------------------------------------ inputs

    def _chat_text(self, request: Request) -> str:
        return self.processor.apply_chat_template(
            _hf_content(request.messages), add_generation_prompt=True, tokenize=False
        )

    def _image_entry(self, image_id: str) -> tuple[dict[str, Any], str]:
        entry = self._cache.get(image_id)
        if entry is None:
            try:
                image = self.images[image_id]
            except KeyError:
                raise MvlsibError(f"image {image_id!r} is not in the image table of this release") from None
            processed = self.processor.image_processor([image], return_tensors="pt")
            replacement = self.processor.replace_image_token(processed, image_idx=0)
            entry = (dict(processed), replacement)
            self._cache[image_id] = entry
            self.stats["images_preprocessed"] += 1
        return entry

    def _text_kwargs(self) -> dict[str, Any]:
        try:
            kwargs = self.processor._merge_kwargs(
                tokenizer_init_kwargs=self.tokenizer.init_kwargs, padding=True, return_tensors="pt"
            )["text_kwargs"]
            for name in ("return_mm_token_type_ids", "return_text_replacement_offsets"):
                kwargs.pop(name, None)
            return kwargs
        except Exception:  # a processor without the kwargs machinery: the tokenizer defaults
            return {"padding": True, "return_tensors": "pt"}

    def _assemble_cached(self, texts: list[str], requests: list[Request]) -> dict[str, Any]:
        import torch

        image_ids = [i for r in requests for i in r.image_ids]
        entries = [self._image_entry(i) for i in image_ids]
        if entries:
            texts, _ = self.processor.get_text_with_replacements(list(texts), [e[1] for e in entries])
        inputs = dict(self.tokenizer(list(texts), **self._text_kwargs()))
        for name in entries[0][0] if entries else ():
            inputs[name] = torch.cat([e[0][name] for e in entries], dim=0)
        unused = getattr(self.processor, "unused_input_names", []) or []
        return {k: v for k, v in inputs.items() if k not in unused}

    def _assemble_direct(self, texts: list[str], requests: list[Request]) -> dict[str, Any]:
        images = [self.images[i] for r in requests for i in r.image_ids]
        kwargs = {"text": list(texts), "padding": True, "return_tensors": "pt"}
        if images:
            kwargs["images"] = images
        return dict(self.processor(**kwargs))

    def _self_check(self, text: str, request: Request) -> None:
        """Compare the cached assembly with the processor's own output once per modality."""
        import torch

        kind = "image" if request.image_ids else "text"
        if self._checked[kind] or not self.cache_images:
            return
        self._checked[kind] = True
        try:
            ours = self._assemble_cached([text], [request])
            ref = self._assemble_direct([text], [request])
            same = set(ours) == set(ref) and all(
                torch.equal(torch.as_tensor(ours[k]), torch.as_tensor(ref[k])) for k in ref
            )
        except Exception as exc:  # e.g. a processor without replace_image_token
            same = False
            reason = f"{type(exc).__name__}: {exc}"
        else:
            reason = "inputs differ from processor(text, images)"
        if not same:
            print(
                f"mvlsib-eval: {type(self.processor).__name__}: per-image preprocessing cache disabled "
                f"({reason}); images are still decoded once but preprocessed per prompt",
                file=sys.stderr,
            )
            self.cache_images = False

    # ------------------------------------------------------------------ generation

    def generate(self, requests: list[Request]) -> list[str]:
        import torch

        if not requests:
            return []
        texts = [self._chat_text(r) for r in requests]
        for text, request in zip(texts, requests):
            if request.image_ids and not self._checked["image"]:
                self._self_check(text, request)
            elif not request.image_ids and not self._checked["text"]:
                self._self_check(text, request)
        # Sort by expanded token length (longest first: memory trouble shows up at once).
        lengths = []
        for text, request in zip(texts, requests):
            n_image_tokens = sum(len(self._image_entry(i)[1]) for i in request.image_ids) if self.cache_images else 0
            lengths.append(len(text) + n_image_tokens)
        order = sorted(range(len(requests)), key=lambda i: (-lengths[i], i))
        responses: list[str | None] = [None] * len(requests)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            batch_texts = [texts[i] for i in idx]
            batch_reqs = [requests[i] for i in idx]
            if self.cache_images:
                inputs = self._assemble_cached(batch_texts, batch_reqs)
            else:
                inputs = self._assemble_direct(batch_texts, batch_reqs)
                self.stats["fallback_batches"] += 1
            inputs = move_inputs(inputs, self.device, self.model.dtype)
            with torch.inference_mode():
                out = self.model.generate(
                    **inputs,
                    max_new_tokens=self.max_new_tokens,
                    do_sample=False,
                    num_beams=1,
                    pad_token_id=self.tokenizer.pad_token_id,
                )
            self.stats["generate_calls"] += 1
            new_tokens = out[:, inputs["input_ids"].shape[1] :]
            decoded = self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True)
            for i, text in zip(idx, decoded):
                responses[i] = text
        return [r if r is not None else "" for r in responses]

    def describe(self) -> dict[str, Any]:
        config = getattr(self.model, "config", None)
        return {
            "backend": self.name,
            "model": self.model_id,
            "model_revision": self.revision or getattr(config, "_commit_hash", None),
            "model_class": type(self.model).__name__,
            "processor_class": type(self.processor).__name__,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "max_new_tokens": self.max_new_tokens,
            "decoding": "greedy",
            "trust_remote_code": self.trust_remote_code,
        }

    def close(self) -> None:
        self._cache.clear()
        del self.model
