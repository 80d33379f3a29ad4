"""Hugging Face transformers backend: ``AutoProcessor`` + ``AutoModelForImageTextToText``.

Correct inputs for every family come first (``hf_inputs``): images stay where the prompt
puts them (rendered natively or with the family's placeholder written in place), one
image list per prompt, one BOS, greedy decoding with the checkpoint's sampling and penalty
settings neutralised, thinking blocks given a budget. Speed comes from:

1. each prompt's images are preprocessed once per distinct image tuple (the processor's
   image processor is memoised; its own expansion and tiling logic still runs per prompt),
   and a tuple repeats in every language;
2. per-prompt inputs are collated into batches, longest first, with left padding; the
   first batch of each kind is checked against the processor's own batched call (one
   image list per prompt). If they differ only where the processor pads its own way
   (Mllama), the processor's batches are used; otherwise that kind runs one prompt at a time;
3. each image's vision-tower features are computed once per run and reused for every prompt
   showing it (``hf_reuse.FeatureCache``, where the family's model allows it), and with
   ``--kv-prefix`` the KV cache of the text prefix a batch shares is reused (``hf_reuse.PrefixCache``);
   both behind a self-check against the plain path on the first batches;
4. greedy decoding of a few new tokens, in bf16 on CUDA when present.
"""

from __future__ import annotations

import sys
from typing import Any

from .._compat import MvlsibError
from ..parsing import REASONING_MARKERS
from .base import CHAT_TEMPLATE_KWARGS, Backend, BackendOption, Request
from .hf_reuse import DEFAULT_FEATURE_CACHE_MB

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


def parse_json_option(flag: str, value: Any) -> dict[str, Any]:
    """A ``--flag JSON`` value (a JSON object) as a dict; ``None``/empty gives ``{}``."""
    import json

    if value is None or value == "" or value == {}:
        return {}
    if isinstance(value, dict):
        return dict(value)
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise MvlsibError(f"--{flag} must be a JSON object, e.g. '{{\"key\": 1}}': {exc}") from None
    if not isinstance(parsed, dict):
        raise MvlsibError(f"--{flag} must be a JSON object, got {type(parsed).__name__}")
    return parsed


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _missing_package(exc: BaseException) -> str | None:
    import re

    match = re.search(r"requires the (\S+) librar", str(exc)) or re.search(r"No module named '([^']+)'", str(exc))
    return match.group(1).lower() if match else None


def load_config(model: str, revision: str | None, trust_remote_code: bool):
    """The model's config (nothing heavy loads), or a one-line error naming the model."""
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(model, revision=revision or "main", trust_remote_code=trust_remote_code)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        where = f"{model!r}{f' at revision {revision}' if revision else ''}"
        raise MvlsibError(
            f"cannot load the config of {where}: {_one_line(exc)}. The model must be a local "
            "folder or Hub id; models with custom code need --trust-remote-code."
        ) from None


def is_image_text_to_text(config) -> bool:
    """Can ``AutoModelForImageTextToText`` build this config (a known type, or custom code declaring it)?"""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    custom = "AutoModelForImageTextToText" in (getattr(config, "auto_map", None) or {})
    return getattr(config, "model_type", "") in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES or custom


def check_architecture(model: str, revision: str | None, trust_remote_code: bool) -> None:
    """Refuse, before anything heavy loads, a model that is not image-text-to-text (a text-only
    LM, an encoder, Phi-4-multimodal's own class): it cannot answer an MVL-SIB prompt."""
    config = load_config(model, revision, trust_remote_code)
    if not is_image_text_to_text(config):
        where = f"{model!r}{f' at revision {revision}' if revision else ''}"
        raise MvlsibError(
            f"cannot load model {where}: its architecture ({config.model_type}) is not an image-text-to-text "
            "model (AutoModelForImageTextToText does not know it), so it cannot answer MVL-SIB prompts"
        )


# Generation settings that make decoding greedy whatever the checkpoint's generation_config says
# (a shipped repetition penalty or n-gram block would otherwise change answers silently).
NEUTRAL_DECODING = {
    "do_sample": False,
    "num_beams": 1,
    "temperature": 1.0,
    "top_p": 1.0,
    "top_k": 50,
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "length_penalty": 1.0,
    "min_new_tokens": 0,
}

# A template whose generation prompt ends in one of these has opened a thinking block.
THINKING_OPENERS = tuple(opener for opener, _ in REASONING_MARKERS)
# Tokens kept when decoding although a tokenizer may have made them special: parsing needs them.
REASONING_TOKENS = frozenset(marker for pair in REASONING_MARKERS for marker in pair)


