"""Image features computed once per image: a bounded cache in front of the vision tower, self-checked.

An i2s reference image is shown in every language, an s2i option image in many prompts; the
vision tower's output for it is the same every time. ``FeatureCache`` wraps the loaded model's
``base_model.get_image_features``, cuts each call into units (``feature_units``), runs the
original method only on units it has not seen and hands back the output in the layout the
model's forward expects. ``FeatureReuse`` is the backend's side of it: it builds the cache where
the family allows it and compares the first batches with the plain path, switching the cache off
for the run on any difference.
"""

from __future__ import annotations

import functools
import inspect
from collections import OrderedDict
from typing import Any

from ..._compat import terminal
from ..base import BackendStats, one_line
from .feature_units import Adapter, adapter_for, refusal
from .generation import COMPARED, outputs_differ

# A few hundred images' features of a 7B model (LLaVA-1.5: 576 x 4096 x 2 bytes = 4.7 MB an
# image); MVL-SIB has 70 images, so the default holds all of them for most families.
DEFAULT_FEATURE_CACHE_MB = 1024


class FeatureCache:
    """LRU cache of per-unit image features (bounded in bytes), wrapped around
    ``model.base_model.get_image_features``. ``enabled`` False passes every call through."""

    def __init__(self, model: Any, adapter: Adapter, max_bytes: int, stats: BackendStats) -> None:
        self.adapter, self.max_bytes, self.stats = adapter, max_bytes, stats
        self.enabled = True
        self.last_call_hits = 0  # distinct units of the last call found in the cache (from earlier calls)
        self._entries: OrderedDict[bytes, tuple] = OrderedDict()
        self._bytes = 0
        self._template: Any = None  # what the adapter needs to rebuild an output, from the first encoding
        self._owner = model.base_model
        self._original = self._owner.get_image_features
        self._signature = inspect.signature(self._original)

        @functools.wraps(self._original)  # keeps the signature generate() inspects
        def get_image_features(*args: Any, **kwargs: Any) -> Any:
            return self._call(args, kwargs)

        self._owner.get_image_features = get_image_features

    def remove(self) -> None:
        """Give the model its own method back and free the features."""
        if self._owner.__dict__.get("get_image_features") is not None:
            del self._owner.get_image_features
        self.clear()

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def _call(self, args: tuple, kwargs: dict[str, Any]) -> Any:
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError:
            return self._original(*args, **kwargs)
        named = dict(bound.arguments)
        named.update(named.pop("kwargs", {}) or {})
        split = self.adapter.units(named) if named.get("return_dict", True) else None
        if split is None:
            return self._original(*args, **kwargs)
        keys, inputs = split.keys, split.inputs
        if not keys:
            return self._original(*args, **kwargs)
        if not self.enabled:
            self.stats.image_features_plain += len(keys)
            return self._original(*args, **kwargs)
        found: dict[bytes, tuple] = {}
        missing: dict[bytes, int] = {}  # key -> its first unit in this call
        for i, key in enumerate(keys):
            if key in found or key in missing:
                continue
            hit = self._entries.get(key)
            if hit is None:
                missing[key] = i
            else:
                self._entries.move_to_end(key)
                found[key] = hit
        self.last_call_hits = len(found)
        if missing:
            todo = list(missing.values())
            encoded = self.adapter.encode(self._original, named, [inputs[i] for i in todo])
            self._template = encoded.template
            for i, feats in zip(todo, encoded.features):
                feats = tuple(f.detach() for f in feats)
                found[keys[i]] = feats
                self._store(keys[i], feats)
            self.stats.image_features_computed += len(todo)
        self.stats.image_features_reused += len(keys) - len(missing)
        return self.adapter.assemble([found[k] for k in keys], split.grouping, self._template)

    def _store(self, key: bytes, feats: tuple) -> None:
        size = sum(f.numel() * f.element_size() for f in feats)
        if size > self.max_bytes:
            return
        self._entries[key] = feats
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, old = self._entries.popitem(last=False)
            self._bytes -= sum(f.numel() * f.element_size() for f in old)


class FeatureReuse:
    """The feature cache of one loaded model (``cache`` None: off) and its self-check.

    ``mode`` says what happened, for config.json: "off (why)", "checking (units)" until a batch
    passed the check, "on (units)"."""

    # Batches compared with the plain path before the feature cache is trusted: until one of them
    # took features from the cache (computed in an earlier call), at most this many.
    CHECK_BATCHES = 3

    def __init__(self, model: Any, mb: int, stats: BackendStats) -> None:
        self.model, self.max_mb, self.checks = model, mb, 0
        self.cache: FeatureCache | None = None
        adapter = adapter_for(model) if mb > 0 else None
        refused = refusal(model) if mb > 0 else None
        if mb == 0:
            self.mode = "off (--feature-cache-mb 0)"
        elif refused is not None:
            self.mode = f"off ({refused}; plain path)"
        elif adapter is None:
            self.mode = (
                f"off (no per-image feature split known for model type "
                f"{getattr(model.config, 'model_type', '?')!r}; plain path)"
            )
        else:
            self.cache = FeatureCache(model, adapter, mb * 2**20, stats)
            self.mode = f"checking ({adapter.name} units)"

    def check_due(self, inputs: dict[str, Any]) -> bool:
        """Is this batch (one with pixels) to be run both ways?"""
        return (
            self.cache is not None
            and self.mode.startswith("checking")
            and any(k.startswith("pixel_values") for k in inputs)
        )

    def checked_generate(self, inputs: dict[str, Any], settings: dict[str, Any]) -> Any:
        """One batch both ways (plain tower, cached features); the same tokens and first-step
        logits keep the cache on, anything else switches it off for the run. Returns the sequences."""
        cache = self.cache
        assert cache is not None
        both = {**settings, **COMPARED}
        cache.enabled = False
        try:
            plain = self.model.generate(**inputs, **both)
        finally:
            cache.enabled = True
        self.checks += 1
        width = inputs["input_ids"].shape[1]
        try:
            cached = self.model.generate(**inputs, **both)
        except Exception as exc:  # a family whose call the units do not rebuild: refused, the plain answers kept
            problem: str | None = f"{type(exc).__name__}: {one_line(exc)[:120]}"
        else:
            problem = outputs_differ(plain, width, cached, width, self.model.dtype)
        if problem:
            cache.enabled = False
            cache.clear()
            self.mode = f"off (self-check: {problem} with cached image features)"
            terminal.note(
                "mvlsib-eval: {}: {} with cached image features; the feature cache is off for this run (every image goes through the vision tower)",
                type(self.model).__name__,
                problem,
            )
            return plain.sequences
        if cache.last_call_hits or self.checks >= self.CHECK_BATCHES:
            self.mode = f"on ({cache.adapter.name} units)"
        return cached.sequences

    def clear(self) -> None:
        if self.cache is not None:
            self.cache.clear()

    def close(self) -> None:
        if self.cache is not None:
            self.cache.remove()

    def describe(self) -> dict[str, Any]:
        mode = self.mode
        if mode.startswith("checking"):
            if self.checks:  # the run ended before a batch took features from the cache
                mode = f"on after {self.checks} self-checked batch(es), none reusing features yet"
            else:
                mode = "unused (no prompt with images)"
        return {"mode": mode, "max_mb": self.max_mb}
