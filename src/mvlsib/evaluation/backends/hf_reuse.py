"""Image features computed once per image (issue #15): a bounded cache in front of the vision tower.

An i2s reference image is shown in every language, an s2i option image in many prompts; the
vision tower's output for it is the same every time. transformers 5 routes every image of a
VLM through one method, ``model.base_model.get_image_features`` (``generate`` calls it once
before prefill; ``forward`` when no precomputed ``mm_encoder_outputs`` are given). The cache
wraps that method on the loaded model instance: it cuts the method's inputs into **units**
the tower encodes independently (an image, a tile), looks each unit up by the hash of its own
pixel values (and whatever else decides its features: its size, its anyres mode), runs the
original method once on the units it has not seen, and hands back the output in the layout
the model's forward expects. Everything else (placeholder expansion, scattering the features
into the image-token positions, Qwen's mrope positions) stays the model's own code.

Keys are the pixels themselves, not image ids: a processor may preprocess one image
differently by context (LLaVA-OneVision drops anyres tiling in multi-image prompts), and the
key sees that. Units per family (``ADAPTERS``, by the base model's ``model_type``):

- ``rows`` (LLaVA-1.5, Gemma 3, InternVL, Aya Vision): ``pixel_values`` (N, C, H, W), one
  unit per row (an image, or an InternVL tile);
- ``anyres`` (LLaVA-NeXT, LLaVA-OneVision): one unit per image (its anyres patches, the
  batch's zero padding left out, its ``image_sizes`` row, OneVision's tiling on/off);
- ``tiles`` (Idefics3, SmolVLM): ``pixel_values`` (B, N, C, H, W), one unit per non-padding
  tile with its ``pixel_attention_mask``; features are regrouped per prompt;
- ``grid`` (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): flattened patches, one unit per image
  (``image_grid_thw`` rows; Qwen3-VL's deepstack features kept per unit too).

Families not listed (Mllama: cross-attention, its tower is not behind ``get_image_features``)
run the plain path. The backend's self-check (``hf.py``) compares the first batches with the
plain path and switches the cache off on any difference.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

# A few hundred images' features of a 7B model (LLaVA-1.5: 576 x 4096 x 2 bytes = 4.7 MB an
# image); MVL-SIB has 70 images, so the default holds all of them for most families.
DEFAULT_FEATURE_CACHE_MB = 1024


def _tensor_digest(h: Any, t: Any) -> None:
    import torch

    t = t.detach()
    h.update(f"{tuple(t.shape)}|{t.dtype}|".encode())
    flat = t.contiguous().reshape(-1)
    if flat.numel():
        h.update(flat.view(torch.uint8).cpu().numpy().tobytes())


def _key(*parts: Any) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for p in parts:
        if hasattr(p, "shape") and hasattr(p, "dtype"):
            _tensor_digest(h, p)
        else:
            h.update(repr(p).encode())
        h.update(b"\x00")
    return h.digest()


class _Adapter:
    """How one family's ``get_image_features`` inputs split into units and its output regroups."""

    name = "adapter"

    def units(self, args: dict[str, Any]) -> tuple[list[bytes], list[dict[str, Any]], Any] | None:
        """(keys, per-unit inputs, grouping) or None when the call is not one this adapter knows."""
        raise NotImplementedError

    def encode(self, fn: Callable, args: dict[str, Any], inputs: list[dict[str, Any]]) -> tuple[list[tuple], Any]:
        """Run the original method on the given units; (features per unit, a template output)."""
        raise NotImplementedError

    def assemble(self, features: list[tuple], grouping: Any, template: Any) -> Any:
        raise NotImplementedError


def _rest(args: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in args.items() if k not in names}


def _settings(args: dict[str, Any], *names: str) -> str:
    """The call's non-tensor settings (feature layer, select strategy, ...): part of every key."""
    return repr(sorted((k, v) for k, v in _rest(args, *names).items() if not hasattr(v, "shape")))


