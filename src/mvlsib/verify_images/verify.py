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

import csv
import gc
import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mvlsib.atomic import atomic_open
from mvlsib.csvio import open_csv
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.backends.hf_reuse import DEFAULT_FEATURE_CACHE_MB
from mvlsib.limits import MAX_PIXELS
from mvlsib.release_format.mvl_sib import TOPICS

from .rotations import LETTERS, required_correct, rotate, rotation_shifts

DEFAULT_LANGUAGE = "eng_Latn"


# ---------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class ModelSpec:
    """One ``--model``: a local folder or Hub id (``hf``), or a served model name (``openai``)."""

    name: str  # as the user wrote it (the key in report.json)
    model: str  # without a backend prefix
    backend: str

    @classmethod
    def parse(cls, text: str, default_backend: str = "hf") -> ModelSpec:
        """``M`` uses the default backend; ``hf:M`` or ``openai:M`` picks one for this model."""
        from mvlsib.evaluation.backends import BACKENDS as BACKEND_NAMES

        if default_backend not in BACKEND_NAMES:
            raise MvlsibError(f"--backend must be one of {', '.join(BACKEND_NAMES)}, got {default_backend!r}")
        text = text.strip()
        prefix, sep, rest = text.partition(":")
        if sep and prefix in BACKEND_NAMES and rest:
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
    chat_template: str | None = None
    chat_template_kwargs: str | None = None
    processor_kwargs: str | None = None
    thinking_max_new_tokens: int = 2048
    threads: int = 0
    feature_cache_mb: int = DEFAULT_FEATURE_CACHE_MB
    kv_prefix: bool = False
    specs: list[ModelSpec] = field(init=False)

    def __post_init__(self) -> None:
        from mvlsib.evaluation.parsing import MODES

        if not self.models:
            raise MvlsibError("give at least one --model")
        self.specs = [ModelSpec.parse(m, self.backend) for m in self.models]
        names = [s.name for s in self.specs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise MvlsibError(f"--model {dupes[0]!r} is given more than once")
        if any(s.backend == "openai" for s in self.specs) and not self.base_url:
            raise MvlsibError("the openai backend needs --base-url (e.g. http://127.0.0.1:8000/v1)")
        if self.parse_mode not in MODES:
            raise MvlsibError(f"--parse-mode must be one of {', '.join(MODES)}, got {self.parse_mode!r}")
        try:
            rotation_shifts(self.rotations)
            required_correct(self.rotations, self.threshold)
        except ValueError as exc:
            raise MvlsibError(f"--rotations/--threshold: {exc}") from None


def read_topic_names(path: str | Path) -> dict[str, tuple[str, ...]]:
    """A CSV with a ``language`` column and one column per topic (SIB spelling or slug).

    Returns language -> the seven names in ``TOPICS`` order, in file order.
    """
    path = Path(path)
    try:
        fh = open_csv(path)
    except OSError as exc:
        raise MvlsibError(f"--topic-names {path}: cannot read it ({exc.strerror})") from None
    with fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        columns: dict[str, str] = {}
        for h in header:
            topic = h.replace("_", "/") if h.replace("_", "/") in TOPICS else h
            if topic in TOPICS:
                columns[topic] = h
        missing = [t for t in TOPICS if t not in columns]
        if "language" not in header or missing:
            raise MvlsibError(
                f"{path}, line 1: the header must have a 'language' column and one column per topic "
                f"({', '.join(TOPICS)}; slugs like science_technology work too); "
                f"missing: {', '.join((['language'] if 'language' not in header else []) + missing)}"
            )
        out: dict[str, tuple[str, ...]] = {}
        for lineno, rec in enumerate(reader, start=2):
            rec = {(k or "").strip(): (v or "").strip() for k, v in rec.items() if k is not None}
            lang = rec.get("language", "")
            if not lang:
                raise MvlsibError(f"{path}, line {lineno}: empty language")
            if lang in out:
                raise MvlsibError(f"{path}, line {lineno}: language {lang!r} appears twice")
            names = tuple(rec.get(columns[t], "") for t in TOPICS)
            empty = [t for t, n in zip(TOPICS, names) if not n]
            if empty:
                raise MvlsibError(f"{path}, line {lineno} ({lang}): no name for {', '.join(empty)}")
            folded = [n.casefold() for n in names]
            clash = sorted({n for n in folded if folded.count(n) > 1})
            if clash:
                raise MvlsibError(
                    f"{path}, line {lineno} ({lang}): two topics share the name {clash[0]!r}; the model "
                    "could not tell them apart"
                )
            out[lang] = names
    if not out:
        raise MvlsibError(f"{path}: no language rows under the header")
    return out


def load_pool_images(pool: str | Path) -> list[tuple[Any, Any]]:
    """(manifest row, RGB PIL image) for every image of the pool, in manifest order."""
    from PIL import Image

    from mvlsib.workdir.pool_manifest import manifest_path, pool_file, read_manifest

    rows = read_manifest(pool)
    if not rows:
        raise MvlsibError(f"{manifest_path(pool)}: the manifest lists no images")
    out = []
    for lineno, row in enumerate(rows, start=2):
        if row.topic not in TOPICS:
            raise MvlsibError(
                f"{manifest_path(pool)}, line {lineno}: image {row.image_id} has topic {row.topic!r}; "
                f"expected one of {', '.join(TOPICS)}"
            )
        file = pool_file(pool, row, lineno)
        try:
            with Image.open(file) as im:
                if im.width * im.height > MAX_PIXELS:
                    raise MvlsibError(
                        f"{file}: {im.width}x{im.height} pixels is more than {MAX_PIXELS:,}; "
                        "normalise the pool first (mvlsib-build images)"
                    )
                im.load()
                out.append((row, _rgb(im)))
        except (OSError, Image.DecompressionBombError) as exc:
            raise MvlsibError(f"{file} (image {row.image_id}): cannot decode it: {exc}") from None
    return out


def _rgb(im):
    from PIL import Image

    if im.mode in ("RGBA", "LA", "P") and ("transparency" in im.info or im.mode != "P"):
        # Transparent pixels become white, as an image viewer shows them.
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return im.convert("RGB")


# ---------------------------------------------------------------------------- prompts


def question_text(names: Sequence[str]) -> str:
    """The question shown after the image; ``names`` in presented order (A first)."""
    options = "\n".join(f"{LETTERS[i]}. {name}" for i, name in enumerate(names))
    return (
        "Which of these topics does the image show?\n"
        f"{options}\n"
        "Answer with the option's letter from the given choices directly."
    )


@dataclass(frozen=True)
class Ask:
    """One prompt: ``image_id`` asked in ``language`` with the topics rotated by ``shift``."""

    image_id: str
    language: str
    shift: int
    order: tuple[str, ...]  # canonical topics in presented order (A first)
    names: tuple[str, ...]  # the names shown, in presented order


def plan_asks(
    image_ids: Sequence[str], names_by_language: dict[str, tuple[str, ...]], shifts: Sequence[int]
) -> list[Ask]:
    return [
        Ask(image_id, lang, shift, tuple(rotate(TOPICS, shift)), tuple(rotate(names, shift)))
        for image_id in image_ids
        for lang, names in names_by_language.items()
        for shift in shifts
    ]


def ask_request(ask: Ask):
    from mvlsib.evaluation.backends import Request

    content = [{"type": "image", "image_id": ask.image_id}, {"type": "text", "text": question_text(ask.names)}]
    return Request(
        key=f"{ask.image_id}|{ask.language}|{ask.shift}",
        messages=({"role": "user", "content": content},),
        image_ids=(ask.image_id,),
    )


# ---------------------------------------------------------------------------- running


def _progress(total: int, desc: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="img", file=sys.stderr, disable=not enabled, dynamic_ncols=True)


def run_generative(backend, entries, names_by_language, opts: VerifyOptions, desc: str) -> dict[str, dict[str, Any]]:
    """Results per image id for a generative backend (images already set on it)."""
    from mvlsib.evaluation.parsing import parse_letter

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
    import dataclasses

    from mvlsib.evaluation.backends import make_backend, options_for

    values = {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts) if f.init}
    return make_backend(
        spec.backend, model=spec.model, max_new_tokens=opts.max_new_tokens, **options_for(spec.backend, values)
    )


