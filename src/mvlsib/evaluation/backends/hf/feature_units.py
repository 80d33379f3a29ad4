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

- ``rows`` (LLaVA-1.5, Gemma 3, Gemma 3n, InternVL, Aya Vision, Ovis2): ``pixel_values`` (N, C, H, W),
  one unit per row (an image, or an InternVL / Ovis2 tile); Ovis2's ``visual_indicator_features``
  (its indicator tokens' embeddings: the embedding table at fixed ids, no pixels involved) are kept
  from the first encoding and handed back with every output;
- ``flat`` (PerceptionLM): ``pixel_values`` (N, tiles, C, H, W), the tower run on every tile
  (``flatten(0, 1)``), pooled per tile; one unit per tile (a thumbnail, a tile, a video frame);
- ``anyres`` (LLaVA-NeXT, LLaVA-OneVision): one unit per image (its anyres patches, the
  batch's zero padding left out, its ``image_sizes`` row, OneVision's tiling on/off);
- ``tiles`` (Idefics3, SmolVLM): ``pixel_values`` (B, N, C, H, W), one unit per non-padding
  tile with its ``pixel_attention_mask``; features are regrouped per prompt;
- ``patches`` (Gemma 4, LFM2-VL): ``pixel_values`` (N, patches, D) padded to a fixed count, one
  unit per row with its position ids / spatial shape and patch mask;
- ``sized`` (Mistral 3): ``pixel_values`` (N, C, H, W) padded to the batch's largest image, with
  ``image_sizes``; one unit per image, its pixels cut to its own size (Pixtral reads only those,
  attends within each image alone and merges patches per image);
- ``grid`` (Qwen2-VL, Qwen2.5-VL, Qwen3-VL, Qwen3.5): flattened patches, one unit per image
  (``image_grid_thw`` rows; Qwen3-VL's deepstack features kept per unit too);
- ``crops`` (Molmo2): ``pixel_values`` (crops, patches, D) of all images of the call and
  ``image_token_pooling`` (tokens, pool) indexing the patches of the whole call; one unit per image:
  its ``image_grids`` row gives its tokens (rows of the pooling), the lowest patch its tokens pool
  gives where its crops start, and its pooling indices are made its own (minus that start). A call
  whose pooling does not cut this way (a padding row, an image reaching into another's crops) runs
  the plain path.

Families not listed (Mllama: cross-attention, its tower is not behind ``get_image_features``)
run the plain path. The cache itself and its self-check against the plain path are in
``feature_cache``.
"""

from __future__ import annotations

import abc
import hashlib
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Units:
    """One ``get_image_features`` call cut into units: a key and the inputs per unit, and what
    ``assemble`` needs to put the per-unit features back in the call's layout (tiles per prompt,
    the per-row argument names; None when the units are the call's order)."""

    keys: tuple[bytes, ...]
    inputs: tuple[dict[str, Any], ...]
    grouping: Any = None


@dataclass(frozen=True)
class Encoded:
    """The original method run on some units: features per unit (a tuple of tensors each), and a
    template taken from that output, enough to rebuild the output class for any set of units."""

    features: tuple[tuple[Any, ...], ...]
    template: Any


class Adapter(abc.ABC):
    """How one family's ``get_image_features`` inputs split into units and its output regroups."""

    name = "adapter"

    @classmethod
    def for_model(cls, model: Any, family: Family) -> Adapter | None:  # noqa: ARG003 (the interface)
        """This adapter for a loaded model of ``family`` (None: this model cannot be cut)."""
        return cls()

    @abc.abstractmethod
    def units(self, args: dict[str, Any]) -> Units | None:
        """The call's units, or None when the call is not one this adapter knows (the plain path)."""

    @abc.abstractmethod
    def encode(self, fn: Callable[..., Any], args: dict[str, Any], inputs: list[dict[str, Any]]) -> Encoded:
        """Run the original method on the given units."""

    @abc.abstractmethod
    def assemble(self, features: list[tuple[Any, ...]], grouping: Any, template: Any) -> Any:
        """The output the model's forward expects, from the features of every unit of a call."""


def _output(cls: Any, **fields: Any) -> Any:
    """The family's own output class with the given fields, any other required field None (timm's
    ``TimmWrapperModelOutput`` requires ``last_hidden_state``; the model's forward reads ``pooler_output``)."""
    import dataclasses

    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            if (
                f.init
                and f.name not in fields
                and f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING
            ):
                fields[f.name] = None
    return cls(**fields)


def _rest(args: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in args.items() if k not in names}


def _settings(args: dict[str, Any], *names: str) -> str:
    """The call's non-tensor settings (feature layer, select strategy, ...): part of every key."""
    return repr(sorted((k, v) for k, v in _rest(args, *names).items() if not hasattr(v, "shape")))


class _Rows(Adapter):
    """``constant``: output fields that depend on the weights alone (Ovis2's ``visual_indicator_features``),
    kept from an encoding and handed back with every output (``Family.constant``)."""

    name = "rows"

    def __init__(self, constant: tuple[str, ...] = ()) -> None:
        self.constant = constant

    @classmethod
    def for_model(cls, _model, family):
        return cls(family.constant)

    def units(self, args):
        pv = args.get("pixel_values")
        if pv is None or pv.dim() != 4 or args.get("image_sizes") is not None:
            return None
        settings = _settings(args, "pixel_values")
        return Units(tuple(_key(settings, row) for row in pv), tuple({"row": row} for row in pv))

    def encode(self, fn, args, inputs):
        import torch

        out = fn(**{**args, "pixel_values": torch.stack([u["row"] for u in inputs])})
        pooled = out.pooler_output
        if len(pooled) != len(inputs):  # a family splitting otherwise: the self-check must not see it pass
            raise ValueError(f"get_image_features gave {len(pooled)} feature entries for {len(inputs)} rows")
        constant = {}
        for name in self.constant:
            value = getattr(out, name, None)
            if value is None:
                raise ValueError(f"get_image_features gave no {name}")
            constant[name] = value.detach()
        template = ("list" if isinstance(pooled, (list, tuple)) else "tensor", type(out), constant)
        return Encoded(tuple((p,) for p in pooled), template)

    def assemble(self, features, _grouping, template):
        import torch

        kind, cls, constant = template
        pooled = [f[0] for f in features]
        return _output(cls, pooler_output=list(pooled) if kind == "list" else torch.stack(pooled), **constant)


class _Flat(Adapter):
    """``pixel_values`` (N, tiles, C, H, W) that the family flattens to (N * tiles, C, H, W) and encodes
    tile by tile (PerceptionLM: a ViT per tile, a per-token projector, 2x2 pooling within the tile);
    one unit per tile, features one row per tile, as a tensor (N * tiles, tokens, D)."""

    name = "flat"

    def units(self, args):
        pv = args.get("pixel_values")
        if pv is None or pv.dim() != 5:
            return None
        settings = _settings(args, "pixel_values")
        tiles = pv.flatten(0, 1)
        return Units(tuple(_key(settings, t) for t in tiles), tuple({"tile": t} for t in tiles))

    def encode(self, fn, args, inputs):
        import torch

        out = fn(**{**args, "pixel_values": torch.stack([u["tile"] for u in inputs])[:, None]})
        pooled = out.pooler_output
        if not hasattr(pooled, "shape") or pooled.shape[0] != len(inputs):
            raise ValueError(f"get_image_features gave {len(pooled)} feature rows for {len(inputs)} tiles")
        return Encoded(tuple((p,) for p in pooled), type(out))

    def assemble(self, features, _grouping, template):
        import torch

        return _output(template, pooler_output=torch.stack([f[0] for f in features]))


class _Crops(Adapter):
    """Molmo2: ``pixel_values`` (crops, patches, D) (or (images, crops, patches, D), flattened the same
    way by the model), ``image_token_pooling`` (tokens, pool) indexing the patches of the whole call
    (-1: a padding slot), ``image_grids`` (images, 4): image i has ``g0 * g1 + g2 * g3`` tokens. The tower
    encodes each crop alone and each token pools (attention over) its own patches only, so an image's
    features depend on its crops alone. Its crops start at the lowest patch its tokens pool (a crop's
    first patch); the call is cut only when these starts are crop-aligned, rising, and no image pools a
    patch beyond its own crops; otherwise (or with a padding-only token row) it runs the plain path."""

    name = "crops"

    def units(self, args):
        pv, pooling, grids = args.get("pixel_values"), args.get("image_token_pooling"), args.get("image_grids")
        if pv is None or pooling is None or grids is None or pv.dim() not in (3, 4) or pooling.dim() != 2:
            return None
        if pv.dim() == 4:
            pv = pv.reshape(-1, pv.shape[-2], pv.shape[-1])
        per_crop = pv.shape[1]
        sizes = [int(g[0] * g[1] + g[2] * g[3]) for g in grids]
        if sum(sizes) != pooling.shape[0] or not bool((pooling >= 0).any(-1).all()):
            return None
        parts = list(pooling.split(sizes))
        starts = [int(p[p >= 0].min()) for p in parts]
        ends = starts[1:] + [pv.shape[0] * per_crop]
        if starts and starts[0] != 0:
            return None
        for part, start, end in zip(parts, starts, ends):
            if start % per_crop or end <= start or int(part.max()) >= end:
                return None
        settings = _settings(args, "pixel_values", "image_token_pooling", "image_grids")
        keys, inputs = [], []
        for part, start, end, grid in zip(parts, starts, ends, grids):
            crops = pv[start // per_crop : end // per_crop]
            own = part.where(part < 0, part - start)
            keys.append(_key(settings, crops, own, grid))
            inputs.append({"crops": crops, "pooling": own, "grid": grid})
        return Units(tuple(keys), tuple(inputs))

    def encode(self, fn, args, inputs):
        import torch

        poolings, offset = [], 0
        for u in inputs:
            poolings.append(u["pooling"].where(u["pooling"] < 0, u["pooling"] + offset))
            offset += u["crops"].shape[0] * u["crops"].shape[1]
        out = fn(
            **{
                **args,
                "pixel_values": torch.cat([u["crops"] for u in inputs]),
                "image_token_pooling": torch.cat(poolings),
                "image_grids": torch.stack([u["grid"] for u in inputs]),
            }
        )
        pooled = out.pooler_output
        if len(pooled) != len(inputs):
            raise ValueError(f"get_image_features gave {len(pooled)} feature entries for {len(inputs)} images")
        return Encoded(tuple((p,) for p in pooled), type(out))

    def assemble(self, features, _grouping, template):
        return _output(template, pooler_output=tuple(f[0] for f in features))


class _Anyres(Adapter):
    name = "anyres"

    def __init__(self, config: Any, model_module: Any) -> None:
        self.config = config
        self._count = model_module.image_size_to_num_patches

    @classmethod
    def for_model(cls, model, _family):
        # The model's own patch count, from the module that defines it (None: this transformers has none).
        module = importlib.import_module(type(model.base_model).__module__)
        return cls(model.config, module) if hasattr(module, "image_size_to_num_patches") else None

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
        return Units(tuple(keys), tuple(inputs))

    def encode(self, fn, args, inputs):
        import torch

        features: list[tuple | None] = [None] * len(inputs)  # one per unit, filled per kind below
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
        if template is None or any(f is None for f in features):
            raise ValueError("get_image_features gave no features for some anyres images")
        return Encoded(tuple(f for f in features if f is not None), template)

    def assemble(self, features, _grouping, template):
        return _output(template, pooler_output=[f[0] for f in features])


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
        return Units(tuple(keys), tuple(inputs), grouping)

    def encode(self, fn, args, inputs):
        import torch

        call = {**args, "pixel_values": torch.stack([u["tile"] for u in inputs])[None]}
        if inputs[0]["mask"] is not None:
            call["pixel_attention_mask"] = torch.stack([u["mask"] for u in inputs])[None]
        out = fn(**call)
        flat = out.pooler_output[0]
        per = flat.reshape(len(inputs), -1, flat.shape[-1])
        return Encoded(tuple((f,) for f in per), (type(out), flat.shape[-1], flat.dtype, flat.device))

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
        return _output(cls, pooler_output=out)


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
        return Units(tuple(_key(settings, *(u[k] for k in ("row", *rows)), rows) for u in inputs), tuple(inputs), rows)

    def encode(self, fn, args, inputs):
        import torch

        stacked = {k: torch.stack([u[k] for u in inputs]) for k in inputs[0] if k != "row"}
        out = fn(**{**args, **stacked, "pixel_values": torch.stack([u["row"] for u in inputs])})
        pooled = out.pooler_output
        if len(pooled) != len(inputs):  # a family splitting otherwise: the self-check must not see it pass
            raise ValueError(f"get_image_features gave {len(pooled)} feature entries for {len(inputs)} rows")
        return Encoded(tuple((p,) for p in pooled), type(out))

    def assemble(self, features, _grouping, template):
        return _output(template, pooler_output=tuple(f[0] for f in features))


class _Sized(Adapter):
    """``pixel_values`` (N, C, H, W) zero-padded to the batch's largest image, ``image_sizes`` (N, 2):
    one unit per image, its pixels cut to its size (the key sees only what the tower reads); units
    are padded again to the largest of a call, features come back one entry per image."""

    name = "sized"

    def units(self, args):
        pv, sizes = args.get("pixel_values"), args.get("image_sizes")
        if pv is None or sizes is None or pv.dim() != 4 or len(sizes) != pv.shape[0]:
            return None
        settings = _settings(args, "pixel_values", "image_sizes")
        keys, inputs = [], []
        for row, size in zip(pv, sizes):
            h, w = (int(x) for x in size)
            used = row[:, :h, :w]
            keys.append(_key(settings, used, [h, w]))
            inputs.append({"pixels": used, "size": size})
        return Units(tuple(keys), tuple(inputs))

    def encode(self, fn, args, inputs):
        import torch

        height = max(u["pixels"].shape[1] for u in inputs)
        width = max(u["pixels"].shape[2] for u in inputs)
        pv = torch.stack(
            [
                torch.nn.functional.pad(
                    u["pixels"], (0, width - u["pixels"].shape[2], 0, height - u["pixels"].shape[1])
                )
                for u in inputs
            ]
        )
        sizes = torch.stack([torch.as_tensor(u["size"]) for u in inputs])
        out = fn(**{**args, "pixel_values": pv, "image_sizes": sizes})
        pooled = out.pooler_output
        if len(pooled) != len(inputs):  # a family splitting otherwise: the self-check must not see it pass
            raise ValueError(f"get_image_features gave {len(pooled)} feature entries for {len(inputs)} images")
        return Encoded(tuple((p,) for p in pooled), type(out))

    def assemble(self, features, _grouping, template):
        return _output(template, pooler_output=tuple(f[0] for f in features))


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
        return Units(tuple(keys), tuple(inputs))

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
        return Encoded(tuple(feats), (type(out), deep is not None))

    def assemble(self, features, _grouping, template):
        cls, deep = template
        extra = {}
        if deep:
            layers = len(features[0]) - 1
            extra["deepstack_features"] = [tuple(f[1 + layer] for f in features) for layer in range(layers)]
        return _output(cls, pooler_output=tuple(f[0] for f in features), **extra)


def refusal(model: Any) -> str | None:
    """Why this model's image features must not be cached although its family has units (None: they may)."""
    config = getattr(model, "config", None)
    if getattr(config, "model_type", "") == "ovis2":
        tokenize = getattr(getattr(config, "vision_config", None), "tokenize_function", "softmax")
        if tokenize == "gumbel_argmax":
            return (
                "Ovis2 with vision_config.tokenize_function 'gumbel_argmax' draws its visual tokens at random on "
                "every call (gumbel_softmax), so no two encodings of an image agree"
            )
    return None


def adapter_for(model: Any) -> Adapter | None:
    """The unit splitter for this model's family, or None when it has none (the plain path)."""
    family = ADAPTERS.get(getattr(getattr(model, "config", None), "model_type", ""))
    if family is None or not callable(getattr(getattr(model, "base_model", None), "get_image_features", None)):
        return None
    if refusal(model) is not None:
        return None
    return family.adapter.for_model(model, family)


@dataclass(frozen=True)
class Family:
    """A family's entry: its adapter, and (``rows``) the output fields that come from the weights
    alone, kept from an encoding and handed back with every output."""

    adapter: type[Adapter]
    constant: tuple[str, ...] = ()


# model_type -> its units. Only families whose get_image_features was read in transformers 5.x and
# whose features per unit depend on that unit alone.
ADAPTERS: dict[str, Family] = {
    "llava": Family(_Rows),
    "gemma3": Family(_Rows),
    "internvl": Family(_Rows),
    "aya_vision": Family(_Rows),
    "llava_next": Family(_Anyres),
    "llava_onevision": Family(_Anyres),
    "idefics3": Family(_Tiles),
    "smolvlm": Family(_Tiles),
    "qwen2_vl": Family(_Grid),
    "qwen2_5_vl": Family(_Grid),
    "qwen3_vl": Family(_Grid),
    "qwen3_5": Family(_Grid),  # Qwen3.5: Qwen3-VL's tower and split, no deepstack
    "glm4v": Family(_Grid),  # GLM-4.1V: flattened patches + image_grid_thw, one tuple entry per image
    "gemma4": Family(_Patches),
    "lfm2_vl": Family(_Patches),
    "mistral3": Family(_Sized),  # Pixtral tower: block-diagonal attention per image, patches merged per image
    "gemma3n": Family(_Rows),  # MobileNetV5 (timm) per image, (N, 256, D) tensor
    # a tile per row; softmax visual tokens per patch (see refusal for gumbel_argmax)
    "ovis2": Family(_Rows, constant=("visual_indicator_features",)),
    "perception_lm": Family(_Flat),  # Perception Encoder per tile, projector and 2x2 pooling per tile
    "molmo2": Family(_Crops),  # crops per image, image_token_pooling made per image
}