class _Rows(_Adapter):
    name = "rows"

    def units(self, args):
        pv = args.get("pixel_values")
        if pv is None or pv.dim() != 4 or args.get("image_sizes") is not None:
            return None
        settings = _settings(args, "pixel_values")
        return [_key(settings, row) for row in pv], [{"row": row} for row in pv], None

    def encode(self, fn, args, inputs):
        import torch

        out = fn(**{**args, "pixel_values": torch.stack([u["row"] for u in inputs])})
        pooled = out.pooler_output
        template = ("list" if isinstance(pooled, (list, tuple)) else "tensor", type(out))
        return [(p,) for p in pooled], template

    def assemble(self, features, grouping, template):
        import torch

        kind, cls = template
        pooled = [f[0] for f in features]
        return cls(pooler_output=list(pooled) if kind == "list" else torch.stack(pooled))


class _Anyres(_Adapter):
    name = "anyres"

    def __init__(self, config: Any, model_module: Any) -> None:
        self.config = config
        self._count = model_module.image_size_to_num_patches

    def _num_patches(self, size: Any) -> int:
        # The model's own count (it keeps pixel_values[i][:n] of each image).
        return self._count(
            image_size=size,
            grid_pinpoints=self.config.image_grid_pinpoints,
            patch_size=self.config.vision_config.image_size,
        )

    def units(self, args):
        pv, sizes = args.get("pixel_values"), args.get("image_sizes")
        if pv is None or sizes is None or pv.dim() != 5 or len(sizes) != pv.shape[0]:
            return None
        counts = args.get("batch_num_images")
        patched = [True] * pv.shape[0] if counts is None else [int(n) == 1 for n in counts for _ in range(int(n))]
        if len(patched) != pv.shape[0]:
            return None
        settings = _settings(args, "pixel_values", "image_sizes", "batch_num_images")
        keys, inputs = [], []
        for row, size, patch in zip(pv, sizes, patched):
            used = row[: self._num_patches(size)] if patch else row[:1]
            keys.append(_key(settings, used, [int(x) for x in size], patch))
            inputs.append({"patches": used, "size": size, "patched": patch})
        return keys, inputs, None

    def encode(self, fn, args, inputs):
        import torch

        features: list[tuple | None] = [None] * len(inputs)
        template = None
        accepts_counts = "batch_num_images" in inspect.signature(fn).parameters
        for patched in (True, False):
            idx = [i for i, u in enumerate(inputs) if u["patched"] == patched]
            if not idx:
                continue
            # Unpatched images are only told apart by sharing a prompt with another image: a lone
            # one is sent twice (as a two-image prompt) and the second copy dropped.
            rows = idx if patched or len(idx) > 1 else idx * 2
            most = max(inputs[i]["patches"].shape[0] for i in rows)
            pv = torch.stack(
                [
                    torch.nn.functional.pad(
                        inputs[i]["patches"], (0, 0, 0, 0, 0, 0, 0, most - inputs[i]["patches"].shape[0])
                    )
                    for i in rows
                ]
            )
            call = {**args, "pixel_values": pv, "image_sizes": torch.stack([inputs[i]["size"] for i in rows])}
            if accepts_counts:
                call["batch_num_images"] = (
                    torch.ones(len(rows), dtype=torch.long) if patched else torch.tensor([len(rows)], dtype=torch.long)
                )
            out = fn(**call)
            template = type(out)
            for i, f in zip(idx, out.pooler_output):
                features[i] = (f,)
        return features, template

    def assemble(self, features, grouping, template):
        return template(pooler_output=[f[0] for f in features])