class _MemoImageProcessor:
    """The processor's image processor, remembering its output per tuple of images.

    The processor's own logic (placeholder expansion, per-prompt image counts, tiling
    rules) runs unchanged on every prompt; only the pixel work is reused. Prompts repeat
    their image tuples across languages (an i2s reference set, an s2i option set), so a
    full run preprocesses each tuple once instead of once per language.
    """

    def __init__(self, inner: Any, names: dict[int, str], stats: dict[str, int]) -> None:
        self._inner, self._names, self._stats = inner, names, stats
        self._memo: dict[Any, Any] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _key(self, images: Any, kwargs: dict[str, Any]) -> Any:
        def walk(x: Any) -> Any:
            if isinstance(x, (list, tuple)):
                return tuple(walk(i) for i in x)
            name = self._names.get(id(x))
            if name is None:
                raise KeyError
            return name

        return walk(images), repr(sorted(kwargs.items()))

    def __call__(self, images: Any = None, *args: Any, **kwargs: Any) -> Any:
        try:
            key = None if args else self._key(images, kwargs)
        except KeyError:
            key = None
        if key is None:
            return self._inner(images, *args, **kwargs)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._inner(images, **kwargs)
            self._memo[key] = hit
            self._stats["images_preprocessed"] += sum(1 for _ in _flat(images))
        else:
            self._stats["image_cache_hits"] += 1
        # A copy: some processors pop keys from what the image processor returns.
        return type(hit)(dict(hit)) if hasattr(hit, "keys") else hit


def default_threads() -> int:
    """What ``--threads 0`` (the default) means: ``OMP_NUM_THREADS`` when set, else half the CPUs
    this process may run on, at least 1. On a shared or busy machine torch's own default (every
    core) oversubscribes: on 2 cores under load 2 threads ran 7-10x slower than 1 (issue #15)."""
    import os

    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2)


def apply_threads(threads: int, device: str) -> int:
    """Set torch's intra-op threads for a CPU run (``--threads``); returns the number used (0 on GPU)."""
    import torch

    if threads < 0:
        raise MvlsibError(f"--threads must be 0 (auto) or more, got {threads}")
    if not device.startswith("cpu"):
        return 0
    n = threads or default_threads()
    torch.set_num_threads(n)
    return n


THREADS_OPTION = BackendOption(
    "threads",
    "threads",
    int,
    0,
    "hf: torch CPU threads (CPU runs only); 0 = OMP_NUM_THREADS if set, else half the CPUs, at least 1 "
    "(torch's all-cores default slows down badly on a busy machine).",
)


def _flat(x: Any):
    if isinstance(x, (list, tuple)):
        for i in x:
            yield from _flat(i)
    else:
        yield x


