"""verify-images: every topic image must be classified as its topic by every model.

Generative models (``hf``: ``AutoModelForImageTextToText``; ``openai``: a chat-completions
server) get each image with the question which of the seven topics it shows, options
lettered A-G, in several option orders (cyclic rotations, :mod:`.rotations`); the answer
letter is read by the evaluator's parser; an image passes when more than ``threshold`` of
the orders pick its topic. Dual encoders (CLIP/SigLIP) classify zero-shot over the topic
names (:mod:`.zero_shot`); an image passes when its topic is the top-1 class.

All prompts of one model go through the evaluator's backend in large chunks, so the
backend batches them and preprocesses each image once. The result is a report (JSON +
Markdown) with one entry per image and, per model, ``passed`` and the ``predictions``.
"""

from __future__ import annotations

import dataclasses
import gc
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mvlsib import terminal
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends import BACKENDS, backend_class, make_backend, options_for
from mvlsib.evaluation.backends.hf.feature_cache import DEFAULT_FEATURE_CACHE_MB
from mvlsib.evaluation.run.parsing import MODES, parse_letter
from mvlsib.progress import bar
from mvlsib.release_format.mvl_sib import TOPICS

from .inputs import DEFAULT_LANGUAGE, load_pool_images, read_topic_names
from .prompts import ask_request, plan_asks
from .report import build_report, write_report
from .rotations import LETTERS, required_correct, rotation_shifts
from .zero_shot import DualEncoder, model_kind


@dataclass(frozen=True)
class ModelSpec:
    """One ``--model``: a local folder or Hub id (``hf``), or a served model name (``openai``)."""

    name: str  # as the user wrote it (the key in report.json)
    model: str  # without a backend prefix
    backend: str

    @classmethod
    def parse(cls, text: str, default_backend: str = "hf") -> ModelSpec:
        """``M`` uses the default backend; ``hf:M`` or ``openai:M`` picks one for this model."""
        if default_backend not in BACKENDS:
            raise MvlsibError(f"--backend must be one of {', '.join(BACKENDS)}, got {default_backend!r}")
        text = text.strip()
        prefix, sep, rest = text.partition(":")
        if sep and prefix in BACKENDS and rest:
            return cls(name=text, model=rest, backend=prefix)
        if not text:
            raise MvlsibError("--model must not be empty")
        return cls(name=text, model=text, backend=default_backend)


