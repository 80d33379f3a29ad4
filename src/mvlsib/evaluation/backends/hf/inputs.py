"""Correct model inputs for every vision-language family: rendering, placement, batching.

Three things go wrong when one evaluator meets many families, and this module owns each:

1. **Where images land.** A chat template decides where an image part goes. Some keep it
   where the message puts it (Qwen, Gemma 3, Idefics3, InternVL, ...); some move every
   image to the start of the turn (the LLaVA-1.5 / NeXT / OneVision templates) or of the
   conversation, numbered (Molmo2), which separates an s2i option letter from its image. ``Renderer`` renders natively, checks
   that every image placeholder sits in the text span the prompt gave it, and otherwise
   writes the family's own image placeholder into the text where the image belongs
   ("inline" mode, exactly what the processor expects to find). If neither keeps the
   images in place it refuses with a message instead of scoring a broken prompt.
2. **One image list per prompt.** Batched processor calls need ``images=[[...], [...]]``
   (Gemma 3, Mllama, Idefics3 count images per prompt; LLaVA-OneVision switches anyres
   tiling off for prompts with several images). Inputs are built per prompt and collated
   (``collate``): sequence tensors left-padded, per-prompt tensors padded and stacked,
   per-image tensors concatenated, in prompt order. ``compare_batched`` is the self-check
   that a batch equals its prompts processed one by one.
3. **One BOS.** A template that writes BOS itself (Gemma 3, Mllama, Idefics3, Aya Vision)
   must not get another from the tokenizer: ``starts_with_bos``.

``MemoImageProcessor`` lets a run preprocess each tuple of images once (a tuple repeats in
every language) while the processor's own logic still runs on every prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..._compat import MvlsibError
from ..base import BackendStats

# Probe texts for finding the template's image placeholder: unlikely to be touched by any template.
_PROBE_A, _PROBE_B = "mvlsibprobeA", "mvlsibprobeB"
RENDER_MODES = ("native", "inline")


def hf_content(messages: Sequence[dict[str, Any]], inline_placeholder: str | None = None) -> list[dict[str, Any]]:
    """Messages as chat-template content; with ``inline_placeholder`` each user turn is one text
    part with the placeholder written where each image goes."""
    out = []
    for message in messages:
        if inline_placeholder is None:
            parts = [
                {"type": "image"} if p["type"] == "image" else {"type": "text", "text": p["text"]}
                for p in message["content"]
            ]
        else:
            text = "".join(inline_placeholder if p["type"] == "image" else p["text"] for p in message["content"])
            parts = [{"type": "text", "text": text}]
        out.append({"role": message["role"], "content": parts})
    return out


def find_image_placeholder(render, image_token: str | None = None) -> str:
    """The text a chat template writes for one image part (e.g. ``<image>``,
    ``<|vision_start|><|image_pad|><|vision_end|>``, ``<start_of_image>``), found by rendering a
    probe turn with one image and with two and taking the difference.

    Both probes have images, so what a template does only when a turn has images (Mllama
    drops its system block) is the same in both and stays out of the difference.

    A template that numbers the images it moves to the start (Molmo2: ``<|image|>`` for one image,
    ``Image 1<|image|>Image 2<|image|>`` for two) leaves a difference that is no per-image
    placeholder (``Image 1<|image|>Image 2`` occurs once in the two-image turn, not twice); then
    the processor's own ``image_token`` is the placeholder, if the template writes it once per image.
    """

    def turn(n_images: int) -> list[dict[str, Any]]:
        parts = [{"type": "text", "text": _PROBE_A}] + [{"type": "image"}] * n_images
        parts.append({"type": "text", "text": _PROBE_B})
        return [{"role": "user", "content": parts}]

    two, one = render(turn(2)), render(turn(1))
    start = 0
    while start < min(len(two), len(one)) and two[start] == one[start]:
        start += 1
    end = 0
    while end < min(len(two), len(one)) - start and two[len(two) - 1 - end] == one[len(one) - 1 - end]:
        end += 1
    inserted = two[start : len(two) - end]
    if _PROBE_A in inserted or _PROBE_B in inserted:  # the template moved the texts: no clean difference
        return ""
    placeholder = inserted.strip()

    def once_per_image(text: str) -> bool:
        return bool(text) and two.count(text) == 2 and one.count(text) == 1

    if image_token and not once_per_image(placeholder) and once_per_image(image_token):
        return image_token
    return placeholder


def placement_errors(rendered: str, placeholder: str, messages: Sequence[dict[str, Any]]) -> list[str]:
    """Why ``rendered`` does not keep the images where ``messages`` put them (empty: it does).

    The rendered text split at the placeholder gives one segment per gap between images;
    each text span of the prompt (between two images) must be found in its own segment.
    Templates may trim or join spans, so spans are compared stripped.
    """
    spans: list[str] = [""]
    n_images = 0
    for message in messages:
        if message["role"] != "user":
            continue
        for part in message["content"]:
            if part["type"] == "image":
                n_images += 1
                spans.append("")
            else:
                spans[-1] += part["text"]
    found = rendered.count(placeholder) if placeholder else 0
    if found != n_images:
        return [f"{n_images} image(s) in the prompt but {found} placeholder(s) {placeholder!r} in the rendered text"]
    segments = rendered.split(placeholder) if placeholder else [rendered]
    errors = []
    for i, (span, segment) in enumerate(zip(spans, segments)):
        want = span.strip()
        if want and want not in segment:
            where = "before the first image" if i == 0 else f"after image {i}"
            errors.append(f"the text {want[:40]!r} ({where}) is not where the prompt put it")
    return errors


def template_reads(processor: Any, template_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Those of ``template_kwargs`` the processor's chat template reads (all of them when that cannot be told).

    A switch the template does not know (``enable_thinking`` for GLM-4.1V's template, which always
    thinks) cannot change what it renders, but transformers takes every kwarg a template does not read
    for a processor kwarg and logs a warning on each call: one line per prompt. The kwargs stay what the
    run records and what decides the thinking budget; only rendering leaves such names out."""
    template = getattr(processor, "chat_template", None)
    if not template_kwargs or not isinstance(template, str):
        return dict(template_kwargs)
    import jinja2
    import jinja2.meta

    try:
        names = jinja2.meta.find_undeclared_variables(
            jinja2.Environment(extensions=["jinja2.ext.loopcontrols"]).parse(template)
        )
    except jinja2.TemplateError:  # a tag only transformers' environment knows ({% generation %})
        return dict(template_kwargs)
    return {name: value for name, value in template_kwargs.items() if name in names}