class HFBackend(Backend):
    name = "hf"
    OPTIONS = (
        BackendOption("revision", "revision", str, None, "hf: model branch, tag or commit (all hf models)."),
        BackendOption("batch-size", "batch_size", int, 8, "hf: prompts (dual encoders: images) per forward pass."),
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
        THREADS_OPTION,
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
            str,
            None,
            "hf: JSON object passed to every processor call, e.g. '{\"max_pixels\": 401408}' (Qwen), "
            "'{\"do_image_splitting\": false}' (Idefics3/SmolVLM), '{\"do_pan_and_scan\": true}' "
            "(Gemma 3). Recorded in config.json and part of the resume fingerprint.",
        ),
        BackendOption(
            "feature-cache-mb",
            "feature_cache_mb",
            int,
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
        BackendOption(
            "thinking-max-new-tokens",
            "thinking_max_new_tokens",
            int,
            2048,
            "hf: new-token budget when the chat template opens a thinking block (reasoning models "
            "think before answering); 0 refuses such models instead.",
        ),
    )

    @classmethod
    def preflight(cls, model: str, **options: Any) -> None:
        # the model's config only (no weights): a wrong path, id or architecture in a moment
        check_architecture(model, options.get("revision"), bool(options.get("trust_remote_code", False)))

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
        chat_template: str | None = None,
        chat_template_kwargs: Any = None,
        processor_kwargs: Any = None,
        thinking_max_new_tokens: int = 2048,
        threads: int = 0,
        feature_cache_mb: int = DEFAULT_FEATURE_CACHE_MB,
        kv_prefix: bool = False,
    ) -> None:
        from pathlib import Path

        from .hf_inputs import Renderer

        if max_new_tokens < 1:
            raise MvlsibError(f"--max-new-tokens must be at least 1, got {max_new_tokens}")
        if feature_cache_mb < 0:
            raise MvlsibError(f"--feature-cache-mb must be 0 (off) or more, got {feature_cache_mb}")
        device, dtype = resolve_runtime(batch_size, device, dtype)
        self.threads = apply_threads(threads, device)
        self.model_id = model
        self.revision = revision
        self.batch_size = batch_size
        self.preferred_chunk = batch_size * 8
        self.device = device
        self.dtype = dtype
        self.max_new_tokens = max_new_tokens
        self.thinking_max_new_tokens = thinking_max_new_tokens
        self.trust_remote_code = trust_remote_code
        self.cache_images = cache_images
        self.template_kwargs = parse_json_option("chat-template-kwargs", chat_template_kwargs)
        self.processor_kwargs = parse_json_option("processor-kwargs", processor_kwargs)
        template_text = None
        if chat_template:
            try:
                template_text = Path(chat_template).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise MvlsibError(f"--chat-template {chat_template}: cannot read it ({exc})") from None
        # The config and processor first: what they lack (an image-text-to-text architecture, a
        # tokenizer, a chat template) is said before weights load.
        check_architecture(model, revision, trust_remote_code)
        self.processor = self._load_processor(model, revision, trust_remote_code)
        self.tokenizer = getattr(self.processor, "tokenizer", None)
        if self.tokenizer is None:
            raise MvlsibError(f"{model}: the processor has no tokenizer; not a vision-language chat model")
        if template_text is not None:
            self.processor.chat_template = template_text
        self.chat_template_source = chat_template or "model"
        if not getattr(self.processor, "chat_template", None):
            raise MvlsibError(
                f"{model}: the model has no chat template ({type(self.processor).__name__}; prefix-LM models "
                "such as PaliGemma have none), so its prompts cannot be built the way it was trained; pass "
                "--chat-template FILE with a Jinja template if you know the model's prompt format"
            )
        self._opens_thinking = self._template_opens_thinking()
        self.model = self._load_model(model, revision, trust_remote_code, dtype)
        self.model.to(device).eval()
        # Left padding: every sequence's last token is the one generation continues from.
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.renderer = Renderer(self.processor, self.template_kwargs)
        self.images: dict[str, Any] = {}
        self.stats = {"images_preprocessed": 0, "image_cache_hits": 0, "generate_calls": 0, "unbatched_prompts": 0}
        self._layout: dict[bool, dict[str, str] | None] = {}
        # per kind of prompt (with images or not): "collate" (our collation of per-prompt inputs),
        # "processor" (the processor's own batches) or False (one prompt at a time)
        self._batched_ok: dict[bool, str | bool] = {}
        self._ambiguous: dict[bool, bool] = {}
        self._inner_image_processor = getattr(self.processor, "image_processor", None)
        self._decoding: dict[str, Any] = {}
        self._dropped_ids: frozenset[int] | None = None
        self._setup_feature_cache(feature_cache_mb)
        self._setup_prefix_cache(kv_prefix)

    # ------------------------------------------------------------------ image features once per image

    # Batches compared with the plain path before the feature cache is trusted: until one of them
    # took features from the cache (computed in an earlier call), at most this many.
    FEATURE_CHECK_BATCHES = 3

    def _setup_feature_cache(self, mb: int) -> None:
        from .hf_reuse import FeatureCache, adapter_for

        self.feature_cache = None
        self.feature_cache_mb = mb
        self._feature_checks = 0
        for name in ("image_features_computed", "image_features_reused", "image_features_plain"):
            self.stats[name] = 0
        adapter = adapter_for(self.model) if mb > 0 else None
        if mb == 0:
            self.feature_cache_mode = "off (--feature-cache-mb 0)"
        elif adapter is None:
            self.feature_cache_mode = (
                f"off (no per-image feature split known for model type "
                f"{getattr(self.model.config, 'model_type', '?')!r}; plain path)"
            )
        else:
            self.feature_cache = FeatureCache(self.model, adapter, mb * 2**20, self.stats)
            self.feature_cache_mode = f"checking ({adapter.name} units)"

    def _feature_check_due(self, inputs: dict[str, Any]) -> bool:
        return (
            self.feature_cache is not None
            and self.feature_cache_mode.startswith("checking")
            and any(k.startswith("pixel_values") for k in inputs)
        )

    def _difference(self, plain: Any, plain_width: int, ours: Any, our_width: int) -> str | None:
        """What differs between two ``generate`` outputs (``return_dict_in_generate``, ``output_logits``)
        of one batch: the new tokens exactly, the first step's logits beyond allclose. None: nothing."""
        import torch

        a_tokens, b_tokens = plain.sequences[:, plain_width:], ours.sequences[:, our_width:]
        if tuple(a_tokens.shape) != tuple(b_tokens.shape) or not torch.equal(a_tokens, b_tokens):
            return "generated tokens differ"
        a, b = plain.logits[0].float(), ours.logits[0].float()
        # fp32 on the same device: differences only from summation order; bf16/fp16 round far more.
        tol = 1e-4 if self.model.dtype == torch.float32 else 2e-2
        if not torch.allclose(a, b, rtol=tol, atol=tol * max(1.0, float(a.abs().max()))):
            return f"first-step logits differ (max {float((a - b).abs().max()):.3g})"
        return None

    def _checked_generate(self, inputs: dict[str, Any], settings: dict[str, Any]) -> Any:
        """One batch both ways (plain tower, cached features); the same tokens and first-step
        logits keep the cache on, anything else switches it off for the run."""
        cache = self.feature_cache
        both = {**settings, "return_dict_in_generate": True, "output_logits": True}
        cache.enabled = False
        try:
            plain = self.model.generate(**inputs, **both)
        finally:
            cache.enabled = True
        cached = self.model.generate(**inputs, **both)
        self._feature_checks += 1
        width = inputs["input_ids"].shape[1]
        problem = self._difference(plain, width, cached, width)
        if problem:
            cache.enabled = False
            cache.clear()
            self.feature_cache_mode = f"off (self-check: {problem} with cached image features)"
            print(
                f"mvlsib-eval: {type(self.model).__name__}: {problem} with cached image features; the "
                "feature cache is off for this run (every image goes through the vision tower)",
                file=sys.stderr,
            )
            return plain.sequences
        if cache.last_call_hits or self._feature_checks >= self.FEATURE_CHECK_BATCHES:
            self.feature_cache_mode = f"on ({cache.adapter.name} units)"
        return cached.sequences

    @staticmethod
    def _load_processor(model: str, revision: str | None, trust_remote_code: bool):
        from transformers import AutoProcessor

        common = {"revision": revision or "main", "trust_remote_code": trust_remote_code}
        where = f"{model!r}{f' at revision {revision}' if revision else ''}"
        try:
            return AutoProcessor.from_pretrained(model, **common)
        except ImportError as exc:
            package = _missing_package(exc)
            raise MvlsibError(
                f"cannot load the processor of {where}: it needs the {package or 'missing'} package, which is not "
                f"installed; install it (pip install {package or '...'}) and run again"
            ) from None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            raise MvlsibError(
                f"cannot load the processor of {where}: {_one_line(exc)}. The model must be a local "
                "folder or Hub id with a processor; models with custom code need "
                "--trust-remote-code."
            ) from None

    @staticmethod
    def _load_model(model: str, revision: str | None, trust_remote_code: bool, dtype: str):
        import torch
        from transformers import AutoModelForImageTextToText

        common = {"revision": revision or "main", "trust_remote_code": trust_remote_code}
        where = f"{model!r}{f' at revision {revision}' if revision else ''}"
        try:
            net = AutoModelForImageTextToText.from_pretrained(
                model, use_safetensors=True, dtype=getattr(torch, dtype), **common
            )
        except ImportError as exc:
            package = _missing_package(exc)
            raise MvlsibError(
                f"cannot load model {where}: it needs the {package or 'missing'} package; "
                f"install it (pip install {package or '...'}) and run again"
            ) from None
        except (OSError, ValueError, TypeError, KeyError) as exc:
            message = _one_line(exc)
            if "Unrecognized configuration class" in message:
                raise MvlsibError(
                    f"cannot load model {where}: its architecture is not an image-text-to-text model "
                    "(AutoModelForImageTextToText does not know it), so it cannot answer MVL-SIB prompts"
                ) from None
            raise MvlsibError(
                f"cannot load model {where}: {message}. The model must be a local folder or Hub id with "
                "safetensors weights and a processor; models with custom code need --trust-remote-code."
            ) from None
        return net

    # ------------------------------------------------------------------ KV-prefix reuse

    def _setup_prefix_cache(self, on: bool) -> None:
        from .hf_reuse import KV_PREFIX_TYPES, PrefixCache, sliding_window

        model_type = getattr(self.model.config, "model_type", "?")
        allowed = model_type in KV_PREFIX_TYPES
        self.prefix_cache = PrefixCache(self.stats) if on and allowed else None
        # Two self-checked batches per kind of prefix: text only, and through the images.
        self._prefix_checks_left = {False: 2, True: 2}
        self._image_prefixes_on = self.prefix_cache is not None
        self.kv_prefix_images_mode = "checking" if self._image_prefixes_on else "off"
        self.kv_prefix_mode = (
            "off (--kv-prefix not given)"
            if not on
            else "checking"
            if allowed
            else f"off (model type {model_type!r} cannot continue from a shared prefix cache here)"
        )
        config = self.model.config
        self._window = sliding_window(config)
        self._image_token_id = getattr(config, "image_token_id", None)
        if self._image_token_id is None:
            self._image_token_id = getattr(config, "image_token_index", None)

    def _prefix_length(self, inputs: dict[str, Any], has_images: bool, same_images: bool = False) -> int:
        """Tokens of the prefix the batch shares (0: run it plainly); past the images only when
        ``same_images`` (every row shows the same images) and no suffix has an image."""
        from .hf_reuse import shared_prefix

        if self.prefix_cache is None or self.kv_prefix_mode.startswith("off"):
            return 0
        if self._batched_ok.get(has_images) != "collate" or has_images and self._image_token_id is None:
            return 0
        if self._window is not None and inputs["input_ids"].shape[1] + self._new_token_budget() > self._window:
            return 0  # see hf_reuse.sliding_window
        return shared_prefix(
            inputs, self._image_token_id if has_images else None, through_images=same_images and self._image_prefixes_on
        )

    def _prefix_has_images(self, inputs: dict[str, Any], length: int) -> bool:
        if self._image_token_id is None:
            return False
        row = inputs["input_ids"][0][inputs["attention_mask"][0].bool()]
        return bool((row[:length] == self._image_token_id).any())

    def _prefix_generate(
        self,
        inputs: dict[str, Any],
        length: int,
        has_images: bool,
        settings: dict[str, Any],
        image_ids: tuple[str, ...] = (),
        with_images: bool | None = None,
    ):
        """generate() continuing from the shared prefix's cache; returns (output, input width).
        ``image_ids``: the images of the first row (all rows show the same when the prefix has images);
        ``with_images``: whether the prefix holds images (found out here when not given)."""
        from .hf_reuse import split_at_prefix

        layout = self._layout[has_images]
        keys = {k for k, how in layout.items() if how == "sequence"}
        if with_images is None:
            with_images = has_images and self._prefix_has_images(inputs, length)
        image_layout = {k: how for k, how in layout.items() if how != "sequence"} if with_images else None
        prefix, batch = split_at_prefix(inputs, length, keys, self.tokenizer.pad_token_id, image_layout)
        cache = self.prefix_cache.for_batch(
            self.model, prefix, batch["input_ids"].shape[0], tuple(image_ids) if with_images else ()
        )
        if with_images:
            self.stats["kv_prefix_image_batches"] = self.stats.get("kv_prefix_image_batches", 0) + 1
        return self.model.generate(**batch, cache=cache, **settings), batch["input_ids"].shape[1]

    def _checked_prefix_generate(self, inputs, length, has_images, settings, image_ids, with_images: bool):
        """One batch both ways; the same tokens and first-step logits keep KV-prefix reuse on. Each kind
        of prefix (text only; with images) is checked on its own first two batches, and a difference
        turns off only that kind: text prefixes may still be fine when image prefixes are not."""
        both = {**settings, "return_dict_in_generate": True, "output_logits": True}
        plain = self.model.generate(**inputs, **both)
        width = inputs["input_ids"].shape[1]
        problem = None
        try:
            reused, reused_width = self._prefix_generate(inputs, length, has_images, both, image_ids, with_images)
        except Exception as exc:  # a family whose forward cannot continue from a cache this way
            problem = f"{type(exc).__name__}: {_one_line(exc)[:120]}"
        else:
            problem = self._difference(plain, width, reused, reused_width)
        self._prefix_checks_left[with_images] -= 1
        what, scope = ("prefix with images", "reuse through images") if with_images else ("prefix", "reuse")
        if problem:
            self.prefix_cache.clear()
            mode = f"off (self-check: {problem} with the reused {what} cache)"
            if with_images:
                self._image_prefixes_on = False
                self.kv_prefix_images_mode = mode
            else:
                self.kv_prefix_mode = mode
            print(
                f"mvlsib-eval: {type(self.model).__name__}: {problem} with the reused {what} cache; KV-prefix "
                f"{scope} is off for this run",
                file=sys.stderr,
            )
        elif self._prefix_checks_left[with_images] <= 0:
            if with_images:
                self.kv_prefix_images_mode = "on"
            else:
                self.kv_prefix_mode = "on"
        return plain.sequences[:, width:]

    def set_images(self, images):
        super().set_images(images)
        if self.feature_cache is not None:
            self.feature_cache.clear()  # features of images no longer in the table would only take memory
        if self.prefix_cache is not None:
            self.prefix_cache.clear()
        if self.cache_images and self._inner_image_processor is not None:
            names = {id(im): name for name, im in self.images.items()}
            self.processor.image_processor = _MemoImageProcessor(self._inner_image_processor, names, self.stats)

    # ------------------------------------------------------------------ inputs

    def _chat_text(self, request: Request) -> str:
        return self.renderer.render(request.messages, bool(request.image_ids))

    def _images_of(self, request: Request) -> list[Any]:
        try:
            return [self.images[i] for i in request.image_ids]
        except KeyError as exc:
            raise MvlsibError(f"image {exc.args[0]!r} is not in the image table of this release") from None

    def _call_processor(self, texts: list[str], image_lists: list[list[Any]] | None) -> dict[str, Any]:
        from .hf_inputs import starts_with_bos

        kwargs: dict[str, Any] = {"text": list(texts), "padding": True, "return_tensors": "pt", **self.processor_kwargs}
        # The template already wrote BOS: the tokenizer must not add a second one.
        if all(starts_with_bos(t, self.tokenizer) for t in texts):
            kwargs["add_special_tokens"] = False
        if image_lists:
            kwargs["images"] = image_lists
        try:
            return dict(self.processor(**kwargs))
        except (TypeError, ValueError) as exc:
            raise MvlsibError(
                f"{type(self.processor).__name__} refused the prompt inputs: {_one_line(exc)}"
                + (" (check --processor-kwargs)" if self.processor_kwargs else "")
            ) from None

    def _single(self, text: str, request: Request) -> dict[str, Any]:
        return self._call_processor([text], [self._images_of(request)] if request.image_ids else None)

    def _check_batching(
        self, texts: list[str], requests: list[Request], singles: list[dict[str, Any]], has_images: bool
    ) -> None:
        """The first batch of each modality: does collating per-prompt inputs equal the processor's
        own batched call (one image list per prompt)? If not, prompts of that kind run one by one."""
        from .hf_inputs import ambiguous_keys, compare_batched, differences_beyond_padding, infer_layout

        if len(requests) < 2:
            return
        # The reference is the plain processor (not the memo), so the check also covers the memo.
        memo = self.processor.image_processor
        self.processor.image_processor = self._inner_image_processor
        try:
            batched = self._call_processor(texts, [self._images_of(r) for r in requests] if has_images else None)
        except MvlsibError as exc:  # the processor cannot batch these prompts at all
            batched, problems, layout = None, [str(exc)], {}
        finally:
            self.processor.image_processor = memo
        if batched is not None:
            layout = infer_layout(singles, batched)
            self._ambiguous[has_images] = bool(ambiguous_keys(singles, batched))
            problems = compare_batched(singles, batched, layout, self.tokenizer.pad_token_id)
        kind = "image" if has_images else "text"
        if not problems:
            self._batched_ok[has_images] = "collate"
        elif batched is not None and not differences_beyond_padding(singles, batched, layout):
            # The processor pads its own way (e.g. Mllama's aspect_ratio_mask); its batches
            # carry each prompt's values unchanged, so use them as they come.
            print(
                f"mvlsib-eval: {type(self.processor).__name__}: {kind} prompts are batched by the processor "
                f"itself ({'; '.join(problems)} only in its padding)",
                file=sys.stderr,
            )
            self._batched_ok[has_images] = "processor"
        else:
            print(
                f"mvlsib-eval: {type(self.processor).__name__}: batched inputs differ from per-prompt inputs "
                f"({'; '.join(problems)}); {kind} prompts run one at a time",
                file=sys.stderr,
            )
            self._batched_ok[has_images] = False
        self._layout[has_images] = layout

    def _probe(self, idx: list[int], requests: list[Request]) -> list[int]:
        """The self-check batch: prompts with as many different image counts as there are
        (the most images first), filled up to 2-4 prompts."""
        size = min(len(idx), max(2, min(4, self.batch_size)))
        first_of_count: dict[int, int] = {}
        for i in idx:
            first_of_count.setdefault(len(requests[i].image_ids), i)
        picks = [first_of_count[c] for c in sorted(first_of_count, reverse=True)][:size]
        picks += [i for i in idx if i not in picks][: size - len(picks)]
        return picks

    def build_batches(self, requests: list[Request]) -> list[tuple[list[int], dict[str, Any]]]:
        """The model inputs of ``requests``: (request indices, inputs) per forward pass, longest first."""
        from .hf_inputs import collate

        texts = [self._chat_text(r) for r in requests]
        singles: dict[int, dict[str, Any]] = {}

        def single(i: int) -> dict[str, Any]:  # per-prompt inputs, made only where they are used
            if i not in singles:
                singles[i] = self._single(texts[i], requests[i])
            return singles[i]

        batches = []
        for has_images in (True, False):
            idx = [i for i, r in enumerate(requests) if bool(r.image_ids) == has_images]
            if not idx:
                continue
            # Longest first: memory trouble shows up at once; similar lengths pad little. Where the
            # processor batches itself, per-prompt inputs would be made only to be measured (and
            # their images preprocessed twice): the rendered text's length stands in.
            if self._batched_ok.get(has_images) == "processor":
                idx.sort(key=lambda i: (-len(texts[i]), i))
            else:
                idx.sort(key=lambda i: (-single(i)["input_ids"].shape[1], i))
            parts_of = None
            if has_images and self.prefix_cache is not None and self._image_prefixes_on:
                # Batches of one image set (groups in the order of their longest prompt, by length
                # within a group; prompts whose images no other prompt of the chunk shows are batched
                # together): such a batch can share its prefix through the images. The prefix order
                # sends an i2s reference set in every language in one chunk.
                groups: dict[tuple, list[int]] = {}
                for i in idx:
                    groups.setdefault(tuple(requests[i].image_ids), []).append(i)
                alone = [g[0] for g in groups.values() if len(g) == 1]
                parts_of = [g for g in groups.values() if len(g) > 1] + ([alone] if alone else [])
            several = any(len(requests[i].image_ids) > 1 for i in idx)
            if has_images not in self._batched_ok or (self._ambiguous.get(has_images) and several):
                probe = self._probe(idx, requests)
                self._check_batching(
                    [texts[i] for i in probe], [requests[i] for i in probe], [single(i) for i in probe], has_images
                )
            size = self.batch_size if self._batched_ok.get(has_images, True) else 1
            parts = [
                group[start : start + size] for group in (parts_of or [idx]) for start in range(0, len(group), size)
            ]
            for part in parts:
                if len(part) == 1:
                    batches.append((part, single(part[0])))
                    if size == 1 and self.batch_size > 1:  # batching refused by the self-check
                        self.stats["unbatched_prompts"] += 1
                elif self._batched_ok.get(has_images) == "processor":
                    batches.append(
                        (
                            part,
                            self._call_processor(
                                [texts[i] for i in part],
                                [self._images_of(requests[i]) for i in part] if has_images else None,
                            ),
                        )
                    )
                else:
                    batches.append(
                        (
                            part,
                            collate([single(i) for i in part], self._layout[has_images], self.tokenizer.pad_token_id),
                        )
                    )
        return batches

    # ------------------------------------------------------------------ generation

    def _template_opens_thinking(self) -> bool:
        """Does the generation prompt open a thinking block? Then the model reasons before it
        answers and needs a budget for it; with none (``--thinking-max-new-tokens 0``) it is refused."""
        probe = [{"role": "user", "content": [{"type": "text", "text": "Answer with the letter."}]}]
        try:
            text = self.processor.apply_chat_template(
                probe, add_generation_prompt=True, tokenize=False, **self.template_kwargs
            )
        except Exception as exc:  # a template error is the user's to fix: say which
            raise MvlsibError(f"the chat template cannot be rendered: {_one_line(exc)}") from None
        opens = text.rstrip().endswith(THINKING_OPENERS)
        if opens and self.thinking_max_new_tokens < 1:
            raise MvlsibError(
                "the chat template opens a thinking block, so the model reasons before it answers and "
                f"{self.max_new_tokens} new tokens never reach an answer; give --thinking-max-new-tokens N "
                "(e.g. 2048), or switch thinking off if the template allows it "
                "(--chat-template-kwargs '{\"enable_thinking\": false}')"
            )
        return opens

    def _new_token_budget(self) -> int:
        if self._opens_thinking:
            return max(self.max_new_tokens, self.thinking_max_new_tokens)
        return self.max_new_tokens

    def decoding(self, budget: int) -> dict[str, Any]:
        gen = getattr(self.model, "generation_config", None)
        eos = getattr(gen, "eos_token_id", None)
        if eos is None:
            eos = self.tokenizer.eos_token_id
        return {
            **NEUTRAL_DECODING,
            "max_new_tokens": budget,
            "pad_token_id": self.tokenizer.pad_token_id,
            "eos_token_id": eos,
        }

    def _decode(self, token_ids) -> str:
        if self._dropped_ids is None:
            # Special tokens are dropped, except reasoning markers a tokenizer may have made special.
            self._dropped_ids = frozenset(
                i
                for i in (getattr(self.tokenizer, "all_special_ids", None) or [])
                if self.tokenizer.convert_ids_to_tokens(i) not in REASONING_TOKENS
            )
        ids = [int(t) for t in token_ids if int(t) not in self._dropped_ids]
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    def generate(self, requests: list[Request]) -> list[str]:
        import torch

        if not requests:
            return []
        responses: list[str | None] = [None] * len(requests)
        for idx, inputs in self.build_batches(requests):
            budget = self._new_token_budget()
            settings = self.decoding(budget)
            self._decoding = settings
            inputs = move_inputs(inputs, self.device, self.model.dtype)
            has_images = bool(requests[idx[0]].image_ids)
            first_images = tuple(requests[idx[0]].image_ids)
            same_images = has_images and all(tuple(requests[i].image_ids) == first_images for i in idx)
            with torch.inference_mode():
                if self._feature_check_due(inputs):
                    out = self._checked_generate(inputs, settings)
                    new_tokens = out[:, inputs["input_ids"].shape[1] :]
                elif length := self._prefix_length(inputs, has_images, same_images):
                    with_images = has_images and self._prefix_has_images(inputs, length)
                    if self._prefix_checks_left[with_images] > 0:
                        new_tokens = self._checked_prefix_generate(
                            inputs, length, has_images, settings, first_images, with_images
                        )
                    else:
                        out, width = self._prefix_generate(
                            inputs, length, has_images, settings, first_images, with_images
                        )
                        self.stats["kv_prefix_batches"] = self.stats.get("kv_prefix_batches", 0) + 1
                        new_tokens = out[:, width:]
                else:
                    out = self.model.generate(**inputs, **settings)
                    new_tokens = out[:, inputs["input_ids"].shape[1] :]
            self.stats["generate_calls"] += 1
            if "attention_mask" in inputs:  # what the KV-prefix share is measured against
                self.stats["prompt_tokens"] = self.stats.get("prompt_tokens", 0) + int(inputs["attention_mask"].sum())
            for i, row in zip(idx, new_tokens):
                responses[i] = self._decode(row)
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
            "generation": self._decoding or self.decoding(self.max_new_tokens),
            "chat_template": self.chat_template_source,
            "chat_template_sha256": _sha256(self.processor.chat_template),
            "chat_template_kwargs": self.template_kwargs,
            "processor_kwargs": self.processor_kwargs,
            "rendering": self.renderer.mode,
            "image_placeholder": self.renderer.placeholder,
            "opens_thinking": bool(self._opens_thinking),
            "trust_remote_code": self.trust_remote_code,
            "image_feature_cache": {"mode": self._described_feature_mode(), "max_mb": self.feature_cache_mb},
            "kv_prefix": self.kv_prefix_mode
            if self.kv_prefix_mode != "checking"
            else "unused (no batch shared a text prefix within the limits: several prompts, 8+ tokens, the attention window)",
            "kv_prefix_images": self.kv_prefix_images_mode
            if self.kv_prefix_images_mode != "checking"
            else "unused (no batch of prompts showing the same images, all of them in the shared prefix)",
        }

    def _described_feature_mode(self) -> str:
        if not self.feature_cache_mode.startswith("checking"):
            return self.feature_cache_mode
        if self._feature_checks:  # the run ended before a batch took features from the cache
            return f"on after {self._feature_checks} self-checked batch(es), none reusing features yet"
        return "unused (no prompt with images)"

    def close(self) -> None:
        if self._inner_image_processor is not None:
            self.processor.image_processor = self._inner_image_processor
        if self.feature_cache is not None:
            self.feature_cache.remove()
        del self.model


def _sha256(text: Any) -> str | None:
    import hashlib

    if not isinstance(text, str):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
