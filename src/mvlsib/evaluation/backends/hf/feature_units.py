"""Image features computed once per image: how each family's image inputs split into units.

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
- ``patches`` (Gemma 4, LFM2-VL): ``pixel_values`` (N, patches, D) padded to a fixed count, one
  unit per row with its position ids / spatial shape and patch mask;
- ``grid`` (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5): flattened patches, one unit per image
  (``image_grid_thw`` rows; Qwen3-VL's deepstack features kept per unit too).

Families not listed (Mllama: cross-attention, its tower is not behind ``get_image_features``)
run the plain path. The cache itself and its self-check against the plain path are in
``feature_cache``.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from collections.abc import Callable
from typing import Any


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


class Adapter:
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


class _Rows(Adapter):
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


class _Anyres(Adapter):
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

        features = [None] * len(inputs)  # one per unit, filled per kind below
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


class _Tiles(Adapter):
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


class _Patches(Adapter):
    """``pixel_values`` (N, patches, D) padded to a fixed patch count, one unit per row (an image, a
    tile) with every tensor argument that has a row per image too (Gemma 4's ``image_position_ids``,
    LFM2-VL's ``spatial_shapes`` and ``pixel_attention_mask``); features come back one entry per row."""

    name = "patches"

    def units(self, args):
        pv = args.get("pixel_values")
        if pv is None or pv.dim() != 3:
            return None
        rows = sorted(k for k, v in args.items() if k != "pixel_values" and _per_row(v, pv.shape[0]))
        settings = _settings(args, "pixel_values", *rows)
        inputs = [{"row": pv[i], **{k: args[k][i] for k in rows}} for i in range(pv.shape[0])]
        return [_key(settings, *(u[k] for k in ("row", *rows)), rows) for u in inputs], inputs, rows

    def encode(self, fn, args, inputs):
        import torch

        stacked = {k: torch.stack([u[k] for u in inputs]) for k in inputs[0] if k != "row"}
        out = fn(**{**args, **stacked, "pixel_values": torch.stack([u["row"] for u in inputs])})
        pooled = out.pooler_output
        if len(pooled) != len(inputs):  # a family splitting otherwise: the self-check must not see it pass
            raise ValueError(f"get_image_features gave {len(pooled)} feature entries for {len(inputs)} rows")
        return [(p,) for p in pooled], type(out)

    def assemble(self, features, grouping, template):
        return template(pooler_output=tuple(f[0] for f in features))


def _per_row(value: Any, n: int) -> bool:
    return hasattr(value, "shape") and getattr(value, "dim", lambda: 0)() >= 1 and value.shape[0] == n


class _Grid(Adapter):
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


def adapter_for(model: Any) -> Adapter | None:
    """The unit splitter for this model's family, or None when it has none (the plain path)."""
    config = getattr(model, "config", None)
    kind = ADAPTERS.get(getattr(config, "model_type", ""))
    if kind is None or not callable(getattr(getattr(model, "base_model", None), "get_image_features", None)):
        return None
    if kind == "anyres":
        module = importlib.import_module(type(model.base_model).__module__)
        return _Anyres(config, module) if hasattr(module, "image_size_to_num_patches") else None
    return {"rows": _Rows, "tiles": _Tiles, "grid": _Grid, "patches": _Patches}[kind]()


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
    "qwen3_5": "grid",  # Qwen3.5: Qwen3-VL's tower and split, no deepstack
    "glm4v": "grid",  # GLM-4.1V: flattened patches + image_grid_thw, one tuple entry per image
    "gemma4": "patches",
    "lfm2_vl": "patches",
}