@dataclass
class Renderer:
    """Renders requests with a processor's chat template so images stay in place (see module doc)."""

    processor: Any
    template_kwargs: dict[str, Any]
    mode: str | None = None  # decided on the first prompt with images
    placeholder: str | None = None

    def __post_init__(self) -> None:
        self._render_kwargs = template_reads(self.processor, self.template_kwargs)

    def _render(self, conversation: list[dict[str, Any]]) -> str:
        return self.processor.apply_chat_template(
            conversation, add_generation_prompt=True, tokenize=False, **self._render_kwargs
        )

    def render(self, messages: Sequence[dict[str, Any]], has_images: bool) -> str:
        if not has_images:
            return self._render(hf_content(messages))
        if self.mode is None:
            self._choose_mode(messages)
        placeholder = self.placeholder or ""  # set with the mode
        text = self._render(hf_content(messages, placeholder if self.mode == "inline" else None))
        errors = placement_errors(text, placeholder, messages)
        if errors:
            raise MvlsibError(
                f"the chat template moved images away from their place ({errors[0]}); "
                "pass --chat-template FILE with a template that keeps content parts in order"
            )
        return text

    def _choose_mode(self, messages: Sequence[dict[str, Any]]) -> None:
        token = getattr(self.processor, "image_token", None)
        self.placeholder = find_image_placeholder(self._render, token if isinstance(token, str) else None)
        if not self.placeholder:
            raise MvlsibError(
                "the chat template writes nothing for an image part, so the model would never "
                "see the images; pass --chat-template FILE with a template for image parts"
            )
        native = self._render(hf_content(messages))
        if not placement_errors(native, self.placeholder, messages):
            self.mode = "native"
            return
        inline = self._render(hf_content(messages, self.placeholder))
        errors = placement_errors(inline, self.placeholder, messages)
        if errors:
            raise MvlsibError(
                f"the chat template moves images away from where the prompt puts them ({errors[0]}), and "
                f"writing its image placeholder {self.placeholder!r} into the text did not help; pass "
                "--chat-template FILE with a template that keeps content parts in order"
            )
        self.mode = "inline"