class _Tiles(_Adapter):
    name = "tiles"

    def units(self, args):
        pv, mask = args.get("pixel_values"), args.get("pixel_attention_mask")
        if pv is None or pv.dim() != 5:
            return None
        settings = _settings(args, "pixel_values", "pixel_attention_mask")
        per_tile = pv.shape[2:].numel()
        real = (pv == 0.0).sum(dim=(-1, -2, -3)) != per_tile  # the model's own padding rule
        keys, inputs, grouping = [], [], []
        for b in range(pv.shape[0]):
            n = 0
            for j in range(pv.shape[1]):
                if not bool(real[b, j]):
                    continue
                tile_mask = None if mask is None else mask[b, j]
                keys.append(_key(settings, pv[b, j], tile_mask))
                inputs.append({"tile": pv[b, j], "mask": tile_mask})
                n += 1
            grouping.append(n)
        return keys, inputs, grouping

    def encode(self, fn, args, inputs):
        import torch

        call = {**args, "pixel_values": torch.stack([u["tile"] for u in inputs])[None]}
        if inputs[0]["mask"] is not None:
            call["pixel_attention_mask"] = torch.stack([u["mask"] for u in inputs])[None]
        out = fn(**call)
        flat = out.pooler_output[0]
        per = flat.reshape(len(inputs), -1, flat.shape[-1])
        return [(f,) for f in per], (type(out), flat.shape[-1], flat.dtype, flat.device)

    def assemble(self, features, grouping, template):
        import torch

        cls, width, dtype, device = template
        out, start = [], 0
        for n in grouping:
            part = [f[0] for f in features[start : start + n]]
            start += n
            out.append(
                torch.cat(part).reshape(-1, width) if part else torch.zeros(0, width, dtype=dtype, device=device)
            )
        return cls(pooler_output=out)


class _Grid(_Adapter):
    name = "grid"

    def units(self, args):
        pv, grid = args.get("pixel_values"), args.get("image_grid_thw")
        if pv is None or grid is None or pv.dim() != 2 or int(grid.prod(-1).sum()) != pv.shape[0]:
            return None
        settings = _settings(args, "pixel_values", "image_grid_thw")
        keys, inputs, start = [], [], 0
        for g in grid:
            n = int(g.prod())
            rows = pv[start : start + n]
            start += n
            keys.append(_key(settings, rows, [int(x) for x in g]))
            inputs.append({"rows": rows, "grid": g})
        return keys, inputs, None

    def encode(self, fn, args, inputs):
        import torch

        out = fn(
            **{
                **args,
                "pixel_values": torch.cat([u["rows"] for u in inputs]),
                "image_grid_thw": torch.stack([u["grid"] for u in inputs]),
            }
        )
        deep = getattr(out, "deepstack_features", None)
        feats = []
        for i, p in enumerate(out.pooler_output):
            feats.append((p,) + (tuple(layer[i] for layer in deep) if deep is not None else ()))
        return feats, (type(out), deep is not None)

    def assemble(self, features, grouping, template):
        cls, deep = template
        extra = {}
        if deep:
            layers = len(features[0]) - 1
            extra["deepstack_features"] = [tuple(f[1 + layer] for f in features) for layer in range(layers)]
        return cls(pooler_output=tuple(f[0] for f in features), **extra)


def adapter_for(model: Any) -> _Adapter | None:
    """The unit splitter for this model's family, or None when it has none (the plain path)."""
    config = getattr(model, "config", None)
    kind = ADAPTERS.get(getattr(config, "model_type", ""))
    if kind is None or not callable(getattr(getattr(model, "base_model", None), "get_image_features", None)):
        return None
    if kind == "anyres":
        import importlib

        module = importlib.import_module(type(model.base_model).__module__)
        return _Anyres(config, module) if hasattr(module, "image_size_to_num_patches") else None
    return {"rows": _Rows, "tiles": _Tiles, "grid": _Grid}[kind]()


# model_type -> unit kind. Only families whose get_image_features was read in transformers 5.x and
# whose features per unit depend on that unit alone.
ADAPTERS = {
    "llava": "rows",
    "gemma3": "rows",
    "internvl": "rows",
    "aya_vision": "rows",
    "llava_next": "anyres",
    "llava_onevision": "anyres",
    "idefics3": "tiles",
    "smolvlm": "tiles",
    "qwen2_vl": "grid",
    "qwen2_5_vl": "grid",
    "qwen3_vl": "grid",
}


