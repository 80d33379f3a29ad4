"""``mvlsib-eval run``: examples -> prompts -> backend -> predictions.jsonl -> metrics.json.

Resumable: the keys already in the run's predictions file are skipped, so rerunning
the same command after a crash (or ``kill -9``) finishes the remaining work, and a
complete run reruns in seconds without loading the model. A run folder remembers
its fingerprint (data, model, prompts, tasks, ...) in config.json and refuses to be
resumed by a different command.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _compat
from .._compat import CROSS_MODAL, K_VALUES, LEDGER, TASK_BY_NAME, TASK_TABLE, TASKS, MvlsibError, atomic_open
from .._compat import progress as _progress
from ..backends import BACKENDS, Backend, Request, backend_class, make_backend
from .parsing import LETTERS, parse_letter
from .prompts import TEMPLATE_VERSION, prompt_for_example, prompts_hash
from .run_files import read_config, read_release_manifest, release_manifest_sha256
from .schedule import MAX_PROMPTS, order_items
from .shards import Shard
from .store import (
    PredictionWriter,
    _write_json,
    claim_run_folder,
    dump_line,
    finalize,
    iter_sorted,
    read_predictions,
    record_key,
    refuse_duplicates,
    run_lock,
)
from .subset import select_rows


@dataclass
class RunOptions:
    data: str
    model: str
    out: Path
    tasks: tuple[str, ...] = TASKS
    ks: tuple[int, ...] = (1, 3, 5)
    languages: tuple[str, ...] | str = "all"
    backend: str = BACKENDS[0]
    limit: int | None = None
    limit_mode: str = "stratified"
    shard: Shard | None = None
    parse_mode: str = "relaxed"
    data_revision: str | None = None
    max_new_tokens: int = 8
    #: the backend's own options (constructor keywords, ``backends.options_for``)
    backend_options: dict[str, Any] = field(default_factory=dict)
    groups: dict[str, dict[str, str]] = field(default_factory=dict)
    progress: bool = True
    #: processing order of pending requests (schedule.ORDERS); never changes a result
    order: str = "prefix"
    #: prompts held in memory at once (about 3.2 KB each); a larger run is processed in waves
    max_prompts: int = MAX_PROMPTS


@dataclass(frozen=True)
class WorkItem:
    task: str
    k: int
    language: str
    instance_id: str
    label: int
    request: Request


def prediction_key(task: str, k: int, language: str, instance_id: str) -> str:
    """A prompt's key as one string: its request's key, and its custom_id in batch files."""
    return f"{task}|k{k}|{language}|{instance_id}"


def _versions() -> dict[str, str | None]:
    out = _compat.library_versions(("torch", "transformers", "datasets", "pyarrow", "pillow", "huggingface-hub"))
    return {"python": out.pop("python"), "mvlsib-build": _compat.TOOLKIT_VERSION, **out}


def resolve_tasks_ks(tasks, ks) -> list[tuple[str, int]]:
    """(task, k) pairs in the task table's order, each task with the asked k it has."""
    loader = _compat.LOADER
    names = []
    for t in tasks:
        try:
            name = loader.normalize_task(t)
        except ValueError as exc:
            raise MvlsibError(str(exc)) from None
        if name not in names:
            names.append(name)
    for k in ks:
        if int(k) not in K_VALUES:
            raise MvlsibError(
                f"--k values must be in {min(K_VALUES)}..{max(K_VALUES)} "
                f"(each instance has {max(K_VALUES)} references), got {k}"
            )
    pairs = []
    for spec in TASK_TABLE:
        if spec.name not in names:
            continue
        # A task with fewer references (t2s: the topic) runs only the k it has.
        ks_here = [k for k in sorted(set(int(k) for k in ks)) if k in spec.k_values] or [spec.k_values[0]]
        for k in ks_here:
            pairs.append((spec.name, k))
    return pairs


def resolve_languages(data: str, languages, revision: str | None = None) -> list[str]:
    loader = _compat.LOADER
    if languages == "all" or languages == ("all",):
        # a local folder's data/ or, for a Hub repo id, the configs its card lists
        try:  # _release_errors: a LoaderError or a bad Hub answer is one message already
            with _release_errors(data):
                found = loader.languages(data, revision) if not Path(data).is_dir() else loader.languages(data)
        except (FileNotFoundError, ConnectionError) as exc:  # no such repo, no network
            raise MvlsibError(f"--release {data}: cannot list its languages ({exc})") from None
        if not found:
            where = "no language configs under data/" if Path(data).is_dir() else "no language configs in its card"
            raise MvlsibError(f"{data}: {where}; is this an MVL-SIB release?")
        return found
    return sorted(dict.fromkeys(languages))