def starts_with_bos(text: str, tokenizer: Any) -> bool:
    """Does the rendered text already begin with the tokenizer's BOS (so none must be added)?"""
    bos = getattr(tokenizer, "bos_token", None)
    return isinstance(bos, str) and bool(bos) and text.startswith(bos)


# ---------------------------------------------------------------------------- collation


def _is_tensor(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dim")


def sequence_keys(single: dict[str, Any]) -> set[str]:
    """Keys whose tensors run along the token sequence of one prompt (shape (1, L, ...))."""
    length = single["input_ids"].shape[1]
    return {k for k, v in single.items() if _is_tensor(v) and v.dim() >= 2 and v.shape[0] == 1 and v.shape[1] == length}


def _pad_to(tensor, shape, value, left_dim: int | None = None):
    import torch.nn.functional as F

    pads: list[int] = []
    for dim in reversed(range(tensor.dim())):
        missing = shape[dim] - tensor.shape[dim]
        pads.extend((missing, 0) if dim == left_dim else (0, missing))
    return F.pad(tensor, pads, value=value) if any(pads) else tensor


def collate(singles: list[dict[str, Any]], layout: dict[str, str], pad_token_id: int) -> dict[str, Any]:
    """One batch from per-prompt processor outputs.

    ``layout`` says per key how the processor batches it: ``sequence`` (left-padded along
    the tokens), ``prompt`` (one row per prompt, other dims padded with zeros), ``image``
    (rows of all prompts concatenated, other dims zero-padded), ``list`` (Python lists concatenated).
    """
    import torch

    out: dict[str, Any] = {}
    for key, how in layout.items():
        values = [s[key] for s in singles]
        if how == "list":
            out[key] = [x for v in values for x in v]
        elif how == "image":
            # Rows of every prompt; other dimensions padded with zeros to the batch's largest
            # (LLaVA-NeXT/OneVision: a different number of anyres patches per image).
            shape = [max(v.shape[d] for v in values) for d in range(values[0].dim())]
            out[key] = torch.cat([_pad_to(v, [v.shape[0]] + shape[1:], 0) for v in values], dim=0)
        else:
            shape = [max(v.shape[d] for v in values) for d in range(values[0].dim())]
            fill = pad_token_id if key == "input_ids" else 0
            left = 1 if how == "sequence" else None
            rows = [_pad_to(v, [1] + shape[1:], fill, left) for v in values]
            out[key] = torch.cat(rows, dim=0)
    return out


def ambiguous_keys(singles: list[dict[str, Any]], batched: dict[str, Any]) -> set[str]:
    """Keys whose layout one batch cannot tell: every prompt has one row of them (one image
    each), so "a row per image" and "a row per prompt" look alike. For such a batch both
    collate the same; a later batch with several images in a prompt must be checked again."""
    n = len(singles)
    return {
        k
        for k, v in batched.items()
        if _is_tensor(v)
        and v.dim() >= 1
        and v.shape[0] == n
        and k not in set.intersection(*(sequence_keys(s) for s in singles))
        and all(_is_tensor(s.get(k)) and s[k].shape[0] == 1 for s in singles)
    }


def infer_layout(singles: list[dict[str, Any]], batched: dict[str, Any]) -> dict[str, str]:
    """How the processor batched each key, learned from one batch and its per-prompt calls.

    The self-check batch mixes prompts with different image counts where it can, so a
    per-image key (rows = images or patches) and a per-prompt key (rows = prompts) are told
    apart; ``ambiguous_keys`` says when they could not be.
    """
    n = len(singles)
    layout = {}
    seq = set.intersection(*(sequence_keys(s) for s in singles))
    for key, value in batched.items():
        if key in seq:
            layout[key] = "sequence"
        elif isinstance(value, list):
            layout[key] = "list"
        elif _is_tensor(value) and value.dim() >= 1:
            rows = [s[key].shape[0] for s in singles if _is_tensor(s.get(key))]
            if (
                len(rows) == n
                and value.shape[0] == sum(rows)
                and not (all(r == 1 for r in rows) and value.shape[0] == n)
            ):
                layout[key] = "image"
            else:
                layout[key] = "prompt"
        else:
            layout[key] = "prompt"
    return layout


def compare_batched(
    singles: list[dict[str, Any]], batched: dict[str, Any], layout: dict[str, str], pad_token_id: int
) -> list[str]:
    """Differences between a batch and its prompts processed one by one (empty: equal).

    Token ids and every sequence tensor are compared after removing the batch's left
    padding, per-prompt tensors after removing the padding of their other dimensions,
    per-image tensors row by row in prompt order.
    """
    import torch

    problems = []
    if set(batched) != set().union(*(set(s) for s in singles)):
        problems.append(f"keys differ: batch {sorted(batched)} vs per prompt {sorted(singles[0])}")
    expected = collate(singles, layout, pad_token_id)
    for key, how in layout.items():
        ours: Any = expected.get(key)
        theirs: Any = batched.get(key)
        if how == "list":
            same = ours == theirs
        else:
            same = (
                _is_tensor(theirs)
                and tuple(ours.shape) == tuple(theirs.shape)
                and torch.equal(ours.to(theirs.dtype), theirs)
            )
            if not same and how == "sequence" and key == "input_ids" and _is_tensor(theirs):
                mask = batched.get("attention_mask")
                same = mask is not None and all(
                    torch.equal(theirs[i][mask[i].bool()], s["input_ids"][0]) for i, s in enumerate(singles)
                )
        if not same:
            problems.append(f"{key} ({how}) differs")
    return problems


def differences_beyond_padding(
    singles: list[dict[str, Any]], batched: dict[str, Any], layout: dict[str, str]
) -> list[str]:
    """Differences between a processor's own batch and its prompts processed one by one,
    ignoring what the processor padded (and how: Mllama marks a padded image's first tile as
    valid in ``aspect_ratio_mask``). Each prompt's values must sit unchanged in its row(s)."""
    import torch

    problems = []
    row = 0
    for key, how in layout.items():
        theirs: Any = batched.get(key)
        if how == "list":
            if theirs != [x for s in singles for x in s[key]]:
                problems.append(f"{key} (list) differs")
            continue
        ok = _is_tensor(theirs)
        row = 0
        for i, single in enumerate(singles):
            if not ok:
                break
            mine = single[key]
            if how == "sequence":
                got = theirs[i : i + 1, theirs.shape[1] - mine.shape[1] :]
                got = got[tuple([slice(None), slice(None)] + [slice(0, d) for d in mine.shape[2:]])]
            elif how == "prompt":
                got = theirs[i : i + 1][tuple([slice(None)] + [slice(0, d) for d in mine.shape[1:]])]
            else:
                got = theirs[row : row + mine.shape[0]][tuple([slice(None)] + [slice(0, d) for d in mine.shape[1:]])]
                row += mine.shape[0]
            ok = tuple(got.shape) == tuple(mine.shape) and torch.equal(got.to(mine.dtype), mine)
        if not ok:
            problems.append(f"{key} ({how}) differs")
    return problems


class MemoImageProcessor:
    """The processor's image processor, remembering its output per tuple of images.

    The processor's own logic (placeholder expansion, per-prompt image counts, tiling
    rules) runs unchanged on every prompt; only the pixel work is reused. Prompts repeat
    their image tuples across languages (an i2s reference set, an s2i option set), so a
    full run preprocesses each tuple once instead of once per language.
    """

    def __init__(self, inner: Any, names: dict[int, str], stats: BackendStats) -> None:
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
            self._stats.images_preprocessed += sum(1 for _ in _flat(images))
        else:
            self._stats.image_cache_hits += 1
        # A copy: some processors pop keys from what the image processor returns.
        return type(hit)(dict(hit)) if hasattr(hit, "keys") else hit


def _flat(x: Any):
    if isinstance(x, (list, tuple)):
        for i in x:
            yield from _flat(i)
    else:
        yield x
