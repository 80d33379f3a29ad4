"""``batch collect``: result files of a prepared batch -> a normal run folder.

Result lines are in the OpenAI batch output format, which ``vllm run-batch`` writes too
(vllm/entrypoints/openai/batch/protocol.py, ``BatchRequestOutput``): ``id``, ``custom_id``,
``response`` = ``{status_code, request_id, body}`` and ``error``. Each line is read through
``readers`` (kind ``batch_result_line``: size, depth, number length, its schema); a wrong line is
named by file and line and nothing is written.

The answers go through the runner itself (``run_eval`` with a backend that answers from the
result files), so the run folder is what ``run --backend openai`` writes for the same answers:
the same fingerprint, the same records, the same resume and merge. A prompt with no usable
answer (missing, failed, or given twice with different answers) stays pending in the run, is
reported by name and is written to ``DIR/retry/`` as a new request file (the original lines,
byte for byte); collecting the retry's results into the same run folder completes it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import _compat
from .._compat import MvlsibError, fresh_stage, httpio, readers
from ..backends import Backend, Request
from ..backends.openai import Malformed, answer_text, check_answer, check_body_options, settings_description
from ..run.runner import Run, prediction_key, run_eval
from ..run.store import read_predictions, record_key
from .prepare import (
    IMAGES_DIR,
    MANIFEST,
    RETRY_DIR,
    RETRY_INDEX,
    FileSplitter,
    body_digest,
    foreign_files,
    options_from,
    request_bodies,
)
from .prepare import write_json as _write_json

# A chat completion with a long reasoning trace is tens of KB; a line over this is not an answer.
MAX_LINE_BYTES = readers.KINDS["batch_result_line"].max_bytes


@dataclass
class Results:
    """What the result files say, per custom_id."""

    answers: dict[str, str] = field(default_factory=dict)  # custom_id -> response text
    failed: dict[str, str] = field(default_factory=dict)  # custom_id -> why (no usable answer in any line)
    duplicated: dict[str, str] = field(default_factory=dict)  # custom_id -> what the lines said
    seen: set[str] = field(default_factory=set)


def read_manifest(folder: Path) -> dict[str, Any]:
    """The batch's ``manifest.json``, checked whole against its schema before anything is written."""
    path = Path(folder) / MANIFEST
    if not path.is_file() and not path.is_symlink():
        raise MvlsibError(f"{folder}: no {MANIFEST}; give the folder `mvlsib-eval batch prepare` wrote")
    return readers.read_json("batch_manifest", path)


def _one_line(obj: dict[str, Any], max_new_tokens: int) -> tuple[str, str | None, str | None]:
    """(custom_id, answer text or None, why it failed or None) of one result line its schema accepted;
    why it failed is the server's text, credentials masked (it is written to retry.json and shown)."""
    custom_id, answer, why = _read_line(obj, max_new_tokens)
    return custom_id, answer, None if why is None else httpio.redact(why)


def _read_line(obj: dict[str, Any], max_new_tokens: int) -> tuple[str, str | None, str | None]:
    custom_id, response, error = obj["custom_id"], obj.get("response"), obj.get("error")
    if error is not None:
        detail = error.get("message") or error.get("code") if isinstance(error, dict) else error
        return custom_id, None, f"error: {str(detail)[:200]}"
    assert isinstance(response, dict)
    status, body = response["status_code"], response.get("body")
    if status != 200:
        message = body.get("error", body) if isinstance(body, dict) else body
        if isinstance(message, dict):
            message = message.get("message", message)
        return custom_id, None, f"HTTP {status}: {str(message)[:200]}"
    if not isinstance(body, dict):
        return custom_id, None, "HTTP 200 without a JSON object body"
    try:
        check_answer(body)
        return custom_id, answer_text(body, custom_id, max_new_tokens), None
    except (Malformed, MvlsibError) as exc:
        return custom_id, None, str(exc)[:300]


def read_results(paths: Iterable[Path], max_new_tokens: int) -> Results:
    """Every result line of ``paths``; a custom_id answered in one line and failed in another counts as answered."""
    found: dict[str, list[tuple[str | None, str | None, str]]] = {}
    for path in paths:
        for lineno, _, obj in readers.json_lines("batch_result_line", path):
            custom_id, text, why = _one_line(obj, max_new_tokens)
            found.setdefault(custom_id, []).append((text, why, f"{path}, line {lineno}"))
    results = Results(seen=set(found))
    for custom_id, lines in found.items():
        answers = [text for text, _, _ in lines if text is not None]
        if len(answers) > 1:
            places = ", ".join(where for _, _, where in lines)
            if len(set(answers)) > 1:
                results.duplicated[custom_id] = f"different answers in {places}: not used"
                results.failed[custom_id] = "answered twice, differently"
                continue
            results.duplicated[custom_id] = f"the same answer in {places}: used once"
        if answers:
            results.answers[custom_id] = answers[0]
        else:
            results.failed[custom_id] = "; ".join(f"{why} ({where})" for _, why, where in lines)
    return results


