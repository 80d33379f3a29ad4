"""Requests -> model inputs per forward pass: rendering, per-prompt inputs, batches, and their self-check.

Per-prompt inputs are collated into batches, longest first, with left padding. The first
batch of each kind (prompts with images, text-only prompts) is a probe: collating its
per-prompt inputs must equal the processor's own batched call (one image list per prompt). If
they differ only where the processor pads its own way (Mllama), the processor's batches are
used; otherwise that kind runs one prompt at a time.
"""

from __future__ import annotations

from typing import Any

from ..._compat import MvlsibError, terminal
from ..base import BackendStats, Request, one_line
from .inputs import (
    MemoImageProcessor,
    Renderer,
    ambiguous_keys,
    collate,
    compare_batched,
    differences_beyond_padding,
    infer_layout,
    starts_with_bos,
)


class Batcher:
    """Builds the model inputs of requests for one processor.

    Per kind of prompt (``True``: with images), ``batched`` says how its batches are made:
    "collate" (our collation of per-prompt inputs), "processor" (the processor's own batches)
    or False (one prompt at a time); ``layouts`` how each input key is collated."""

    def __init__(
        self,
        processor: Any,
        template_kwargs: dict[str, Any],
        processor_kwargs: dict[str, Any],
        *,
        batch_size: int,
        stats: BackendStats,
        cache_images: bool = True,
    ) -> None:
        self.processor, self.tokenizer = processor, processor.tokenizer
        self.processor_kwargs, self.batch_size, self.stats = processor_kwargs, batch_size, stats
        self.cache_images = cache_images
        self.renderer = Renderer(processor, template_kwargs)
        self.images: dict[str, Any] = {}
        self.layouts: dict[bool, dict[str, str] | None] = {}
        self.batched: dict[bool, str | bool] = {}
        self.ambiguous: dict[bool, bool] = {}
        self.inner_image_processor = getattr(processor, "image_processor", None)

    def set_images(self, images: dict[str, Any]) -> None:
        """The image table; with ``cache_images`` each tuple of images is preprocessed once."""
        self.images = images
        if self.cache_images and self.inner_image_processor is not None:
            names = {id(im): name for name, im in images.items()}
            self.processor.image_processor = MemoImageProcessor(self.inner_image_processor, names, self.stats)

    def close(self) -> None:
        if self.inner_image_processor is not None:
            self.processor.image_processor = self.inner_image_processor

    def chat_text(self, request: Request) -> str:
        return self.renderer.render(request.messages, bool(request.image_ids))

    def images_of(self, request: Request) -> list[Any]:
        try:
            return [self.images[i] for i in request.image_ids]
        except KeyError as exc:
            raise MvlsibError(f"image {exc.args[0]!r} is not in the image table of this release") from None

    def call_processor(self, texts: list[str], image_lists: list[list[Any]] | None) -> dict[str, Any]:
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
                f"{type(self.processor).__name__} refused the prompt inputs: {one_line(exc)}"
                + (" (check --processor-kwargs)" if self.processor_kwargs else "")
            ) from None

    def single(self, text: str, request: Request) -> dict[str, Any]:
        return self.call_processor([text], [self.images_of(request)] if request.image_ids else None)

    # ------------------------------------------------------------------ the self-check

    def check_batching(
        self, texts: list[str], requests: list[Request], singles: list[dict[str, Any]], has_images: bool
    ) -> None:
        """The first batch of each modality: does collating per-prompt inputs equal the processor's
        own batched call (one image list per prompt)? If not, prompts of that kind run one by one."""
        if len(requests) < 2:
            return
        # The reference is the plain processor (not the memo), so the check also covers the memo.
        memo = self.processor.image_processor
        self.processor.image_processor = self.inner_image_processor
        layout: dict[str, str] = {}
        try:
            batched = self.call_processor(texts, [self.images_of(r) for r in requests] if has_images else None)
        except MvlsibError as exc:  # the processor cannot batch these prompts at all
            batched, problems = None, [str(exc)]
        finally:
            self.processor.image_processor = memo
        if batched is not None:
            layout = infer_layout(singles, batched)
            self.ambiguous[has_images] = bool(ambiguous_keys(singles, batched))
            problems = compare_batched(singles, batched, layout, self.tokenizer.pad_token_id)
        self.batched[has_images] = self._verdict(problems, batched, singles, layout, has_images)
        self.layouts[has_images] = layout

    def _verdict(self, problems, batched, singles, layout, has_images: bool) -> str | bool:
        kind = "image" if has_images else "text"
        name = type(self.processor).__name__
        if not problems:
            return "collate"
        if batched is not None and not differences_beyond_padding(singles, batched, layout):
            # The processor pads its own way (e.g. Mllama's aspect_ratio_mask); its batches
            # carry each prompt's values unchanged, so use them as they come.
            terminal.note(
                "mvlsib-eval: {}: {} prompts are batched by the processor itself ({} only in its padding)",
                name,
                kind,
                "; ".join(problems),
            )
            return "processor"
        terminal.note(
            "mvlsib-eval: {}: batched inputs differ from per-prompt inputs ({}); {} prompts run one at a time",
            name,
            "; ".join(problems),
            kind,
        )
        return False

    def probe(self, idx: list[int], requests: list[Request]) -> list[int]:
        """The self-check batch: prompts with as many different image counts as there are
        (the most images first), filled up to 2-4 prompts."""
        size = min(len(idx), max(2, min(4, self.batch_size)))
        first_of_count: dict[int, int] = {}
        for i in idx:
            first_of_count.setdefault(len(requests[i].image_ids), i)
        picks = [first_of_count[c] for c in sorted(first_of_count, reverse=True)][:size]
        picks += [i for i in idx if i not in picks][: size - len(picks)]
        return picks

    # ------------------------------------------------------------------ batches

    def build_batches(
        self, requests: list[Request], by_image_set: bool = False
    ) -> list[tuple[list[int], dict[str, Any]]]:
        """The model inputs of ``requests``: (request indices, inputs) per forward pass, longest first.

        ``by_image_set``: batches of prompts with images hold one image set each (groups in the order
        of their longest prompt; prompts whose images no other prompt shows are batched together),
        so a batch can share its prefix through the images."""
        texts = [self.chat_text(r) for r in requests]
        singles: dict[int, dict[str, Any]] = {}

        def single(i: int) -> dict[str, Any]:  # per-prompt inputs, made only where they are used
            if i not in singles:
                singles[i] = self.single(texts[i], requests[i])
            return singles[i]

        batches: list[tuple[list[int], dict[str, Any]]] = []
        for has_images in (True, False):
            idx = [i for i, r in enumerate(requests) if bool(r.image_ids) == has_images]
            if idx:
                batches += self._kind_batches(
                    idx, requests, texts, single, has_images=has_images, by_image_set=by_image_set and has_images
                )
        return batches

    def _kind_batches(self, idx, requests, texts, single, *, has_images: bool, by_image_set: bool):
        # Longest first: memory trouble shows up at once; similar lengths pad little. Where the
        # processor batches itself, per-prompt inputs would be made only to be measured (and
        # their images preprocessed twice): the rendered text's length stands in.
        if self.batched.get(has_images) == "processor":
            idx.sort(key=lambda i: (-len(texts[i]), i))
        else:
            idx.sort(key=lambda i: (-single(i)["input_ids"].shape[1], i))
        several = any(len(requests[i].image_ids) > 1 for i in idx)
        if has_images not in self.batched or (self.ambiguous.get(has_images) and several):
            probe = self.probe(idx, requests)
            self.check_batching(
                [texts[i] for i in probe], [requests[i] for i in probe], [single(i) for i in probe], has_images
            )
        size = self.batch_size if self.batched.get(has_images, True) else 1
        groups = _image_set_groups(idx, requests) if by_image_set else [idx]
        out = []
        for part in (group[start : start + size] for group in groups for start in range(0, len(group), size)):
            if len(part) == 1:
                out.append((part, single(part[0])))
                if size == 1 and self.batch_size > 1:  # batching refused by the self-check
                    self.stats.unbatched_prompts += 1
            elif self.batched.get(has_images) == "processor":
                images = [self.images_of(requests[i]) for i in part] if has_images else None
                out.append((part, self.call_processor([texts[i] for i in part], images)))
            else:
                layout = self.layouts[has_images] or {}
                out.append((part, collate([single(i) for i in part], layout, self.tokenizer.pad_token_id)))
        return out


def _image_set_groups(idx: list[int], requests: list[Request]) -> list[list[int]]:
    """``idx`` (in order) grouped by image set; the prompts alone in their set form one last group.
    The prefix order sends an i2s reference set in every language in one chunk."""
    groups: dict[tuple, list[int]] = {}
    for i in idx:
        groups.setdefault(tuple(requests[i].image_ids), []).append(i)
    alone = [g[0] for g in groups.values() if len(g) == 1]
    return [g for g in groups.values() if len(g) > 1] + ([alone] if alone else [])