@contextlib.contextmanager
def _release_errors(data: str):
    """A LoaderError (a bad language, a broken release) or a bad Hub answer (hubio) as one line naming the release."""
    try:
        with _compat.hubio.session_for(data, "--release"):  # a Hub repo id: requests bounded, answers checked
            yield
    except ValueError as exc:
        if isinstance(exc, (MvlsibError, _compat.hubio.HubProblem)):  # one line naming the release already
            raise
        raise MvlsibError(_compat.hubio.one_line(f"{data}: {exc}", 4000)) from None


@dataclass
class RunPlan:
    """What a run (or one shard of it) has to do, with prompts built only for that."""

    pending: list[WorkItem]  # this shard's items not yet in its predictions file, canonical order
    images: dict[str, Any]
    n_shard: int  # items of this shard (all of the run without --shard), done or not
    n_run: int  # items of the whole run, every shard
    done_seen: set[tuple] = field(default_factory=set)  # keys of `done` that are items of this shard
    wrong_gold: list[tuple] = field(default_factory=list)  # keys of `done` whose recorded label is not the release's
    waves: int = 1  # > 1: over max_prompts, so no prompt was built (plan each wave on its own)


def plan_items(  # noqa: PLR0913 - keyword-only planning options; the redesign makes them a value
    opts: RunOptions,
    pairs,
    languages,
    *,
    shard: Shard | None = None,
    done: set[tuple] | dict[tuple, int] | None = None,
    before_prompts: Callable[[], None] | None = None,
    wave: Shard | None = None,
    prompts: bool = True,
    max_prompts: int | None = None,
) -> RunPlan:
    """The run's items in canonical order (language, task, k, row), dealt to ``shard`` and without
    the keys in ``done``; only those items get a prompt (of them only ``wave``'s, dealt round robin
    over the shard's own order; none with ``prompts=False``: counts and ``done_seen`` only).

    A prompt holds its texts (about 3.2 KB): building every prompt of the full benchmark before
    dealing shards or skipping done keys needed ~23 GB. Examples are built a language at a time
    and dropped, so memory follows the prompts this process will send, and ``--shard i/N`` divides it.

    ``before_prompts`` runs once the images are read and before any prompt is built (the
    backend's preflight: a release's own problems are said first, a wrong model before minutes
    of prompt building).

    ``max_prompts``: when the shard's items would be more (estimated from the first language's
    rows: a release has the same instances in every language), no prompt is built and
    ``waves`` says in how many waves to plan it."""
    loader = _compat.LOADER
    # Counting (prompts=False) needs the rows only: the image table is read for prompts.
    need_images = prompts and any(t in CROSS_MODAL for t, _ in pairs)
    with _release_errors(opts.data):
        images = loader.load_images(opts.data, opts.data_revision) if need_images else {}
    if before_prompts is not None:  # outside the loader's error translation: not the release's fault
        before_prompts()
    done = done or set()
    plan = RunPlan(pending=[], images=images, n_shard=0, n_run=0)
    # Only counting draws a bar here: a run's own bar counts the prompts it sends.
    counting = _progress.bar(languages, desc="plan", unit="language", enabled=opts.progress and not prompts)
    with _release_errors(opts.data), counting as by_language:
        for language in by_language:
            rows = loader.load_rows(language, opts.data, opts.data_revision)
            rows = select_rows(rows, opts.limit, opts.limit_mode)
            if max_prompts is not None and language == languages[0]:
                estimate = len(rows) * len(pairs) * len(languages)
                estimate = -(-estimate // shard.count) if shard is not None else estimate
                plan.waves = max(1, -(-estimate // max_prompts))
                prompts = prompts and plan.waves == 1
            for task, k in pairs:
                chosen = []  # the rows of this (task, k) that get a prompt here
                for row in rows:
                    position, plan.n_run = plan.n_run, plan.n_run + 1
                    if shard is not None and not shard.deals(position):
                        continue
                    in_shard, plan.n_shard = plan.n_shard, plan.n_shard + 1
                    key = (task, k, language, row["instance_id"])
                    if key in done:
                        plan.done_seen.add(key)
                        if isinstance(done, dict) and done[key] != row[TASK_BY_NAME[task].label]:
                            plan.wrong_gold.append(key)
                    elif prompts and (wave is None or wave.deals(in_shard)):
                        chosen.append(row)
                if not chosen:
                    continue
                # Examples (and the loader's checks of their rows) only where a prompt is built; the
                # runner builds its own prompts (prompt_for_example): the loader need not render text.
                for ex in loader.build_examples(
                    chosen, images if task in CROSS_MODAL else None, task, k, with_prompt=False
                ):
                    prompt = prompt_for_example(ex)
                    request = Request(
                        key=prediction_key(task, k, language, ex["instance_id"]),
                        messages=tuple(prompt.messages()),
                        image_ids=prompt.image_ids,
                    )
                    plan.pending.append(WorkItem(task, k, language, ex["instance_id"], int(ex["label"]), request))
    return plan


def build_items(
    opts: RunOptions, pairs, languages, before_prompts: Callable[[], None] | None = None
) -> tuple[list[WorkItem], dict[str, Any]]:
    """All work items of the run in canonical order (each with its prompt), and the images they need."""
    plan = plan_items(opts, pairs, languages, before_prompts=before_prompts)
    return plan.pending, plan.images


def verify_data(data: str) -> None:
    """Refuse a local release whose files do not match its manifest.json, before any model call."""
    if not Path(data).is_dir():
        return
    read_release_manifest(Path(data) / "manifest.json")  # through the reader layer, with its schema
    check = getattr(_compat.LOADER, "manifest_problems", None)  # absent from older releases' loaders
    problems = check(data) if check else []
    if problems:
        raise MvlsibError(
            f"{data}: the release does not match its manifest.json, so scores would not be comparable:",
            items=problems,
            hint="Re-download the release (or rebuild it into a new folder).",
        )


def fingerprint(opts: RunOptions, pairs, languages) -> dict[str, Any]:
    """What must be equal for two runs (or shards) to be parts of one evaluation."""
    return {
        "data": str(Path(opts.data).resolve()) if Path(opts.data).is_dir() else opts.data,
        "data_revision": opts.data_revision,
        "release_manifest_sha256": release_manifest_sha256(opts.data),
        "backend": opts.backend,
        "model": opts.model,
        "max_new_tokens": opts.max_new_tokens,
        "tasks": [[t, k] for t, k in pairs],
        "languages": list(languages),
        "limit": opts.limit,
        "prompts_sha256": prompts_hash(),
        "prompt_template_version": TEMPLATE_VERSION,
        "shard_count": opts.shard.count if opts.shard else 1,
        # the backend's options that change what the model sees (model revision, dtype, templates)
        **backend_class(opts.backend).fingerprint(opts.backend_options),
        # Only limited runs name their subset rule, so full runs made before the rule existed still resume.
        **({"limit_mode": opts.limit_mode} if opts.limit is not None else {}),
    }


@dataclass(frozen=True)
class Run:
    """A run resolved once from its options: the (task, k) pairs, the languages and what follows.

    ``mvlsib-eval run``, ``batch prepare``, ``batch collect`` and ``plan`` all start here, so the
    selection, the fingerprint and the prompt plan are the same thing for each of them."""

    opts: RunOptions
    pairs: tuple[tuple[str, int], ...]
    languages: tuple[str, ...]

    @classmethod
    def resolve(cls, opts: RunOptions) -> Run:
        verify_data(opts.data)  # every command that resolves a run (run, plan, batch prepare and collect)
        pairs = tuple(resolve_tasks_ks(opts.tasks, opts.ks))
        return cls(opts, pairs, tuple(resolve_languages(opts.data, opts.languages, opts.data_revision)))

    @functools.cached_property
    def fingerprint(self) -> dict[str, Any]:
        """What must be equal for two runs (or shards, or a batch and its collection) to be one evaluation."""
        return fingerprint(self.opts, self.pairs, self.languages)

    def plan(self, **kwargs: Any) -> RunPlan:
        """``plan_items`` of this run (``shard``, ``done``, ``wave``, ``prompts``, ... as there)."""
        return plan_items(self.opts, self.pairs, self.languages, **kwargs)


def _paths(out: Path, shard: Shard | None) -> tuple[Path, Path]:
    suffix = shard.suffix if shard else ""
    return out / f"predictions{suffix}.jsonl", out / f"config{suffix}.json"


def run_eval(opts: RunOptions, backend_factory: Callable[..., Backend] | None = None) -> dict[str, Any]:
    """Run (or resume) an evaluation; returns a summary dict."""
    out = Path(opts.out)
    if opts.max_new_tokens < 1:
        raise MvlsibError(f"--max-new-tokens must be at least 1 (the answer is a letter), got {opts.max_new_tokens}")
    if opts.max_prompts < 1:
        raise MvlsibError(f"--max-prompts must be at least 1, got {opts.max_prompts}")
    if out.exists() and not out.is_dir():
        raise MvlsibError(f"--out {out}: exists and is not a folder")
    if backend_factory is None:  # a given factory (the batch route's results, tests) brings its own backend
        backend_class(opts.backend).check_options(opts.backend_options)
    run = Run.resolve(opts)
    run.fingerprint  # noqa: B018 - computed before the lock: a release that cannot be hashed is said first
    pred_path, cfg_path = _paths(out, opts.shard)
    claim_run_folder(out, run.fingerprint, pred_path, cfg_path)  # before the lock file: a refusal leaves nothing
    # One writer per predictions file for the whole run: the fingerprint check, the appends and
    # the final config must not interleave with another process's (two runs on one --out).
    created = not out.exists()
    lock_name = f".run{opts.shard.suffix if opts.shard else ''}.lock"
    try:
        with run_lock(out, lock_name):
            return _run_locked(run, backend_factory, out, pred_path, cfg_path)
    except BaseException:
        if created:  # a run that failed before its first prediction leaves no folder behind
            _discard_if_empty(out, {lock_name, pred_path.name, cfg_path.name, LEDGER})
        raise


def _discard_if_empty(folder: Path, ours: set[str]) -> None:
    """Remove a run folder this run created, if it holds only its own files and no prediction."""
    try:
        files = [p for p in folder.iterdir()]
        if {p.name for p in files} <= ours and not any(
            p.name.startswith("predictions") and p.stat().st_size for p in files
        ):
            for p in files:
                p.unlink()
            folder.rmdir()
    except OSError:
        pass


def _backend_kwargs(opts: RunOptions) -> dict[str, Any]:
    return {"max_new_tokens": opts.max_new_tokens, **opts.backend_options}


def _done_keys(pred_path: Path) -> dict[tuple, int]:
    """The keys already in the predictions file, with the gold label each recorded (a torn last line
    repaired, duplicates refused)."""
    before = read_predictions(pred_path, repair=True)
    refuse_duplicates(pred_path, before)
    # the keys and labels are enough until the end; the records (responses and all) are read again then
    return {record_key(r): int(r["label"]) for r in before}


def _run_locked(
    run: Run, backend_factory: Callable[..., Backend] | None, out: Path, pred_path: Path, cfg_path: Path
) -> dict[str, Any]:
    opts = run.opts
    claim_run_folder(out, run.fingerprint, pred_path, cfg_path)
    verify_data(opts.data)
    # A stand-in factory (tests) has no class to ask; the real one's backend checks its model early.
    preflight = (
        None
        if backend_factory is not None
        else functools.partial(backend_class(opts.backend).preflight, opts.model, **_backend_kwargs(opts))
    )
    done = _done_keys(pred_path)
    # Shard selection and resume work on the canonical order, before any prompt is built; only
    # what is left is reordered. A run with more prompts than --max-prompts goes in waves (round
    # robin over the shard's order): a first pass counts and checks the keys without prompts.
    plan = run.plan(shard=opts.shard, done=done, before_prompts=preflight, max_prompts=opts.max_prompts)
    stray = set(done) - plan.done_seen
    if stray:
        raise MvlsibError(f"{pred_path} has {len(stray)} predictions that are not part of this run, e.g. {min(stray)}")
    if plan.wrong_gold:  # kept, they would be scored against answers the release does not give
        raise MvlsibError(
            f"{pred_path} has {len(plan.wrong_gold)} predictions whose gold label is not the release's, e.g. "
            f"{min(plan.wrong_gold)}; the file was edited or made on another release: move it away and run again"
        )
    config = {
        "fingerprint": run.fingerprint,
        "shard": str(opts.shard) if opts.shard else None,
        "n_expected": plan.n_shard,
        "n_expected_run": plan.n_run,
        "parse_mode": opts.parse_mode,
        "groups": opts.groups,
        "versions": _versions(),
        "command": _compat.httpio.public_argv(sys.argv),
    }
    backend_info = None
    if plan.n_shard - len(plan.done_seen):
        backend_info = _run_pending(
            run, backend_factory, plan, done=done, config=config, pred_path=pred_path, cfg_path=cfg_path
        )
    return _conclude(opts, out, plan, done, config, backend_info, pred_path, cfg_path)


def _run_pending(
    run: Run,
    backend_factory: Callable[..., Backend] | None,
    plan: RunPlan,
    *,
    done: dict[tuple, int],
    config: dict[str, Any],
    pred_path: Path,
    cfg_path: Path,
) -> dict[str, Any]:
    """Build the backend and answer every pending item, wave by wave; returns the backend's description."""
    opts = run.opts
    factory = backend_factory or make_backend
    backend = factory(opts.backend, model=opts.model, **_backend_kwargs(opts))
    # Written once the model is there: a model that does not load leaves no run folder behind.
    if not cfg_path.exists():
        _write_json(cfg_path, {**config, "backend": None, "complete": False})
    images, waves = plan.images, plan.waves
    try:
        for wave in range(waves):
            part = plan if waves == 1 else run.plan(shard=opts.shard, done=done, wave=Shard(wave, waves))
            pending = order_items(part.pending, opts.order)
            part.pending = []  # the ordered list is the one copy
            if not pending:
                continue
            needed = {i for it in pending for i in it.request.image_ids}
            backend.set_images({i: images[i] for i in sorted(needed)})
            label = f"mvlsib-eval (wave {wave + 1}/{waves})" if waves > 1 else "mvlsib-eval"
            _process(backend, pending, pred_path, opts.parse_mode, opts.progress, label=label)
            del pending
        # After the work: the description includes what the backend decided on the way
        # (the chat template's rendering mode, the effective generation settings).
        return backend.describe()
    finally:
        backend.close()


def _conclude(  # noqa: PLR0917 - the run's state passed loose, as _run_locked
    opts, out, plan, done, config, backend_info, pred_path, cfg_path
) -> dict[str, Any]:
    """The run's config (and, complete and unsharded, its sorted predictions and metrics); the summary."""
    records = read_predictions(pred_path)
    complete = len(records) == plan.n_shard
    old_cfg = read_config(cfg_path) if cfg_path.exists() else {}
    config["backend"] = backend_info or old_cfg.get("backend")
    config["complete"] = complete
    summary = {
        "out": str(out),
        "predictions_file": str(pred_path),
        "n_expected": plan.n_shard,
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
    lines = [dump_line(r) for r in iter_sorted(records)]
    if path.read_text(encoding="utf-8") != "".join(lines):
        with atomic_open(path) as fh:
            fh.writelines(lines)


def _process(
    backend: Backend, pending: list[WorkItem], pred_path: Path, mode: str, progress: bool, *, label: str = "mvlsib-eval"
) -> None:
    chunk = max(1, int(getattr(backend, "preferred_chunk", 32)))
    with (
        PredictionWriter(pred_path) as writer,
        _progress.bar(total=len(pending), desc=label, unit="prompt", enabled=progress) as bar,
    ):
        for start in range(0, len(pending), chunk):
            part = pending[start : start + chunk]
            responses = backend.generate([it.request for it in part])
            if len(responses) != len(part):
                raise MvlsibError(
                    f"backend {backend.name} returned {len(responses)} responses for {len(part)} requests"
                )
            # A backend without an answer for a request (the batch route's missing or failed ids)
            # gives None: the request stays pending, as after a crash.
            records = [_record(it, r, mode) for it, r in zip(part, responses) if r is not None]
            writer.write_many(records)
            bar.update(len(part))


def _record(it: WorkItem, response: str, mode: str) -> dict[str, Any]:
    letter = parse_letter(response, mode)
    return {
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


def _prompt_sha(request: Request) -> str:
    payload = json.dumps(list(request.messages), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
