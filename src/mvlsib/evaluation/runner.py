"""``mvlsib-eval run``: examples -> prompts -> backend -> predictions.jsonl -> metrics.json.

Resumable: the keys already in the run's predictions file are skipped, so rerunning
the same command after a crash (or ``kill -9``) finishes the remaining work, and a
complete run reruns in seconds without loading the model. A run folder remembers
its fingerprint (data, model, prompts, tasks, ...) in config.json and refuses to be
resumed by a different command.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from . import _compat
from ._compat import MvlsibError, atomic_open
from .backends import Backend, Request, make_backend
from .parsing import LETTERS, parse_letter
from .prompts import TASKS, TEMPLATE_VERSION, prompt_for_example, prompts_hash
from .scoring import compute_metrics
from .shards import Shard, select
from .store import PredictionWriter, read_predictions, record_key

CROSS_MODAL = ("i2s", "s2i")


@dataclass
class RunOptions:
    data: str
    model: str
    out: Path
    tasks: tuple[str, ...] = TASKS
    ks: tuple[int, ...] = (1, 3, 5)
    languages: tuple[str, ...] | str = "all"
    backend: str = "hf"
    limit: int | None = None
    shard: Shard | None = None
    parse_mode: str = "relaxed"
    data_revision: str | None = None
    model_revision: str | None = None
    max_new_tokens: int = 8
    dtype: str = "auto"
    backend_options: dict[str, Any] = field(default_factory=dict)
    groups: dict[str, dict[str, str]] = field(default_factory=dict)
    progress: bool = True


@dataclass(frozen=True)
class WorkItem:
    task: str
    k: int
    language: str
    instance_id: str
    label: int
    request: Request


def _versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version(), "mvlsib-build": _compat.TOOLKIT_VERSION}
    for dist in ("torch", "transformers", "datasets", "pyarrow", "pillow", "huggingface-hub"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def release_manifest_sha256(data: str) -> str | None:
    manifest = Path(data) / "manifest.json"
    if manifest.is_file():
        return hashlib.sha256(manifest.read_bytes()).hexdigest()
    return None


def resolve_tasks_ks(tasks, ks) -> list[tuple[str, int]]:
    """(task, k) pairs in canonical order; t2s only ever k=1 (repeating a topic adds nothing)."""
    loader = _compat.loader()
    names = []
    for t in tasks:
        try:
            name = loader.normalize_task(t)
        except ValueError as exc:
            raise MvlsibError(str(exc)) from None
        if name not in names:
            names.append(name)
    for k in ks:
        if not 1 <= int(k) <= 5:
            raise MvlsibError(f"--k values must be in 1..5 (each instance has 5 references), got {k}")
    pairs = []
    for task in TASKS:
        if task not in names:
            continue
        for k in sorted(set(int(k) for k in ks)) if task != "t2s" else (1,):
            pairs.append((task, k))
    return pairs


def resolve_languages(data: str, languages) -> list[str]:
    loader = _compat.loader(data)
    if languages == "all" or languages == ("all",):
        if not Path(data).is_dir():
            raise MvlsibError(f"--languages all needs a local release folder; for {data!r} list the languages")
        found = loader.languages(data)
        if not found:
            raise MvlsibError(f"{data}: no language configs under data/; is this an MVL-SIB release folder?")
        return found
    return sorted(dict.fromkeys(languages))


def build_items(opts: RunOptions, pairs, languages) -> tuple[list[WorkItem], dict[str, Any]]:
    """All work items of the run in canonical order, and the images they need."""
    loader = _compat.loader(opts.data)
    need_images = any(t in CROSS_MODAL for t, _ in pairs)
    # The loader's row/image functions read each language and the images once; a loader with
    # only the documented load_task (an older release's mvl_sib.py) works too, just slower.
    fast = all(hasattr(loader, n) for n in ("load_rows", "load_images", "build_examples"))
    try:
        images = loader.load_images(opts.data, opts.data_revision) if need_images and fast else {}
        items: list[WorkItem] = []
        for language in languages:
            rows = loader.load_rows(language, opts.data, opts.data_revision) if fast else None
            if rows is not None and opts.limit is not None:
                rows = rows[: opts.limit]
            for task, k in pairs:
                if fast:
                    examples = loader.build_examples(rows, images if task in CROSS_MODAL else None, task, k)
                else:
                    examples = loader.load_task(task, language, k=k, source=opts.data)[: opts.limit]
                    for ex in examples:
                        images.update(zip(ex["image_ids"], ex["images"]))
                for ex in examples:
                    prompt = prompt_for_example(ex)
                    request = Request(
                        key=f"{task}|k{k}|{language}|{ex['instance_id']}",
                        messages=tuple(prompt.messages()),
                        image_ids=prompt.image_ids,
                    )
                    items.append(WorkItem(task, k, language, ex["instance_id"], int(ex["label"]), request))
    except ValueError as exc:  # the loader's LoaderError: a bad language, a broken release
        if isinstance(exc, MvlsibError):
            raise
        raise MvlsibError(f"{opts.data}: {exc}") from None
    return items, images


def fingerprint(opts: RunOptions, pairs, languages) -> dict[str, Any]:
    """What must be equal for two runs (or shards) to be parts of one evaluation."""
    return {
        "data": str(Path(opts.data).resolve()) if Path(opts.data).is_dir() else opts.data,
        "data_revision": opts.data_revision,
        "release_manifest_sha256": release_manifest_sha256(opts.data),
        "backend": opts.backend,
        "model": opts.model,
        "model_revision": opts.model_revision,
        "dtype": opts.dtype,
        "max_new_tokens": opts.max_new_tokens,
        "tasks": [[t, k] for t, k in pairs],
        "languages": list(languages),
        "limit": opts.limit,
        "prompts_sha256": prompts_hash(),
        "prompt_template_version": TEMPLATE_VERSION,
        "shard_count": opts.shard.count if opts.shard else 1,
    }


def _paths(out: Path, shard: Shard | None) -> tuple[Path, Path]:
    suffix = shard.suffix if shard else ""
    return out / f"predictions{suffix}.jsonl", out / f"config{suffix}.json"


def _write_json(path: Path, obj: Any) -> None:
    with atomic_open(path) as fh:
        json.dump(obj, fh, ensure_ascii=False, indent=2, sort_keys=True)
        fh.write("\n")


def finalize(out: Path, config: dict, records: list[dict]) -> dict:
    """Write metrics.json and config.json of a complete (or merged) run; returns the metrics."""
    metrics = compute_metrics(records, config.get("parse_mode", "relaxed"), config.get("groups") or {})
    _write_json(out / "metrics.json", metrics)
    _write_json(out / "config.json", config)
    return metrics


def run_eval(opts: RunOptions, backend_factory: Callable[..., Backend] | None = None) -> dict[str, Any]:
    """Run (or resume) an evaluation; returns a summary dict."""
    out = Path(opts.out)
    _compat.loader(opts.data)  # no loader, no run: say so before anything else
    pairs = resolve_tasks_ks(opts.tasks, opts.ks)
    languages = resolve_languages(opts.data, opts.languages)
    fp = fingerprint(opts, pairs, languages)
    pred_path, cfg_path = _paths(out, opts.shard)
    if cfg_path.exists():
        try:
            old = json.loads(cfg_path.read_text(encoding="utf-8"))["fingerprint"]
        except (ValueError, KeyError) as exc:
            raise MvlsibError(f"{cfg_path}: unreadable run config ({exc}); use a new --out folder") from None
        if old != fp:
            diff = sorted(k for k in set(old) | set(fp) if old.get(k) != fp.get(k))
            raise MvlsibError(
                f"{out} holds a run with different {', '.join(diff)}; resume it with the same command "
                "or pick another --out folder"
            )
    elif pred_path.exists() and pred_path.stat().st_size:
        raise MvlsibError(f"{pred_path} exists without {cfg_path.name}; pick another --out folder")

    all_items, images = build_items(opts, pairs, languages)
    items = select(all_items, opts.shard)
    done = {record_key(r) for r in read_predictions(pred_path, repair=True)}
    wanted = {(it.task, it.k, it.language, it.instance_id) for it in items}
    stray = done - wanted
    if stray:
        raise MvlsibError(f"{pred_path} has {len(stray)} predictions that are not part of this run, e.g. {min(stray)}")
    pending = [it for it in items if (it.task, it.k, it.language, it.instance_id) not in done]

    config = {
        "fingerprint": fp,
        "shard": str(opts.shard) if opts.shard else None,
        "n_expected": len(items),
        "parse_mode": opts.parse_mode,
        "groups": opts.groups,
        "versions": _versions(),
        "command": [os.path.basename(sys.argv[0])] + sys.argv[1:],
    }
    if not cfg_path.exists():
        _write_json(cfg_path, {**config, "backend": None, "complete": False})

    backend_info = None
    if pending:
        factory = backend_factory or make_backend
        options = dict(opts.backend_options)
        options.setdefault("max_new_tokens", opts.max_new_tokens)
        if opts.backend == "hf":
            options.setdefault("dtype", opts.dtype)
            options.setdefault("revision", opts.model_revision)
        backend = factory(opts.backend, model=opts.model, **options)
        try:
            needed = {i for it in pending for i in it.request.image_ids}
            backend.set_images({i: images[i] for i in sorted(needed)})
            backend_info = backend.describe()
            _process(backend, pending, pred_path, opts.parse_mode, opts.progress)
        finally:
            backend.close()
    records = read_predictions(pred_path)
    complete = len(records) == len(items)
    old_cfg = json.loads(cfg_path.read_text(encoding="utf-8")) if cfg_path.exists() else {}
    config["backend"] = backend_info or old_cfg.get("backend")
    config["complete"] = complete
    summary = {
        "out": str(out),
        "predictions_file": str(pred_path),
        "n_expected": len(items),
        "n_done_before": len(done),
        "n_new": len(records) - len(done),
        "complete": complete,
        "shard": str(opts.shard) if opts.shard else None,
    }
    if opts.shard is None and complete:
        _sort_predictions(pred_path, records)
        summary["metrics"] = finalize(out, config, records)
    else:
        _write_json(cfg_path, config)
    return summary


def _sort_predictions(path: Path, records: list[dict]) -> None:
    """Rewrite a complete run's predictions in canonical order (deterministic file, atomic)."""
    from .store import dump_line, iter_sorted

    lines = [dump_line(r) for r in iter_sorted(records)]
    if path.read_text(encoding="utf-8") != "".join(lines):
        with atomic_open(path) as fh:
            fh.writelines(lines)


