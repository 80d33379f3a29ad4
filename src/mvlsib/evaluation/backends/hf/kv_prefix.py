"""KV-prefix reuse (``--kv-prefix``): the prefix every prompt of a batch starts with, computed once.

The prompts of a batch share the template and instruction, and an i2s batch of one reference set
in several languages shares its images too. ``shared_prefix`` finds the shared tokens,
``split_at_prefix`` moves each row's padding between prefix and suffix (so all rows share the
prefix's positions and cache), ``PrefixCache`` keeps each prefix's KV cache and copies it for
every batch that starts with it. ``PrefixReuse`` is the backend's side: which batches may use
it, and a self-check of each kind of prefix (text only; through the images) on its first
batches against the plain path.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

from ..._compat import terminal
from ..base import BackendStats, one_line
from .generation import COMPARED, outputs_differ

# Model types whose forward continues from a copied prefix cache with padding between prefix and
# suffix: 1-D positions derived from the attention mask, no state kept between calls. Qwen2/2.5/3-VL
# are left out: their mrope positions, when a cache is given, come from rope_deltas the model keeps
# from its previous call (a batch after the self-check failed with a shape error); Mllama's image
# batches are its processor's own, so only its text prompts get here. Gemma 4 (sliding layers: see
# sliding_window; bidirectional attention inside an image, which a prefix through the images holds
# whole) and Mistral 3 (Pixtral tower, Mistral text model) were compared with the plain path on tiny
# models: first-step logits within 1e-6, every answer the same. Gemma 3n (per-layer inputs, KV-shared layers, sliding
# layers) and PerceptionLM (Llama text model) likewise: padded rows' first-step logits within 1e-5, answers the same.
KV_PREFIX_TYPES = frozenset(
    {
        "llava",
        "llava_next",
        "llava_onevision",
        "gemma3",
        "gemma4",
        "internvl",
        "idefics3",
        "smolvlm",
        "mllama",
        "aya_vision",
        "mistral3",
        "gemma3n",
        "perception_lm",
    }
)

# Text-model layer kinds that attend over a KV cache; any other kind in ``layer_types`` (Qwen3.5's
# "linear_attention", LFM2's "conv", a Mamba layer) carries a state from token to token.
ATTENTION_LAYERS = frozenset({"full_attention", "sliding_attention", "chunked_attention", "attention"})


def recurrent_layers(config: Any) -> list[str]:
    """The text model's layer kinds that carry a state from token to token instead of attending over
    a KV cache (Qwen3.5's gated-delta "linear_attention", LFM2's short "conv"); empty for attention only.

    Such a layer cannot continue from a shared prefix with the padding moved between prefix and
    suffix: the padding (zeroed, but still steps of the recurrence: a decay, a convolution window)
    runs between the prefix's state and a row's own tokens, so a padded row no longer continues its
    prefix as it does alone. On tiny Qwen3.5 and LFM2-VL the first-step logits of padded rows moved by
    up to 1.4e-4 and 3e-6 (1e-7 for rows without padding and for attention-only families): too small
    for the self-check's tolerance to be a safe guard, so these are refused before it."""
    text = getattr(config, "text_config", None) or config
    kinds = getattr(text, "layer_types", None) or []
    return sorted({str(kind) for kind in kinds if kind not in ATTENTION_LAYERS})


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

    ``image_layout`` (key -> how ``inputs.collate`` batched it), when the prefix holds every
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

    def __init__(self, stats: BackendStats) -> None:
        self.stats = stats
        self._entries: OrderedDict[tuple, Any] = OrderedDict()

    def clear(self) -> None:
        self._entries.clear()

    def for_batch(self, model: Any, prefix: dict[str, Any], rows: int, image_ids: tuple[str, ...] = ()) -> Any:
        """``image_ids``: the images the prefix shows (their placeholder tokens are alike for any image)."""
        import torch

        tokens = tuple(int(t) for t in prefix["input_ids"][0])
        key = (tokens, tuple(image_ids))
        cache: Any = self._entries.get(key)
        if cache is None:
            with torch.inference_mode():
                out = model(**prefix, use_cache=True)
            cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
            self._entries[key] = cache
            if len(self._entries) > PREFIX_CACHE_ENTRIES:
                self._entries.popitem(last=False)
            self.stats.prefix_tokens_computed += len(tokens)
        else:
            self._entries.move_to_end(key)
        self.stats.prefix_tokens_reused += len(tokens) * rows
        batch = copy.deepcopy(cache)
        for layer in batch.layers:
            layer.batch_repeat_interleave(rows)
        return batch


