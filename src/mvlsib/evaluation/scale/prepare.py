"""OpenAI-format batch files: a run's prompts as request files for a hosted batch API or ``vllm run-batch``.

``prepare`` writes into a folder one JSON line per prompt, in the OpenAI batch input format:
``custom_id`` (the run's prediction key), ``method`` ``POST``, ``url`` ``/v1/chat/completions`` and
``body``, exactly what the ``openai`` backend sends for that prompt (``backends.openai.chat_body``:
the same messages with images as data URLs, the same decoding settings and chat_template_kwargs).
The prompts are the runner's (``runner.plan_items``, in waves of ``--max-prompts``), in the
runner's processing order. Files are split under the limits of ``FILE_LIMITS`` and listed in
``manifest.json`` with the release's sha256, the run's fingerprint and each file's sha256;
``batch_collect`` reads the result files back into a normal run folder.

Images are inlined as base64 data URLs (``image_refs="inline"``, what hosted APIs take), or written
once each under ``images/`` and referenced as ``file://`` URLs (``image_refs="files"``: for ``vllm
run-batch --allowed-local-media-path OUT/images``; the request files shrink to their text).

The folder is written whole or not at all: everything goes into a staging folder beside it,
renamed into place at the end. A folder holding files this command did not write is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .. import _compat
from .._compat import MvlsibError, jsonio, progress, readers
from ..backends import checked_options
from ..backends.openai import chat_body, check_body_options, encode_image, image_file
from ..run.runner import Run, RunOptions
from ..run.schedule import ORDERS, order_items
from ..run.shards import Shard

FORMAT = "mvlsib-batch/1"
ENDPOINT = "/v1/chat/completions"
MANIFEST = "manifest.json"
RETRY_DIR = "retry"
RETRY_INDEX = "retry.json"  # the retry folder's own list of files, as manifest.json is the batch's
IMAGES_DIR = "images"
IMAGE_REFS = ("inline", "files")
_EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif"}


@dataclass(frozen=True)
class FileLimits:
    route: str
    max_requests: int
    max_bytes: int
    source: str


# The one table of batch input file limits. A file over either is refused by the service.
FILE_LIMITS = (
    FileLimits(
        "openai",
        50_000,
        200_000_000,
        "openai SDK 3.51.0, BatchCreateParams.input_file_id: 'The file can contain up to 50,000 requests, "
        "and can be up to 200 MB in size.' (MB taken as 10^6 bytes, the smaller reading)",
    ),
)
DEFAULT_LIMITS = FILE_LIMITS[0]


def request_line(custom_id: str, body: dict[str, Any]) -> str:
    """One line of a batch input file."""
    line = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT, "body": body}
    return jsonio.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"


def line_custom_id(line: str) -> str:
    """The ``custom_id`` of a line written by ``request_line`` (read without parsing the body)."""
    prefix = '{"custom_id":'
    if not line.startswith(prefix):
        raise ValueError("not a request line written by batch prepare")
    value, _ = json.JSONDecoder().raw_decode(line, len(prefix))
    if not isinstance(value, str):
        raise ValueError("custom_id is not a string")
    return value


class FileSplitter:
    """Writes request lines into ``requests-00001.jsonl``, ``-00002``, ... each within the limits."""

    def __init__(self, folder: Path, max_requests: int, max_bytes: int, stem: str = "requests") -> None:
        self.folder, self.max_requests, self.max_bytes, self.stem = folder, max_requests, max_bytes, stem
        self.files: list[dict[str, Any]] = []
        self._fh: BinaryIO | None = None
        self._sha = hashlib.sha256()
        self._n = self._bytes = 0

    def add(self, line: str, custom_id: str) -> None:
        data = line.encode("utf-8")
        if len(data) > self.max_bytes:
            raise MvlsibError(
                f"{custom_id}: its request line is {len(data):,} bytes, over the {self.max_bytes:,}-byte file "
                "limit; raise --max-bytes (the service's own limit permitting)"
            )
        if self._fh is None or self._n >= self.max_requests or self._bytes + len(data) > self.max_bytes:
            self._roll()
        assert self._fh is not None
        self._fh.write(data)
        self._sha.update(data)
        self._n += 1
        self._bytes += len(data)

    def _roll(self) -> None:
        self.close()
        name = f"{self.stem}-{len(self.files) + 1:05d}.jsonl"
        self._fh = open(self.folder / name, "wb")
        self.files.append({"name": name})

    def close(self) -> None:
        if self._fh is None:
            return
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        self._fh = None
        self.files[-1].update(n_requests=self._n, bytes=self._bytes, sha256=self._sha.hexdigest())
        self._sha = hashlib.sha256()
        self._n = self._bytes = 0


# ---------------------------------------------------------------- the output folder


def _listed_unchanged(folder: Path, index: str, kind: str, prefix: str = "") -> set[str]:
    """``index`` (a manifest.json or retry.json) and the files it lists whose bytes are still the
    ones it recorded: what a previous prepare or collect wrote and nobody edited since."""
    try:
        listed = readers.read_json(kind, folder / index)["files"]
        entries = [(str(f["name"]), str(f["sha256"])) for f in listed]
    except (MvlsibError, KeyError, TypeError):
        return set()
    ours = {prefix + index}
    for name, sha256 in entries:
        if "/" not in name and _sha256(folder / name) == sha256:
            ours.add(prefix + name)
    return ours


def _sha256(path: Path) -> str | None:
    try:
        return _compat.sha256_file(path)
    except OSError:
        return None


def foreign_files(folder: Path, under: str = "") -> list[str]:
    """Files in the batch folder (or its sub-folder ``under``) that neither prepare nor collect wrote, or
    that were edited since: a user's downloaded results, an edited request file. Never replaced or removed."""
    if not folder.is_dir():
        return []
    ours = _listed_unchanged(folder, MANIFEST, "batch_manifest") | _listed_unchanged(
        folder / RETRY_DIR, RETRY_INDEX, "batch_retry_index", f"{RETRY_DIR}/"
    )
    images = folder / IMAGES_DIR
    ours |= {
        f"{IMAGES_DIR}/{name}"
        for name in (_compat.folder_files(images) if images.is_dir() else [])
        # an image file is named by the sha256 of its bytes: unchanged, it is ours
        if "/" not in name and (_sha256(images / name) or "")[:32] == name.split(".")[0]
    }
    present = _compat.folder_files(folder / under) if (folder / under).is_dir() else []
    return sorted(rel for rel in (f"{under}/{p}" if under else p for p in present) if rel not in ours)