def _process(backend: Backend, pending: list[WorkItem], pred_path: Path, mode: str, progress: bool) -> None:
    from tqdm import tqdm

    chunk = max(1, int(getattr(backend, "preferred_chunk", 32)))
    with PredictionWriter(pred_path) as writer, tqdm(
        total=len(pending), desc="mvlsib-eval", unit="prompt", disable=not progress, file=sys.stderr
    ) as bar:
        for start in range(0, len(pending), chunk):
            part = pending[start : start + chunk]
            responses = backend.generate([it.request for it in part])
            if len(responses) != len(part):
                raise MvlsibError(
                    f"backend {backend.name} returned {len(responses)} responses for {len(part)} requests"
                )
            records = []
            for it, response in zip(part, responses):
                letter = parse_letter(response, mode)
                records.append(
                    {
                        "task": it.task,
                        "k": it.k,
                        "language": it.language,
                        "instance_id": it.instance_id,
                        "prompt_sha256": _prompt_sha(it.request),
                        "image_ids": list(it.request.image_ids),
                        "response": response,
                        "letter": letter,
                        "label": it.label,
                        "correct": letter == LETTERS[it.label],
                    }
                )
            writer.write_many(records)
            bar.update(len(part))


def _prompt_sha(request: Request) -> str:
    payload = json.dumps(list(request.messages), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def load_run(run: str | Path) -> tuple[dict, list[dict], dict]:
    """(config, predictions, metrics) of a finished run folder."""
    run = Path(run)
    pred = run / "predictions.jsonl"
    cfg = run / "config.json"
    if not pred.is_file() or not cfg.is_file():
        raise MvlsibError(
            f"{run}: not a finished run folder (needs predictions.jsonl and config.json; "
            "for a sharded run, `mvlsib-eval merge` it first)"
        )
    config = json.loads(cfg.read_text(encoding="utf-8"))
    metrics_path = run / "metrics.json"
    metrics = json.loads(metrics_path.read_text(encoding="utf-8")) if metrics_path.is_file() else {}
    return config, read_predictions(pred), metrics


def rescore(run: str | Path, mode: str = "relaxed", groups: Mapping[str, Mapping[str, str]] | None = None) -> dict:
    config, records, _ = load_run(run)
    return compute_metrics(records, mode, groups or config.get("groups") or {})
