"""Tiny random-weight models of the popular vision-language families, one module per family.

Each module builds, from configs and a tokenizer trained here (nothing is downloaded), a
model folder that ``AutoProcessor`` and ``AutoModelForImageTextToText`` (or, for dual
encoders, ``AutoModel``) load like a Hub checkpoint: safetensors weights, the family's
processor, and the family's **real chat template** (each module names its source). Tests
and benchmarks run the evaluator and ``verify-images`` on them to prove that every family
receives correct inputs (docs/evaluation/backends.md, "Model families").

A family module defines::

    FAMILY: str              # the key, e.g. "qwen2_vl"
    KIND: str                # "generative" or "dual_encoder"
    TEMPLATE_SOURCE: str     # where the chat template comes from (generative)
    NEEDS: tuple[str, ...]   # optional: packages its processor or model needs beyond the main test
                             # environment (("torchvision",), or ("torchvision", "timm") for a timm
                             # vision tower); such families are tested in tests/torchvision_families/,
                             # in the eval session (noxfile.py), which has both
    FILLED_TOKEN: str        # optional: the token the model fills with image features, where the
                             # processor expands its placeholder into other tokens or it is only text
    WIDE: bool               # optional: build() takes ``wide=True``, a head dimension vLLM's CPU
                             # attention accepts (a multiple of 32)
    def build(out_dir, texts, *, seed=0) -> Path

Modules are found by name: adding a family is adding a module here.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType


def family_names() -> list[str]:
    """Every family module in this package, sorted (modules starting with "_" are helpers)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def family(name: str) -> ModuleType:
    if name not in family_names():
        raise KeyError(f"unknown family {name!r}; expected one of {', '.join(family_names())}")
    return importlib.import_module(f"{__name__}.{name}")


def needs(name: str) -> tuple[str, ...]:
    """The packages the family's processor needs beyond the main test environment."""
    return tuple(getattr(family(name), "NEEDS", ()))


def missing(name: str) -> list[str]:
    """Those of ``needs(name)`` that this interpreter cannot import."""
    return [package for package in needs(name) if importlib.util.find_spec(package) is None]


def build_family(name: str, out_dir: str | Path, texts: Iterable[str], *, seed: int = 0, wide: bool = False) -> Path:
    """``wide``: the family's model at a head dimension vLLM's CPU attention accepts (families with
    ``WIDE = True`` only; see tests/vllm/)."""
    if wide:
        return family(name).build(Path(out_dir), list(texts), seed=seed, wide=True)
    return family(name).build(Path(out_dir), list(texts), seed=seed)