def verify_images(opts: VerifyOptions, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run every model over every pool image; write ``report.json`` and ``report.md``; return the report."""
    import time

    from .zero_shot import DualEncoder, model_kind

    log = log or (lambda msg: print(msg, file=sys.stderr))
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
        kind = kinds[spec.name]
        started = time.perf_counter()
        if kind == "dual":
            runner = DualEncoder(
                spec.model,
                revision=opts.revision,
                batch_size=opts.batch_size,
                device=opts.device,
                dtype=opts.dtype,
                trust_remote_code=opts.trust_remote_code,
                threads=opts.threads,
            )
            try:
                per_model[spec.name] = run_dual(runner, entries, names_by_language, opts, spec.name)
                model_info[spec.name] = runner.describe()
            finally:
                runner.close()
        else:
            runner = _generative_backend(spec, opts)
            try:
                runner.set_images(images)
                per_model[spec.name] = run_generative(runner, entries, names_by_language, opts, spec.name)
                model_info[spec.name] = {"kind": "generative", **runner.describe()}
            finally:
                runner.close()
        timings[spec.name] = time.perf_counter() - started
        del runner
        _free_memory()
        n_failed = sum(not r["passed"] for r in per_model[spec.name].values())
        log(
            f"{spec.name}: {len(entries) - n_failed}/{len(entries)} images pass "
            f"({timings[spec.name]:.1f} s, {len(entries) / max(timings[spec.name], 1e-9):.1f} images/s)"
        )
    report = build_report(opts, entries, names_by_language, shifts, per_model, model_info)
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


# ---------------------------------------------------------------------------- report


def build_report(opts, entries, names_by_language, shifts, per_model, model_info) -> dict[str, Any]:
    from mvlsib import __version__

    models = [s.name for s in opts.specs]
    images = []
    for row, _ in entries:
        results = {m: per_model[m][row.image_id] for m in models}
        images.append(
            {
                "image_id": row.image_id,
                "topic": row.topic,
                "file": row.file,
                "passed": all(r["passed"] for r in results.values()),
                "results": results,
            }
        )
    summary = {}
    for m in models:
        res = [per_model[m][row.image_id] for row, _ in entries]
        entry: dict[str, Any] = {
            "kind": model_info[m]["kind"],
            "passed": sum(r["passed"] for r in res),
            "failed": sum(not r["passed"] for r in res),
        }
        if model_info[m]["kind"] == "generative":
            letters = Counter(p["letter"] or "none" for r in res for p in r["predictions"])
            entry["format_errors"] = letters.get("none", 0)
            entry["prompts"] = sum(letters.values())
            # A model that always answers one letter shows up here, whatever the images.
            entry["answer_letters"] = {k: letters.get(k, 0) for k in (*LETTERS, "none")}
        summary[m] = entry
    return {
        "tool": "mvlsib-build verify-images",
        "toolkit_version": __version__,
        "pool": str(opts.pool),
        "settings": {
            "rotations": list(shifts),
            "threshold": opts.threshold,
            "required_correct": required_correct(len(shifts), opts.threshold),
            "parse_mode": opts.parse_mode,
            "languages": {lang: list(names) for lang, names in names_by_language.items()},
            "question_example": question_text(next(iter(names_by_language.values()))),
        },
        "models": models,
        "model_info": model_info,
        "summary": summary,
        "passed": all(i["passed"] for i in images),
        "failures": [[i["image_id"], m] for i in images for m in models if not i["results"][m]["passed"]],
        "images": images,
    }


def _cell(res: dict[str, Any]) -> str:
    if res["kind"] == "dual":
        if res["passed"]:
            return f"pass (margin {res['margin']:+.3f})"
        wrong = next((p["predicted_topic"] for p in res["predictions"] if not p["correct"]), "?")
        return f"**FAIL** → {wrong} (margin {res['margin']:+.3f})"
    score = f"{res['correct']}/{res['n']}"
    if res["passed"]:
        return f"pass {score}"
    return f"**FAIL** {score}, mostly → {res['most_common_wrong']}"


def render_markdown(report: dict[str, Any]) -> str:
    models = report["models"]
    s = report["settings"]
    lines = [
        "# verify-images report",
        "",
        f"Pool `{report['pool']}`, {len(report['images'])} images, {len(models)} model(s); "
        f"generative models asked in {len(s['rotations'])} option order(s), passing with at least "
        f"{s['required_correct']} correct; dual encoders pass on a top-1 match. Languages: "
        + ", ".join(s["languages"])
        + ".",
        "",
        "| model | kind | passed | failed | format errors |",
        "|---|---|---:|---:|---:|",
    ]
    for m in models:
        e = report["summary"][m]
        fe = f"{e['format_errors']}/{e['prompts']}" if "format_errors" in e else "–"
        lines.append(f"| `{m}` | {e['kind']} | {e['passed']} | {e['failed']} | {fe} |")
    lines += ["", "## Images (failures first)", ""]
    lines.append("| image | topic | " + " | ".join(f"`{m}`" for m in models) + " |")
    lines.append("|---|---|" + "---|" * len(models))
    ordered = sorted(report["images"], key=lambda i: i["passed"])  # stable: failures first, manifest order kept
    for img in ordered:
        cells = [_cell(img["results"][m]) for m in models]
        lines.append(f"| {img['image_id']} | {img['topic']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report(report: dict[str, Any], out: str | Path) -> tuple[Path, Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "report.json", out / "report.md"
    with atomic_open(json_path) as fh:
        fh.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    with atomic_open(md_path) as fh:
        fh.write(render_markdown(report))
    return json_path, md_path


__all__ = [
    "ModelSpec",
    "VerifyOptions",
    "read_topic_names",
    "load_pool_images",
    "question_text",
    "plan_asks",
    "run_generative",
    "run_dual",
    "verify_images",
    "build_report",
    "render_markdown",
    "write_report",
]
