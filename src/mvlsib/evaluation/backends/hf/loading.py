"""Loading a transformers model and where it runs: config, processor, weights, device, dtype, threads.

What a model lacks (an image-text-to-text architecture, a tokenizer, a chat template, a package
its code needs) is said in one line naming the model, before weights load where possible.
``resolve_runtime``, ``apply_threads`` and ``move_inputs`` are shared with verify-images' dual
encoders. torch and transformers are imported inside the functions: importing the backend
registry (``--help``) must stay fast.
"""

from __future__ import annotations

import importlib.util
import os
import re
from typing import Any

from ..._compat import MvlsibError, hubio, params, readers
from ..base import one_line

DTYPES = ("auto", "bfloat16", "float16", "float32")
DEVICE_PATTERN = r"auto|cpu|cuda(:[0-9]+)?"


def check_runtime(batch_size: int, device: str, dtype: str) -> None:
    """Refuse a bad --batch-size, --device or --dtype (no torch needed)."""
    if batch_size < 1:
        raise MvlsibError(f"--batch-size must be at least 1, got {batch_size}")
    if dtype not in DTYPES:
        raise MvlsibError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if not re.fullmatch(DEVICE_PATTERN, device):
        raise MvlsibError(f"--device must be auto, cpu, cuda or cuda:N, got {device!r}")


def resolve_runtime(batch_size: int, device: str, dtype: str) -> tuple[str, str]:
    """Check --batch-size/--device/--dtype and resolve "auto": CUDA + bf16 when present, else CPU float32.

    Under torchrun/accelerate (``LOCAL_RANK`` set) "auto" is the rank's own GPU.
    """
    import torch

    check_runtime(batch_size, device, dtype)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
        local_rank = params.env_number("LOCAL_RANK") if device == "cuda" else None
        if local_rank is not None:
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


def default_threads() -> int:
    """What ``--threads 0`` (the default) means: ``OMP_NUM_THREADS`` when set, else half the CPUs
    this process may run on, at least 1. On a shared or busy machine torch's own default (every
    core) oversubscribes: on 2 cores under load 2 threads ran 7-10x slower than 1."""
    env = params.env_number("OMP_NUM_THREADS")
    if env is not None:
        return env
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2)


def check_threads(threads: int) -> None:
    if threads < 0:
        raise MvlsibError(f"--threads must be 0 (auto) or more, got {threads}")


def apply_threads(threads: int, device: str) -> int:
    """Set torch's intra-op threads for a CPU run (``--threads``); returns the number used (0 on GPU)."""
    import torch

    check_threads(threads)
    if not device.startswith("cpu"):
        return 0
    n = threads or default_threads()
    torch.set_num_threads(n)
    return n


def _missing_package(exc: BaseException) -> str | None:
    """The package a failed load says it lacks (transformers words it three ways), lower-cased."""
    text = str(exc)
    match = (
        re.search(r"requires the (\S+) librar", text)
        or re.search(r"No module named '([^'.]+)", text)
        or re.search(r"Missing optional dependencies: ([A-Za-z0-9_-]+)", text)
    )
    return match.group(1).lower() if match else None