@dataclass
class VerifyOptions:
    pool: Path
    models: Sequence[str]
    out: Path
    backend: str = "hf"
    base_url: str | None = None
    concurrency: int = 8
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 8
    rotations: int = 7
    threshold: float = 0.5
    parse_mode: str = "relaxed"
    topic_names: Path | None = None
    max_new_tokens: int = 8
    revision: str | None = None
    trust_remote_code: bool = False
    progress: bool = True
    # The other options of the registered backends (constructor name -> value), e.g. timeout, max_retries.
    max_retries: int = 6
    backoff: float = 1.0
    timeout: float = 120.0
    request_style: str = "chat"
    image_encoding: str = "source"
    chat_template: str | None = None
    chat_template_kwargs: str | None = None
    processor_kwargs: str | None = None
    thinking_max_new_tokens: int = 2048
    threads: int = 0
    feature_cache_mb: int = DEFAULT_FEATURE_CACHE_MB
    kv_prefix: bool = False
    specs: list[ModelSpec] = field(init=False)

    def __post_init__(self) -> None:
        if not self.models:
            raise MvlsibError("give at least one --model")
        self.specs = [ModelSpec.parse(m, self.backend) for m in self.models]
        names = [s.name for s in self.specs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise MvlsibError(f"--model {dupes[0]!r} is given more than once")
        for backend in dict.fromkeys(s.backend for s in self.specs):
            backend_class(backend).check_options(self.backend_options(backend))
        if self.parse_mode not in MODES:
            raise MvlsibError(f"--parse-mode must be one of {', '.join(MODES)}, got {self.parse_mode!r}")
        try:
            rotation_shifts(self.rotations)
            required_correct(self.rotations, self.threshold)
        except ValueError as exc:
            raise MvlsibError(f"--rotations/--threshold: {exc}") from None

    def backend_options(self, backend: str) -> dict[str, Any]:
        """The constructor keywords of ``backend`` among these options."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.init}
        return options_for(backend, values)


# ---------------------------------------------------------------------------- running


def _progress(total: int, desc: str, enabled: bool):
    return bar(total=total, desc=desc, unit="img", enabled=enabled, dynamic_ncols=True)


def run_generative(backend, entries, names_by_language, opts: VerifyOptions, desc: str) -> dict[str, dict[str, Any]]:
    """Results per image id for a generative backend (images already set on it)."""
    shifts = rotation_shifts(opts.rotations)
    need = required_correct(len(shifts), opts.threshold)
    asks = plan_asks([row.image_id for row, _ in entries], names_by_language, shifts)
    requests = [ask_request(a) for a in asks]
    per_image = len(names_by_language) * len(shifts)
    # Whole images per chunk so the bar counts images; at least the backend's preferred chunk.
    chunk = max(1, getattr(backend, "preferred_chunk", 32) // per_image) * per_image
    responses: list[str] = []
    with _progress(len(entries), desc, opts.progress) as bar:
        for start in range(0, len(requests), chunk):
            part = requests[start : start + chunk]
            got = backend.generate(part)
            if len(got) != len(part):
                raise MvlsibError(f"{desc}: the backend returned {len(got)} responses for {len(part)} prompts")
            responses.extend(got)
            bar.update(len(part) // per_image)
    topic_of = {row.image_id: row.topic for row, _ in entries}
    results: dict[str, dict[str, Any]] = {}
    for ask, response in zip(asks, responses):
        letter = parse_letter(response, opts.parse_mode, letters=LETTERS)
        predicted = ask.order[LETTERS.index(letter)] if letter is not None else None
        own = topic_of[ask.image_id]
        res = results.setdefault(ask.image_id, {"predictions": []})
        res["predictions"].append(
            {
                "language": ask.language,
                "shift": ask.shift,
                "options": list(ask.names),
                "response": response,
                "letter": letter,
                "predicted_topic": predicted,
                "correct": predicted == own,
            }
        )
    for res in results.values():
        languages = {}
        for lang in names_by_language:
            preds = [p for p in res["predictions"] if p["language"] == lang]
            correct = sum(p["correct"] for p in preds)
            languages[lang] = {"correct": correct, "n": len(preds), "passed": correct >= need}
        res["kind"] = "generative"
        res["passed"] = all(v["passed"] for v in languages.values())
        res["correct"] = sum(v["correct"] for v in languages.values())
        res["n"] = sum(v["n"] for v in languages.values())
        res["required"] = need
        res["languages"] = languages
        wrong = Counter(p["predicted_topic"] or "(no letter)" for p in res["predictions"] if not p["correct"])
        res["most_common_wrong"] = min(wrong.items(), key=lambda kv: (-kv[1], kv[0]))[0] if wrong else None
    return {k: _ordered(v) for k, v in results.items()}


def run_dual(encoder, entries, names_by_language, opts: VerifyOptions, desc: str) -> dict[str, dict[str, Any]]:
    """Results per image id for a dual encoder: zero-shot top-1 over the topic names, per language."""
    import torch

    with _progress(len(entries), desc, opts.progress) as bar:
        image_emb = encoder.image_embeddings([im for _, im in entries], progress=bar)
    per_lang = {lang: (image_emb @ encoder.class_embeddings(names).T) for lang, names in names_by_language.items()}
    results: dict[str, dict[str, Any]] = {}
    for i, (row, _) in enumerate(entries):
        own = TOPICS.index(row.topic)
        preds, languages = [], {}
        for lang, sims in per_lang.items():
            s = sims[i]
            top = int(torch.argmax(s))
            others = torch.cat([s[:own], s[own + 1 :]])
            margin = float(s[own] - others.max())
            preds.append(
                {
                    "language": lang,
                    "similarities": {t: round(float(v), 4) for t, v in zip(TOPICS, s)},
                    "predicted_topic": TOPICS[top],
                    "margin": round(margin, 4),
                    "correct": top == own,
                }
            )
            languages[lang] = {"passed": top == own, "margin": round(margin, 4)}
        results[row.image_id] = _ordered(
            {
                "kind": "dual",
                "passed": all(v["passed"] for v in languages.values()),
                "margin": min(v["margin"] for v in languages.values()),
                "languages": languages,
                "predictions": preds,
            }
        )
    return results


def _ordered(res: dict[str, Any]) -> dict[str, Any]:
    # "passed" first and "predictions" last: the JSON reads well and diffs stay small.
    keys = ["kind", "passed", "correct", "n", "required", "margin", "most_common_wrong", "languages", "predictions"]
    return {k: res[k] for k in keys if k in res}


def _generative_backend(spec: ModelSpec, opts: VerifyOptions):
    return make_backend(
        spec.backend, model=spec.model, max_new_tokens=opts.max_new_tokens, **opts.backend_options(spec.backend)
    )


def _run_model(spec: ModelSpec, kind: str, entries, images, names_by_language, *, opts: VerifyOptions):
    """(results per image id, the model's description) of one model."""
    if kind == "dual":
        encoder = DualEncoder(
            spec.model,
            revision=opts.revision,
            batch_size=opts.batch_size,
            device=opts.device,
            dtype=opts.dtype,
            trust_remote_code=opts.trust_remote_code,
            threads=opts.threads,
        )
        try:
            return run_dual(encoder, entries, names_by_language, opts, spec.name), encoder.describe()
        finally:
            encoder.close()
    backend = _generative_backend(spec, opts)
    try:
        backend.set_images(images)
        results = run_generative(backend, entries, names_by_language, opts, spec.name)
        return results, {"kind": "generative", **backend.describe()}
    finally:
        backend.close()


def verify_images(opts: VerifyOptions, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run every model over every pool image; write ``report.json`` and ``report.md``; return the report."""
    log = log or (lambda msg: terminal.note("{}", msg))
    names_by_language = read_topic_names(opts.topic_names) if opts.topic_names else {DEFAULT_LANGUAGE: TOPICS}
    entries = load_pool_images(opts.pool)
    images = {row.image_id: im for row, im in entries}
    shifts = rotation_shifts(opts.rotations)
    per_model: dict[str, dict[str, dict[str, Any]]] = {}
    model_info: dict[str, dict[str, Any]] = {}
    timings: dict[str, float] = {}
    # Read every config first: a wrong --model fails before hours of work on the others.
    kinds = {
        s.name: "generative" if s.backend == "openai" else model_kind(s.model, opts.revision, opts.trust_remote_code)
        for s in opts.specs
    }
    for spec in opts.specs:
        started = time.perf_counter()
        per_model[spec.name], model_info[spec.name] = _run_model(
            spec, kinds[spec.name], entries, images, names_by_language, opts=opts
        )
        timings[spec.name] = time.perf_counter() - started
        _free_memory()
        n_failed = sum(not r["passed"] for r in per_model[spec.name].values())
        log(
            f"{spec.name}: {len(entries) - n_failed}/{len(entries)} images pass "
            f"({timings[spec.name]:.1f} s, {len(entries) / max(timings[spec.name], 1e-9):.1f} images/s)"
        )
    report = build_report(opts, entries, names_by_language, shifts, per_model=per_model, model_info=model_info)
    write_report(report, opts.out)
    report["timings_s"] = timings  # for the caller only; not written (outputs stay byte-identical)
    return report


def _free_memory() -> None:
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover
        pass


__all__ = [
    "ModelSpec",
    "VerifyOptions",
    "run_generative",
    "run_dual",
    "verify_images",
]