class ResultsBackend(Backend):
    """The ``openai`` backend's answers, taken from batch result files instead of a server.

    ``generate`` gives ``None`` for a prompt without a usable answer: the runner leaves it pending."""

    name = "openai"

    def __init__(self, results: Results, description: dict[str, Any]) -> None:
        self.results = results
        self.description = description
        self.asked: set[str] = set()

    def generate(self, requests: list[Request]) -> list[str | None]:
        self.asked.update(r.key for r in requests)
        return [self.results.answers.get(r.key) for r in requests]

    def describe(self) -> dict[str, Any]:
        return dict(self.description)


def collect(
    folder: Path,
    result_files: list[Path],
    out: Path,
    *,
    parse_mode: str = "relaxed",
    groups: dict | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Collect ``result_files`` of the batch in ``folder`` into the run folder ``out``; returns a summary."""
    folder, out = Path(folder), Path(out)
    manifest = read_manifest(folder)
    refuse_retry_clash(folder)
    refuse_edited_requests(folder, manifest)
    opts = options_from(
        manifest["run"],
        out,
        where=str(folder / MANIFEST),
        parse_mode=parse_mode,
        groups=groups or {},
        progress=progress,
    )
    run = Run.resolve(opts)
    fp = run.fingerprint
    if fp != manifest["fingerprint"]:
        diff = sorted(k for k in set(fp) | set(manifest["fingerprint"]) if fp.get(k) != manifest["fingerprint"].get(k))
        raise MvlsibError(
            f"{folder / MANIFEST}: the batch was prepared for a different {', '.join(diff)} than the release "
            "and settings found now; collect against the release it was prepared from"
        )
    refuse_other_requests(folder, manifest, run)
    results = read_results(result_files, opts.max_new_tokens)
    options = dict(opts.backend_options)
    description = {
        **settings_description(
            opts.model,
            options.get("request_style", "chat"),
            options.get("chat_template_kwargs"),
            opts.max_new_tokens,
            options.get("image_encoding") or "source",
        ),
        "route": "batch",
        "batch_manifest_sha256": hashlib.sha256((folder / MANIFEST).read_bytes()).hexdigest(),
    }
    backend = ResultsBackend(results, description)
    summary = run_eval(opts, backend_factory=lambda *_, **__: backend)
    done = {prediction_key(*record_key(r)) for r in read_predictions(summary["predictions_file"])}
    unanswered = sorted(backend.asked - set(results.answers))
    report = {
        "missing": sorted(k for k in unanswered if k not in results.seen),
        "failed": {k: results.failed[k] for k in unanswered if k in results.failed},
        "duplicated": dict(sorted(results.duplicated.items())),
        "foreign": sorted(results.seen - backend.asked - done),
    }
    summary["report"] = report
    summary["retry"] = _write_retry(folder, manifest, unanswered, report)
    return summary


# The names collect writes in retry/ (FileSplitter's request files and the retry folder's index).
_RETRY_NAMES = re.compile(rf"{RETRY_DIR}/({re.escape(RETRY_INDEX)}|requests-[0-9]+\.jsonl)")


def refuse_retry_clash(folder: Path) -> None:
    """Refuse, before any work, when retry/ holds a file of the user's where collect writes its own."""
    clash = [rel for rel in foreign_files(folder, RETRY_DIR) if _RETRY_NAMES.fullmatch(rel)]
    if clash:
        raise MvlsibError(
            f"{folder / RETRY_DIR}: {', '.join(clash[:5])} was not written by batch collect or was edited since; "
            "collect writes the retry's request files there and never replaces yours: move them out first"
        )


def refuse_edited_requests(folder: Path, manifest: dict) -> None:
    """Refuse, before anything is written, a batch whose request files or images are not the bytes
    prepare wrote: results answer the requests as they were sent, and the run records the release's
    prompts as the ones asked."""
    edited = [
        entry["name"]
        for entry in manifest["files"]
        if not (folder / entry["name"]).is_file() or _compat.sha256_file(folder / entry["name"]) != entry["sha256"]
    ]
    edited += foreign_files(folder, IMAGES_DIR)
    if edited:
        raise MvlsibError(
            f"{folder}: {', '.join(edited[:5])}{' ...' if len(edited) > 5 else ''} changed since batch prepare wrote "
            "it (sha256 differs); the results would be recorded as answers to prompts that were not sent: prepare "
            "the batch again"
        )


def refuse_other_requests(folder: Path, manifest: dict, run: Run) -> None:
    """Refuse, before anything is written, request files that are not the requests of the manifest's
    run: each body is rebuilt from the release (as prepare built it) and compared, image URLs aside
    (``body_digest``). A request edited by hand (another model, another question) with the manifest's
    hashes updated would otherwise be recorded as the answer to the benchmark's prompt."""
    sent: dict[str, str] = {}
    for entry in manifest["files"]:
        path = folder / entry["name"]
        for n, _raw, obj in readers.json_lines("batch_request_line", path):
            if not isinstance(obj, dict) or not isinstance(obj.get("custom_id"), str):
                raise MvlsibError(f"{path}, line {n}: not a request line batch prepare writes; prepare the batch again")
            sent[obj["custom_id"]] = body_digest(obj.get("body"))
    options = dict(run.opts.backend_options)
    body_options = check_body_options(
        run.opts.max_new_tokens, options.get("request_style", "chat"), options.get("chat_template_kwargs")
    )
    plan = run.plan(max_prompts=run.opts.max_prompts)
    expected = 0
    for key, body in request_bodies(run, plan, body_options, lambda _image_id: ""):
        expected += 1
        if sent.get(key) != body_digest(body):
            said = "is in none of the request files" if key not in sent else "is not the request the run sends"
            raise MvlsibError(
                f"{folder}: {key} {said} (another model, prompt or option than {MANIFEST}'s run gives); the "
                "results would be recorded as answers to prompts that were not sent: prepare the batch again"
            )
    if expected != len(sent):
        raise MvlsibError(
            f"{folder}: the request files hold {len(sent)} requests, the run {expected}; prepare the batch again"
        )


def _write_retry(folder: Path, manifest: dict, keys: list[str], report: dict) -> str | None:
    """The original request lines of ``keys`` as ``folder/retry/requests-*.jsonl`` (or no retry files).

    Only what a previous collect wrote there (and nobody edited) is replaced or removed: results the
    user downloaded into retry/ stay, and so does the folder while it holds them.
    """
    target = folder / RETRY_DIR
    theirs = foreign_files(folder, RETRY_DIR)
    present = _compat.folder_files(target) if target.is_dir() else []
    ours = [target / rel for rel in present if f"{RETRY_DIR}/{rel}" not in theirs]
    if not keys:
        if not theirs:
            shutil.rmtree(target, ignore_errors=True)
        for path in ours:
            path.unlink(missing_ok=True)
        return None
    wanted = set(keys)
    # A hidden stage (``.retry.partial-PID``): a name the user never gives, so nothing of theirs is in the way.
    with _compat.replacing(target), fresh_stage(target) as staging:
        limits = manifest.get("limits") or {}
        splitter = FileSplitter(staging, limits.get("max_requests", 50_000), limits.get("max_bytes", 200_000_000))
        for entry in manifest["files"]:
            _copy_lines(folder / entry["name"], entry.get("sha256"), wanted, splitter)
        splitter.close()
        if wanted:
            raise MvlsibError(
                f"{len(wanted)} prompts to retry are in none of the request files, e.g. {min(wanted)}; "
                "prepare the batch again"
            )
        _write_json(staging / RETRY_INDEX, {"n_requests": len(keys), "files": splitter.files, **report})
        if not theirs:
            shutil.rmtree(target, ignore_errors=True)
            os.replace(staging, target)
        else:  # the user's files stay: ours are swapped one by one, the index last
            for path in ours:
                path.unlink(missing_ok=True)
            for path in sorted(staging.iterdir(), key=lambda p: p.name == RETRY_INDEX):
                os.replace(path, target / path.name)
            staging.rmdir()
    return str(target)


def _copy_lines(path: Path, sha256: str | None, wanted: set[str], splitter: FileSplitter) -> None:
    digest = hashlib.sha256()
    for _n, raw, obj in readers.json_lines("batch_request_line", path):
        digest.update(raw)
        custom_id = obj.get("custom_id") if isinstance(obj, dict) else None
        if isinstance(custom_id, str) and custom_id in wanted:
            splitter.add(raw.decode("utf-8"), custom_id)
            wanted.discard(custom_id)
    if sha256 and digest.hexdigest() != sha256:
        raise MvlsibError(f"{path}: changed since batch prepare wrote it (sha256 differs); prepare the batch again")
