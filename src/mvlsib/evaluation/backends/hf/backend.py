"""Hugging Face transformers backend: ``AutoProcessor`` + ``AutoModelForImageTextToText``.

Correct inputs for every family come first (``inputs``): images stay where the prompt puts
them (rendered natively or with the family's placeholder written in place), one image list per
prompt, one BOS, greedy decoding with the checkpoint's sampling and penalty settings
neutralised, thinking blocks given a budget (``generation``). Speed comes from, each in its own
module with its own self-check against the plain path:

1. each prompt's images are preprocessed once per distinct image tuple (``inputs.MemoImageProcessor``;
   the processor's own expansion and tiling logic still runs per prompt), and a tuple repeats in
   every language;
2. per-prompt inputs are collated into batches, longest first, with left padding (``batching``);
3. each image's vision-tower features are computed once per run and reused for every prompt
   showing it (``feature_cache``, where the family's model allows it), and with ``--kv-prefix``
   the KV cache of the text prefix a batch shares is reused (``kv_prefix``);
4. greedy decoding of a few new tokens, in bf16 on CUDA when present.

This class only wires them: options, loading (``loading``), and one ``generate`` per batch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..._compat import MvlsibError, params
from ..base import (
    CHAT_TEMPLATE_KWARGS,
    FINGERPRINT_DEFAULTS,
    THINKING_MAX_NEW_TOKENS,
    Backend,
    BackendOption,
    BackendStats,
    Request,
    file_sha256,
    json_options_fingerprint,
    parse_json_option,
)
from ..reasoning import opens_unclosed_thinking
from .batching import Batcher
from .feature_cache import DEFAULT_FEATURE_CACHE_MB, FeatureReuse
from .generation import TokenDecoder, decoding, library_failures, opens_thinking, stopped
from .kv_prefix import PrefixReuse
from .loading import (
    DTYPES,
    apply_threads,
    check_architecture,
    check_runtime,
    check_threads,
    load_model,
    load_processor,
    move_inputs,
    names_remote_code,
    read_chat_template,
    resolve_runtime,
)

JSON_OPTIONS = ("chat_template_kwargs", "processor_kwargs")


class HFBackend(Backend):
    name = "hf"
    DESCRIPTION = "a transformers model run here"
    MODEL_HELP = "local model folder or Hub model id"
    OPTIONS = (
        BackendOption("revision", "revision", str, None, "hf: model branch, tag or commit (all hf models)."),
        BackendOption(
            "batch-size",
            "batch_size",
            params.Int(1, 1 << 16),
            8,
            "hf: prompts (dual encoders: images) per forward pass.",
        ),
        BackendOption(
            "device",
            "device",
            str,
            "auto",
            "hf: auto (CUDA when present, the rank's own GPU under torchrun/accelerate, else CPU), "
            "cpu, cuda or cuda:N.",
        ),
        BackendOption(
            "dtype", "dtype", str, "auto", "hf: weights dtype; auto = bfloat16 on CUDA, float32 on CPU.", choices=DTYPES
        ),
        BackendOption(
            "threads",
            "threads",
            params.Int(0, 1 << 16),
            0,
            "hf: torch CPU threads (CPU runs only); 0 = OMP_NUM_THREADS if set, else half the CPUs, at least 1 "
            "(torch's all-cores default slows down badly on a busy machine).",
        ),
        BackendOption(
            "trust-remote-code",
            "trust_remote_code",
            bool,
            False,
            "hf: allow the model's own Python code from its repo to run (off by default: it is "
            "arbitrary code; only for models you trust).",
        ),
        BackendOption(
            "chat-template",
            "chat_template",
            str,
            None,
            "hf: a Jinja chat-template file to use instead of the model's own (e.g. for a model "
            "without one, or whose template moves images).",
        ),
        CHAT_TEMPLATE_KWARGS,
        BackendOption(
            "processor-kwargs",
            "processor_kwargs",
            params.JsonObject(),
            None,
            "hf: JSON object passed to every processor call, e.g. '{\"max_pixels\": 401408}' (Qwen), "
            "'{\"do_image_splitting\": false}' (Idefics3/SmolVLM), '{\"do_pan_and_scan\": true}' "
            "(Gemma 3). Recorded in config.json and part of the resume fingerprint.",
        ),
        BackendOption(
            "feature-cache-mb",
            "feature_cache_mb",
            params.Int(0, 1 << 24),
            DEFAULT_FEATURE_CACHE_MB,
            "hf: memory (MB, on the model's device) for image features computed once per image and "
            "reused for every prompt showing it (least recently used dropped first); 0 turns the "
            "cache off. Used where the family allows it, after a self-check against the plain path.",
        ),
        BackendOption(
            "kv-prefix",
            "kv_prefix",
            bool,
            False,
            "hf: compute the prefix every prompt of a batch starts with once per run and reuse its KV "
            "cache in every batch (padding moved between prefix and suffix): the template and "
            "instruction, and through the images when the batch's prompts show the same images and "
            "none after the shared part (an i2s reference set in every language: such prompts are "
            "batched together). Each kind is self-checked against the plain path. Off by default: on "
            "CPU with small models it does not pay (docs/performance.md).",
        ),
        THINKING_MAX_NEW_TOKENS,
    )

    @classmethod
    def check_options(cls, options: Mapping[str, Any]) -> None:
        defaults = {opt.param: opt.default for opt in cls.OPTIONS}
        values: dict[str, Any] = {**defaults, **{k: v for k, v in options.items() if v is not None}}
        check_runtime(values["batch_size"], values["device"], values["dtype"])
        check_threads(values["threads"])
        if values["feature_cache_mb"] < 0:
            raise MvlsibError(f"--feature-cache-mb must be 0 (off) or more, got {values['feature_cache_mb']}")
        for param in JSON_OPTIONS:
            parse_json_option(param.replace("_", "-"), options.get(param))

    @classmethod
    def fingerprint(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        out = {
            **FINGERPRINT_DEFAULTS,
            "model_revision": options.get("revision"),
            "dtype": options.get("dtype") or FINGERPRINT_DEFAULTS["dtype"],
            **json_options_fingerprint(options, JSON_OPTIONS),
        }
        if options.get("chat_template"):
            out["chat_template_sha256"] = file_sha256("chat-template", options["chat_template"])
        return out

    @classmethod
    def preflight(cls, model: str, **options: Any) -> None:
        # the model's config only (no weights): a wrong path, id or architecture in a moment
        check_architecture(model, options.get("revision"), bool(options.get("trust_remote_code", False)))

    def __init__(  # noqa: PLR0913 - one keyword per --backend hf option; the redesign makes them a value
        self,
        model: str,
        *,
        revision: str | None = None,
        batch_size: int = 8,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = 8,
        trust_remote_code: bool = False,
        cache_images: bool = True,
        chat_template: str | None = None,
        chat_template_kwargs: Any = None,
        processor_kwargs: Any = None,
        thinking_max_new_tokens: int = 2048,
        threads: int = 0,
        feature_cache_mb: int = DEFAULT_FEATURE_CACHE_MB,
        kv_prefix: bool = False,
    ) -> None:
        if max_new_tokens < 1:
            raise MvlsibError(f"--max-new-tokens must be at least 1, got {max_new_tokens}")
        self.check_options(
            {
                "batch_size": batch_size,
                "device": device,
                "dtype": dtype,
                "threads": threads,
                "feature_cache_mb": feature_cache_mb,
            }
        )
        self.device, self.dtype = resolve_runtime(batch_size, device, dtype)
        self.threads = apply_threads(threads, self.device)
        self.model_id, self.revision, self.trust_remote_code = model, revision, trust_remote_code
        self.batch_size, self.preferred_chunk = batch_size, batch_size * 8
        self.max_new_tokens, self.thinking_max_new_tokens = max_new_tokens, thinking_max_new_tokens
        self.template_kwargs = parse_json_option("chat-template-kwargs", chat_template_kwargs)
        self.processor_kwargs = parse_json_option("processor-kwargs", processor_kwargs)
        self.chat_template_source = chat_template or "model"
        template_text = read_chat_template(chat_template)
        # The config and processor first: what they lack (an image-text-to-text architecture, a
        # tokenizer, a chat template) is said before weights load.
        remote_code = names_remote_code(check_architecture(model, revision, trust_remote_code))
        self.processor = load_processor(model, revision, trust_remote_code, template_text, remote_code)
        self.tokenizer = self.processor.tokenizer
        self.opens_thinking = opens_thinking(
            self.processor, self.template_kwargs, max_new_tokens, thinking_max_new_tokens
        )
        self.model = load_model(
            model,
            revision,
            trust_remote_code=trust_remote_code,
            dtype=self.dtype,
            device=self.device,
            remote_code=remote_code,
        )
        # Left padding: every sequence's last token is the one generation continues from.
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.stats = BackendStats()
        self._wire(cache_images, feature_cache_mb, kv_prefix)

    def _wire(self, cache_images: bool, feature_cache_mb: int, kv_prefix: bool) -> None:
        """The mechanisms, each with its own state and self-check."""
        self.batcher = Batcher(
            self.processor,
            self.template_kwargs,
            self.processor_kwargs,
            batch_size=self.batch_size,
            stats=self.stats,
            cache_images=cache_images,
        )
        self.renderer = self.batcher.renderer
        self.features = FeatureReuse(self.model, feature_cache_mb, self.stats)
        self.prefixes = PrefixReuse(
            self.model,
            on=kv_prefix,
            pad_token_id=self.tokenizer.pad_token_id,
            layouts=self.batcher.layouts,
            batched=self.batcher.batched,
            budget=self.budget,
            stats=self.stats,
        )
        self.decode = TokenDecoder(self.tokenizer)
        self._decoding: dict[str, Any] = {}

    @property
    def budget(self) -> int:
        """New tokens per prompt: more when the template opens a thinking block."""
        if self.opens_thinking:
            return max(self.max_new_tokens, self.thinking_max_new_tokens)
        return self.max_new_tokens

    def decoding(self, budget: int) -> dict[str, Any]:
        return decoding(self.model, self.tokenizer, budget)

    def set_images(self, images: Mapping[str, Any]) -> None:
        super().set_images(images)
        # Features and prefixes of images no longer in the table would only take memory.
        self.features.clear()
        self.prefixes.clear()
        self.batcher.set_images(self.images)

    def build_batches(self, requests: list[Request]) -> list[tuple[list[int], dict[str, Any]]]:
        """The model inputs of ``requests``: (request indices, inputs) per forward pass, longest first."""
        return self.batcher.build_batches(requests, by_image_set=self.prefixes.images_on)

    def generate(self, requests: list[Request]) -> list[str]:
        if not requests:
            return []
        responses, cut = self._generate(requests, self.budget, reuse=True)
        # A response cut off inside a thinking block that neither the prompt nor the kwargs opened (the
        # model chose to think) is generated again with the thinking budget: greedy decoding repeats
        # its start and continues it, instead of a format error for an answer never reached.
        if not self.opens_thinking and self.thinking_max_new_tokens > self.max_new_tokens:
            again = [i for i, r in enumerate(responses) if cut[i] and opens_unclosed_thinking(r)]
            if again:
                more, _ = self._generate([requests[i] for i in again], self.thinking_max_new_tokens, reuse=False)
                for i, response in zip(again, more):
                    responses[i] = response
                self.stats.thinking_continued = self.stats.thinking_continued + len(again)
        return responses

    def _generate(self, requests: list[Request], budget: int, reuse: bool) -> tuple[list[str], list[bool]]:
        """Responses of ``requests`` with ``budget`` new tokens each, and whether each ran out of them.
        ``reuse``: through the shared-prefix path where one applies (sized for the main budget)."""
        import torch

        responses, cut = [""] * len(requests), [False] * len(requests)
        for idx, inputs in self.build_batches(requests):
            settings = self.decoding(budget)
            if reuse:
                self._decoding = settings
            inputs = move_inputs(inputs, self.device, self.model.dtype)
            batch = [requests[i] for i in idx]
            with torch.inference_mode(), library_failures(self.model):
                new_tokens = self._new_tokens(inputs, batch, settings, reuse)
            self.stats.generate_calls += 1
            if "attention_mask" in inputs:  # what the KV-prefix share is measured against
                self.stats.prompt_tokens = self.stats.prompt_tokens + int(inputs["attention_mask"].sum())
            for i, row in zip(idx, new_tokens):
                responses[i] = self.decode(row)
                cut[i] = not stopped(row, settings["eos_token_id"])
        return responses, cut

    def _new_tokens(self, inputs: dict[str, Any], batch: list[Request], settings: dict[str, Any], reuse: bool) -> Any:
        """One batch's new tokens: a feature-cache self-check while one is due, else through a shared
        prefix where one is reused, else the plain ``generate``."""
        has_images = bool(batch[0].image_ids)
        first_images = tuple(batch[0].image_ids)
        same_images = has_images and all(tuple(r.image_ids) == first_images for r in batch)
        if self.features.check_due(inputs):
            out = self.features.checked_generate(inputs, settings)
        elif reuse and (length := self.prefixes.length(inputs, has_images, same_images)):
            return self.prefixes.new_tokens(inputs, length, has_images, settings, first_images)
        else:
            out = self.model.generate(**inputs, **settings)
        return out[:, inputs["input_ids"].shape[1] :]

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
            "generation": self._decoding or self.decoding(self.max_new_tokens),
            "chat_template": self.chat_template_source,
            "chat_template_sha256": _sha256(self.processor.chat_template),
            "chat_template_kwargs": self.template_kwargs,
            "processor_kwargs": self.processor_kwargs,
            "rendering": self.renderer.mode,
            "image_placeholder": self.renderer.placeholder,
            "opens_thinking": bool(self.opens_thinking),
            "trust_remote_code": self.trust_remote_code,
            "image_feature_cache": self.features.describe(),
            **self.prefixes.describe(),
        }

    def close(self) -> None:
        self.batcher.close()
        self.features.close()
        del self.model


def _sha256(text: Any) -> str | None:
    if not isinstance(text, str):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