def check_out(out: Path) -> None:
    """Refuse an ``--out`` that is a file or holds anything a previous prepare (or collect) did not write."""
    if out.exists() and not out.is_dir():
        raise MvlsibError(f"--out {out}: exists and is not a folder")
    foreign = foreign_files(out)
    if foreign:
        raise MvlsibError(
            f"--out {out}: holds files batch prepare did not write or that were edited since "
            f"({', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''}); prepare replaces the whole "
            "folder, so move them out or give a new folder"
        )


def write_json(path: Path, obj: Any) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(jsonio.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True))
        fh.write("\n")


# ---------------------------------------------------------------- prepare


def run_settings(opts: RunOptions) -> dict[str, Any]:
    """What ``collect`` needs to rebuild the run's ``RunOptions``."""
    return {
        # a folder by its absolute path, as a run's config records it: collect may run from anywhere
        "data": str(Path(opts.data).resolve()) if Path(opts.data).is_dir() else opts.data,
        "data_revision": opts.data_revision,
        "model": opts.model,
        "tasks": list(opts.tasks),
        "ks": list(opts.ks),
        "languages": opts.languages if isinstance(opts.languages, str) else list(opts.languages),
        "limit": opts.limit,
        "limit_mode": opts.limit_mode,
        "order": opts.order,
        "max_new_tokens": opts.max_new_tokens,
        "backend_options": dict(opts.backend_options),
    }


def options_from(settings: dict[str, Any], out: Path, *, where: str = MANIFEST, **extra: Any) -> RunOptions:
    """The ``RunOptions`` of a prepared batch (``run_settings``), for a run folder ``out``; its values held
    to the rules the command line holds them to (``where``: the manifest, named in a refusal)."""
    s = dict(settings)
    s["backend_options"] = checked_options("openai", s.get("backend_options") or {}, f"{where}: run.backend_options")
    if s.get("order") is not None and s["order"] not in ORDERS:
        raise MvlsibError(f"{where}: run.order must be one of {', '.join(ORDERS)}, got {s['order']!r}")
    languages = s.pop("languages")
    return RunOptions(
        out=out,
        backend="openai",
        tasks=tuple(s.pop("tasks")),
        ks=tuple(s.pop("ks")),
        languages=languages if isinstance(languages, str) else tuple(languages),
        **s,
        **extra,
    )