class PrefixReuse:
    """KV-prefix reuse for one loaded model (``cache`` None: off) and its self-checks.

    ``layouts``/``batched`` are the batcher's (how each kind of prompt is collated, and whether
    by our collation): only our collation's padding can be moved. ``budget``: new tokens per
    prompt (a reused prefix must fit the attention window with them)."""

    def __init__(
        self, model: Any, *, on: bool, pad_token_id: int, layouts: dict, batched: dict, budget: int, stats: BackendStats
    ) -> None:
        self.model, self.pad_token_id, self.stats = model, pad_token_id, stats
        self.layouts, self.batched, self.budget = layouts, batched, budget
        model_type = getattr(model.config, "model_type", "?")
        recurrent = recurrent_layers(model.config)
        allowed = model_type in KV_PREFIX_TYPES and not recurrent
        self.cache = PrefixCache(stats) if on and allowed else None
        # Two self-checked batches per kind of prefix: text only, and through the images.
        self.checks_left = {False: 2, True: 2}
        self.images_on = self.cache is not None
        self.images_mode = "checking" if self.images_on else "off"
        if not on:
            self.mode = "off (--kv-prefix not given)"
        elif allowed:
            self.mode = "checking"
        elif recurrent:
            self.mode = (
                f"off (model type {model_type!r} has layers with a state carried from token to token "
                f"({', '.join(recurrent)}): the padding moved between a shared prefix and each row's own "
                "tokens would run through that state)"
            )
        else:
            self.mode = f"off (model type {model_type!r} cannot continue from a shared prefix cache here)"
        self.window = sliding_window(model.config)
        self.image_token_id = getattr(model.config, "image_token_id", None)
        if self.image_token_id is None:
            self.image_token_id = getattr(model.config, "image_token_index", None)

    def length(self, inputs: dict[str, Any], has_images: bool, same_images: bool = False) -> int:
        """Tokens of the prefix the batch shares (0: run it plainly); past the images only when
        ``same_images`` (every row shows the same images) and no suffix has an image."""
        if self.cache is None or self.mode.startswith("off"):
            return 0
        if self.batched.get(has_images) != "collate" or has_images and self.image_token_id is None:
            return 0
        if self.window is not None and inputs["input_ids"].shape[1] + self.budget > self.window:
            return 0  # see sliding_window
        return shared_prefix(
            inputs, self.image_token_id if has_images else None, through_images=same_images and self.images_on
        )

    def has_images(self, inputs: dict[str, Any], length: int) -> bool:
        """Does the first ``length`` tokens' prefix hold an image?"""
        if self.image_token_id is None:
            return False
        row = inputs["input_ids"][0][inputs["attention_mask"][0].bool()]
        return bool((row[:length] == self.image_token_id).any())

    def generate(
        self,
        inputs: dict[str, Any],
        length: int,
        has_images: bool,
        settings: dict[str, Any],
        *,
        image_ids: tuple[str, ...] = (),
        with_images: bool | None = None,
    ) -> tuple[Any, int]:
        """generate() continuing from the shared prefix's cache; returns (output, input width).
        ``image_ids``: the images of the first row (all rows show the same when the prefix has images);
        ``with_images``: whether the prefix holds images (found out here when not given)."""
        assert self.cache is not None
        layout = self.layouts[has_images]
        keys = {k for k, how in layout.items() if how == "sequence"}
        if with_images is None:
            with_images = has_images and self.has_images(inputs, length)
        image_layout = {k: how for k, how in layout.items() if how != "sequence"} if with_images else None
        prefix, batch = split_at_prefix(inputs, length, keys, self.pad_token_id, image_layout)
        cache = self.cache.for_batch(
            self.model, prefix, batch["input_ids"].shape[0], tuple(image_ids) if with_images else ()
        )
        if with_images:
            self.stats.kv_prefix_image_batches = self.stats.kv_prefix_image_batches + 1
        return self.model.generate(**batch, cache=cache, **settings), batch["input_ids"].shape[1]

    def new_tokens(
        self, inputs: dict[str, Any], length: int, has_images: bool, settings: dict[str, Any], image_ids: tuple
    ) -> Any:
        """The batch's new tokens through a reused prefix of ``length`` tokens (self-checked while due)."""
        with_images = has_images and self.has_images(inputs, length)
        if self.checks_left[with_images] > 0:
            return self._checked(inputs, length, has_images, settings, image_ids=image_ids, with_images=with_images)
        out, width = self.generate(inputs, length, has_images, settings, image_ids=image_ids, with_images=with_images)
        self.stats.kv_prefix_batches = self.stats.kv_prefix_batches + 1
        return out[:, width:]

    def _checked(self, inputs, length, has_images, settings, *, image_ids, with_images: bool) -> Any:
        """One batch both ways; the same tokens and first-step logits keep KV-prefix reuse on. Each kind
        of prefix (text only; with images) is checked on its own first two batches, and a difference
        turns off only that kind: text prefixes may still be fine when image prefixes are not."""
        both = {**settings, **COMPARED}
        plain = self.model.generate(**inputs, **both)
        width = inputs["input_ids"].shape[1]
        try:
            reused, reused_width = self.generate(
                inputs, length, has_images, both, image_ids=image_ids, with_images=with_images
            )
        except Exception as exc:  # a family whose forward cannot continue from a cache this way
            problem: str | None = f"{type(exc).__name__}: {one_line(exc)[:120]}"
        else:
            problem = outputs_differ(plain, width, reused, reused_width, self.model.dtype)
        self.checks_left[with_images] -= 1
        if problem:
            self._switch_off(problem, with_images)
        elif self.checks_left[with_images] <= 0:
            if with_images:
                self.images_mode = "on"
            else:
                self.mode = "on"
        return plain.sequences[:, width:]

    def _switch_off(self, problem: str, with_images: bool) -> None:
        assert self.cache is not None
        what, scope = ("prefix with images", "reuse through images") if with_images else ("prefix", "reuse")
        self.cache.clear()
        mode = f"off (self-check: {problem} with the reused {what} cache)"
        if with_images:
            self.images_on = False
            self.images_mode = mode
        else:
            self.mode = mode
        terminal.note(
            "mvlsib-eval: {}: {} with the reused {} cache; KV-prefix {} is off for this run",
            type(self.model).__name__,
            problem,
            what,
            scope,
        )

    def clear(self) -> None:
        if self.cache is not None:
            self.cache.clear()

    def describe(self) -> dict[str, str]:
        return {
            "kv_prefix": self.mode
            if self.mode != "checking"
            else "unused (no batch shared a text prefix within the limits: several prompts, 8+ tokens, the attention window)",
            "kv_prefix_images": self.images_mode
            if self.images_mode != "checking"
            else "unused (no batch of prompts showing the same images, all of them in the shared prefix)",
        }