class FeatureCache:
    """LRU cache of per-unit image features (bounded in bytes), wrapped around
    ``model.base_model.get_image_features``. ``enabled`` False passes every call through."""

    def __init__(self, model: Any, adapter: _Adapter, max_bytes: int, stats: dict[str, int]) -> None:
        self.adapter, self.max_bytes, self.stats = adapter, max_bytes, stats
        self.enabled = True
        self.last_call_hits = 0  # distinct units of the last call found in the cache (from earlier calls)
        self._entries: OrderedDict[bytes, tuple] = OrderedDict()
        self._bytes = 0
        self._template: Any = None  # what the adapter needs to rebuild an output, from the first encoding
        self._owner = model.base_model
        self._original = self._owner.get_image_features
        self._signature = inspect.signature(self._original)
        for name in ("image_features_computed", "image_features_reused", "image_features_plain"):
            stats.setdefault(name, 0)

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
        keys, inputs, grouping = split
        if not keys:
            return self._original(*args, **kwargs)
        if not self.enabled:
            self.stats["image_features_plain"] += len(keys)
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
            computed, self._template = self.adapter.encode(self._original, named, [inputs[i] for i in todo])
            for i, feats in zip(todo, computed):
                feats = tuple(f.detach() for f in feats)
                found[keys[i]] = feats
                self._store(keys[i], feats)
            self.stats["image_features_computed"] += len(todo)
        self.stats["image_features_reused"] += len(keys) - len(missing)
        return self.adapter.assemble([found[k] for k in keys], grouping, self._template)

    def _store(self, key: bytes, feats: tuple) -> None:
        size = sum(f.numel() * f.element_size() for f in feats)
        if size > self.max_bytes:
            return
        self._entries[key] = feats
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, old = self._entries.popitem(last=False)
            self._bytes -= sum(f.numel() * f.element_size() for f in old)


# ---------------------------------------------------------------------------- KV-prefix reuse

# Model types whose forward continues from a copied prefix cache with padding between prefix and
# suffix: 1-D positions derived from the attention mask, no state kept between calls. Qwen2/2.5/3-VL
# are left out: their mrope positions, when a cache is given, come from rope_deltas the model keeps
# from its previous call (a batch after the self-check failed with a shape error); Mllama's image
# batches are its processor's own, so only its text prompts get here.
KV_PREFIX_TYPES = frozenset(
    {"llava", "llava_next", "llava_onevision", "gemma3", "internvl", "idefics3", "smolvlm", "mllama", "aya_vision"}
)


def sliding_window(config: Any) -> int | None:
    """The text model's attention window when some layer uses one (Gemma 3: sliding layers), else None.

    A window counts cache positions, not position ids: moving the padding between prefix and
    suffix lengthens the distance from a suffix token to the prefix, so a batch may use a reused
    prefix only while it fits in the window whole (found by a differing answer on tiny Gemma 3,
    window 64, after the self-check had passed)."""
    text = getattr(config, "text_config", None) or config
    window = getattr(text, "sliding_window", None)
    if not isinstance(window, int) or window <= 0 or getattr(text, "use_sliding_window", None) is False:
        return None
    kinds = getattr(text, "layer_types", None)
    if kinds and all(kind == "full_attention" for kind in kinds):
        return None
    return window


# Below this many shared tokens a batch runs the plain way: the copy costs more than it saves.
MIN_PREFIX_TOKENS = 8
# Prefix caches kept (one per distinct shared prefix: in MVL-SIB about one per task and k for text
# prefixes, one per i2s reference set for prefixes with images; prefix order sends each set's batches together).
PREFIX_CACHE_ENTRIES = 16


def shared_prefix(inputs: dict[str, Any], image_token_id: int | None, through_images: bool = False) -> int:
    """Tokens every row of a left-padded batch starts with (0: none worth sharing), up to its first
    image token, or past the images when ``through_images`` (every row shows the same images) and
    every image token of every row lies in the shared part: each suffix is then text only (an
    i2s batch of one instance's reference images in several languages, as the prefix order sends
    them), so generate continues from the prefix cache without any image input."""
    ids, mask = inputs["input_ids"], inputs.get("attention_mask")
    if mask is None or ids.shape[0] < 2:
        return 0
    rows = []
    for row, m in zip(ids, mask):
        m = m.bool()
        n = int(m.sum())
        if n == 0 or not bool(m[ids.shape[1] - n :].all()):  # left padding only
            return 0
        rows.append(row[ids.shape[1] - n :])
    shortest = min(len(r) for r in rows)
    first = rows[0][:shortest]
    where = _differs(rows, first, shortest).nonzero()
    length = int(where[0]) if len(where) else shortest
    length = min(length, shortest - 1)  # every row keeps at least one token of its own
    if image_token_id is not None:
        images = (first[:length] == image_token_id).nonzero()
        if len(images) and (not through_images or any(bool((r[length:] == image_token_id).any()) for r in rows)):
            length = int(images[0])
    return length if length >= MIN_PREFIX_TOKENS else 0