def prepare(
    opts: RunOptions,
    out: Path,
    *,
    max_requests: int = DEFAULT_LIMITS.max_requests,
    max_bytes: int = DEFAULT_LIMITS.max_bytes,
    image_refs: str = "inline",
) -> dict[str, Any]:
    """Write the request files and the manifest of ``opts``'s run into ``out``; returns the manifest.
    ``image_refs``: ``"inline"`` (base64 data URLs) or ``"files"`` (``file://`` URLs of ``out/images/``)."""
    out = Path(out)
    if max_requests < 1 or max_bytes < 1:
        raise MvlsibError(f"--max-requests and --max-bytes must be at least 1, got {max_requests} and {max_bytes}")
    if image_refs not in IMAGE_REFS:
        raise MvlsibError(f"--image-refs must be one of {', '.join(IMAGE_REFS)}, got {image_refs!r}")
    check_out(out)
    options = dict(opts.backend_options)
    body_options = check_body_options(
        opts.max_new_tokens, options.get("request_style", "chat"), options.get("chat_template_kwargs")
    )
    run = Run.resolve(opts)  # the release checked against its manifest.json there
    fp = run.fingerprint
    # Staged beside out and renamed into place; a killed prepare's stage is removed by the next one.
    with _compat.staged_folder(out, check=check_out) as staging:
        splitter = FileSplitter(staging, max_requests, max_bytes)
        # file:// URLs name the folder the staging folder becomes.
        images_dir = (staging / IMAGES_DIR, out.resolve() / IMAGES_DIR) if image_refs == "files" else None
        n = _write_requests(run, splitter, body_options, options.get("image_encoding") or "source", images_dir)
        splitter.close()
        manifest = {
            "format": FORMAT,
            "endpoint": ENDPOINT,
            "toolkit_version": _compat.TOOLKIT_VERSION,
            "release_manifest_sha256": fp["release_manifest_sha256"],
            "n_requests": n,
            "fingerprint": fp,
            "fingerprint_sha256": hashlib.sha256(json.dumps(fp, sort_keys=True).encode("utf-8")).hexdigest(),
            "run": run_settings(opts),
            "limits": {"max_requests": max_requests, "max_bytes": max_bytes},
            "image_refs": image_refs,
            "files": splitter.files,
            "command": _compat.httpio.public_argv(sys.argv),
        }
        write_json(staging / MANIFEST, manifest)
    return manifest


def _write_requests(
    run: Run,
    splitter: FileSplitter,
    body_options: dict[str, Any],
    image_encoding: str,
    images_dir: tuple[Path, Path] | None,
) -> int:
    """Every prompt of the run as a request line, wave by wave, each wave in the run's processing order.
    ``images_dir``: (where to write the images now, where they will be) for ``file://`` references."""
    opts = run.opts
    plan = run.plan(max_prompts=opts.max_prompts)
    images, urls = plan.images, {}

    def data_url(image_id: str) -> str:
        if image_id not in urls:
            try:
                image = images[image_id]
            except KeyError:
                raise MvlsibError(f"image {image_id!r} is not in the image table of this release") from None
            if images_dir is None:
                urls[image_id] = encode_image(image, image_encoding)
            else:
                data, mime = image_file(image, image_encoding)
                # Named by content: an image id need not be a safe file name.
                name = hashlib.sha256(data).hexdigest()[:32] + _EXTENSIONS.get(mime, ".bin")
                images_dir[0].mkdir(exist_ok=True)
                (images_dir[0] / name).write_bytes(data)
                urls[image_id] = (images_dir[1] / name).as_uri()
        return urls[image_id]

    n = 0
    with progress.bar(total=plan.n_run, desc="batch prepare", unit="prompt", enabled=opts.progress) as bar:
        for key, body in request_bodies(run, plan, body_options, data_url, done=bar.update):
            splitter.add(request_line(key, body), key)
            n += 1
    return n


def request_bodies(
    run: Run,
    plan: Any,
    body_options: dict[str, Any],
    data_url: Callable[[str], str],
    *,
    done: Callable[[int], Any] | None = None,
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(custom_id, body) of every prompt of the run, wave by wave, each wave in the run's processing
    order: what prepare writes, and what collect rebuilds to check the request files against."""
    opts = run.opts
    for wave in range(plan.waves):
        part = plan if plan.waves == 1 else run.plan(wave=Shard(wave, plan.waves))
        pending = order_items(part.pending, opts.order)
        part.pending = []
        for item in pending:
            yield item.request.key, chat_body(item.request, opts.model, data_url, **body_options)
        if done is not None:
            done(len(pending))


def body_digest(body: Any) -> str:
    """The sha256 of a request body with its image URLs left out (a data URL is the image's bytes, a
    file URL names where the folder was): the model, the prompt texts and the options it asks with."""
    return hashlib.sha256(json.dumps(_without_image_urls(body), sort_keys=True).encode("utf-8")).hexdigest()


def _without_image_urls(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: ("" if k == "image_url" else _without_image_urls(v)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_without_image_urls(v) for v in obj]
    return obj