def install_advice(package: str) -> str:
    """How to install ``package``. torchvision must be the release built for the installed torch
    (0.N+15 for torch 2.N, from the same package index as torch), or it does not load beside it.
    timm needs torchvision: its advice installs both, since a plain ``pip install timm`` pulls the
    newest torchvision, which may not match the installed torch."""
    if package not in ("torchvision", "timm"):
        return f"pip install {package}"
    also = " timm" if package == "timm" else ""
    try:
        import torch

        major, minor = (int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    except (ImportError, ValueError):
        major, minor = 0, 0
    if major != 2:
        return (
            f"pip install torchvision{also} (the torchvision release built for your torch, from the same package index)"
        )
    return (
        f"pip install torchvision==0.{minor + 15}.*{also}, the torchvision release built for your torch "
        f"{torch.__version__}, from the same package index as torch"
    )


# Sub-config types that transformers builds as a timm network (TimmWrapperModel or a subclass of it).
TIMM_CONFIG_TYPES = ("timm_wrapper", "gemma3n_vision")


def needs_timm(config: Any) -> bool:
    """Is a part of the model a timm network (PerceptionLM's Perception Encoder, Gemma 3n's MobileNetV5)?
    transformers builds it only where timm is installed (and reads a timm config without label names only there)."""
    parts = [config] + [getattr(config, key, None) for key in getattr(config, "sub_configs", None) or {}]
    return any(getattr(part, "model_type", None) in TIMM_CONFIG_TYPES for part in parts)


def check_packages(model: str, revision: str | None, config: Any) -> None:
    """Refuse, before anything loads, a model whose vision tower is a timm network where timm (or the
    torchvision it needs) is missing: one line naming both packages and how to install them."""
    if not needs_timm(config):
        return
    missing = [package for package in ("torchvision", "timm") if importlib.util.find_spec(package) is None]
    if missing:
        raise MvlsibError(
            f"cannot load model {_where(model, revision)}: its vision tower is a timm model "
            f"({config.model_type}), which needs the timm and torchvision packages; {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed here; install {'it' if len(missing) == 1 else 'them'} "
            f"({install_advice('timm')}) and run again"
        )


def _package_error(what: str, exc: BaseException) -> MvlsibError | None:
    """What the environment lacks for loading ``what``: a package, or the Hub (offline or not reached)."""
    if (hub := hubio.unreachable(exc, f"cannot load {what}")) is not None:
        return MvlsibError(hub)
    package = _missing_package(exc)
    if package is None:
        return None
    return MvlsibError(
        f"cannot load {what}: it needs the {package} package, which is not installed here; "
        f"install it ({install_advice(package)}) and run again"
    )


def _remote_code_advice(remote_code: bool, trust_remote_code: bool, exc: BaseException | None = None) -> str:
    """Advice to pass --trust-remote-code, only for models whose config names remote code (auto_map) or
    whose error says so: for a native transformers model it is no fix."""
    said = exc is not None and "trust_remote_code" in str(exc)
    if trust_remote_code or not (remote_code or said):
        return ""
    return "; its config names custom code: pass --trust-remote-code if you trust it"


def _where(model: str, revision: str | None) -> str:
    return f"{model!r}{f' at revision {revision}' if revision else ''}"


def load_config(model: str, revision: str | None, trust_remote_code: bool):
    """The model's config (nothing heavy loads), or a one-line error naming the model."""
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(model, revision=revision or "main", trust_remote_code=trust_remote_code)
    except (ImportError, OSError, ValueError, KeyError, TypeError) as exc:
        # A timm tower's config (Gemma 3n's) is read only where timm is installed.
        missing = _package_error(f"the config of {_where(model, revision)}", exc)
        if missing is not None:
            raise missing from None
        raise MvlsibError(
            f"cannot load the config of {_where(model, revision)}: {one_line(exc)}. The model must be a local "
            f"folder or Hub id{_remote_code_advice(False, trust_remote_code, exc)}."
        ) from None


def names_remote_code(config: Any) -> bool:
    """Does the config name code of its own (``auto_map``), which only --trust-remote-code runs?"""
    return bool(getattr(config, "auto_map", None))


def is_image_text_to_text(config) -> bool:
    """Can ``AutoModelForImageTextToText`` build this config (a known type, or custom code declaring it)?"""
    from transformers.models.auto.modeling_auto import MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    custom = "AutoModelForImageTextToText" in (getattr(config, "auto_map", None) or {})
    return getattr(config, "model_type", "") in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES or custom


def check_architecture(model: str, revision: str | None, trust_remote_code: bool):
    """Refuse, before anything heavy loads, a model that is not image-text-to-text (a text-only
    LM, an encoder, Phi-4-multimodal's own class): it cannot answer an MVL-SIB prompt. Returns the config."""
    config = load_config(model, revision, trust_remote_code)
    if not is_image_text_to_text(config):
        raise MvlsibError(
            f"cannot load model {_where(model, revision)}: its architecture ({config.model_type}) is not an "
            "image-text-to-text model (AutoModelForImageTextToText does not know it), so it cannot answer "
            "MVL-SIB prompts"
        )
    check_packages(model, revision, config)
    return config


def read_chat_template(path: str | None) -> str | None:
    """The text of a --chat-template file (None: the model's own)."""
    if not path:
        return None
    try:
        data = readers.read_limited(path, 1 << 20, fix="--chat-template names a Jinja template file (at most 1 MiB)")
    except readers.ReadError as exc:
        raise MvlsibError(f"--chat-template {exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MvlsibError(f"--chat-template {path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def load_processor(
    model: str, revision: str | None, trust_remote_code: bool, chat_template: str | None, remote_code: bool = False
):
    """The model's processor with a tokenizer and a chat template (``chat_template``: the text
    replacing the model's own), or a one-line error saying what is missing. ``remote_code``: the
    config names code of its own (only then is --trust-remote-code advice)."""
    from transformers import AutoProcessor

    where = _where(model, revision)
    try:
        processor = AutoProcessor.from_pretrained(
            model, revision=revision or "main", trust_remote_code=trust_remote_code
        )
    except (ImportError, OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        # A torchvision-only image or video processor fails as an ImportError or as a ValueError
        # ("Missing optional dependencies: torchvision"): either way the fix is the package.
        missing = _package_error(f"the processor of {where}", exc)
        if missing is not None:
            raise missing from None
        raise MvlsibError(
            f"cannot load the processor of {where}: {one_line(exc)}. The model must be a local folder or Hub id "
            f"with a processor{_remote_code_advice(remote_code, trust_remote_code, exc)}."
        ) from None
    if getattr(processor, "tokenizer", None) is None:
        raise MvlsibError(f"{model}: the processor has no tokenizer; not a vision-language chat model")
    if chat_template is not None:
        processor.chat_template = chat_template
    if not getattr(processor, "chat_template", None):
        raise MvlsibError(
            f"{model}: the model has no chat template ({type(processor).__name__}; prefix-LM models "
            "such as PaliGemma have none), so its prompts cannot be built the way it was trained; pass "
            "--chat-template FILE with a Jinja template if you know the model's prompt format"
        )
    return processor


def load_model(
    model: str, revision: str | None, *, trust_remote_code: bool, dtype: str, device: str, remote_code: bool = False
):
    """The model's weights (safetensors) in ``dtype`` on ``device``, in eval mode."""
    import torch
    from transformers import AutoModelForImageTextToText

    where = _where(model, revision)
    try:
        net = AutoModelForImageTextToText.from_pretrained(
            model,
            use_safetensors=True,
            dtype=getattr(torch, dtype),
            revision=revision or "main",
            trust_remote_code=trust_remote_code,
        )
    except (ImportError, OSError, ValueError, TypeError, KeyError) as exc:
        missing = _package_error(f"model {where}", exc)
        if missing is not None:
            raise missing from None
        message = one_line(exc)
        if "Unrecognized configuration class" in message:
            raise MvlsibError(
                f"cannot load model {where}: its architecture is not an image-text-to-text model "
                "(AutoModelForImageTextToText does not know it), so it cannot answer MVL-SIB prompts"
            ) from None
        raise MvlsibError(
            f"cannot load model {where}: {message}. The model must be a local folder or Hub id with "
            f"safetensors weights and a processor{_remote_code_advice(remote_code, trust_remote_code, exc)}."
        ) from None
    net.to(device).eval()  # type: ignore[arg-type]  # transformers types .to() as a wrapped PreTrainedModel method
    return net