def _differs(rows: list, first: Any, shortest: int) -> Any:
    """Positions (of the first ``shortest``) where some row differs from the first row."""
    import torch

    return (torch.stack([r[:shortest] for r in rows]) != first).any(dim=0)


def split_at_prefix(
    inputs: dict[str, Any],
    length: int,
    sequence_keys: set[str],
    pad_token_id: int,
    image_layout: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the one-row prefix inputs, the batch with its padding moved between prefix and suffix).

    Each row becomes prefix + padding + its own suffix, so all rows share the prefix's positions
    and cache; the attention mask marks the padding, and generate derives position ids from the
    mask, so every suffix token keeps the position it has in the row alone.

    ``image_layout`` (key -> how ``hf_inputs.collate`` batched it), when the prefix holds every
    image of every row (the same in each): the first row's image inputs go with the prefix and
    the batch keeps none, its suffixes being text."""
    import torch

    ids, mask = inputs["input_ids"], inputs["attention_mask"]
    width = ids.shape[1]
    starts = [width - int(m.sum()) for m in mask]
    suffix = max(width - s - length for s in starts)
    prefix = {k: inputs[k][:1, starts[0] : starts[0] + length] for k in sequence_keys}
    prefix["attention_mask"] = torch.ones_like(prefix["attention_mask"])
    batch = dict(inputs)
    for key in sequence_keys:
        value = inputs[key]
        fill = pad_token_id if key == "input_ids" else 0
        rows = []
        for i, s in enumerate(starts):
            own = value[i, s + length :]
            gap = value.new_full((suffix - own.shape[0],) + tuple(value.shape[2:]), fill)
            rows.append(torch.cat([value[i, s : s + length], gap, own]))
        batch[key] = torch.stack(rows)
    for i, s in enumerate(starts):
        own = width - s - length
        batch["attention_mask"][i, length : length + suffix - own] = 0
    for key, how in (image_layout or {}).items():
        value = batch.pop(key)
        # "image"/"list": the rows of all prompts one after another, as many per prompt (the same images)
        per = len(value) // len(starts) if how in ("image", "list") else 1
        prefix[key] = value[:per]
    return prefix, batch


class PrefixCache:
    """The KV cache of each shared text prefix, computed once and copied for every batch that starts with it."""

    def __init__(self, stats: dict[str, int]) -> None:
        self.stats = stats
        self._entries: OrderedDict[tuple, Any] = OrderedDict()
        for name in ("prefix_tokens_reused", "prefix_tokens_computed"):
            stats.setdefault(name, 0)

    def clear(self) -> None:
        self._entries.clear()

    def for_batch(self, model: Any, prefix: dict[str, Any], rows: int, image_ids: tuple[str, ...] = ()) -> Any:
        """``image_ids``: the images the prefix shows (their placeholder tokens are alike for any image)."""
        import copy

        import torch

        tokens = tuple(int(t) for t in prefix["input_ids"][0])
        key = (tokens, tuple(image_ids))
        cache = self._entries.get(key)
        if cache is None:
            with torch.inference_mode():
                out = model(**prefix, use_cache=True)
            cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
            self._entries[key] = cache
            if len(self._entries) > PREFIX_CACHE_ENTRIES:
                self._entries.popitem(last=False)
            self.stats["prefix_tokens_computed"] += len(tokens)
        else:
            self._entries.move_to_end(key)
        self.stats["prefix_tokens_reused"] += len(tokens) * rows
        batch = copy.deepcopy(cache)
        for layer in batch.layers:
            layer.batch_repeat_interleave(rows)
        return batch
