"""MVL-SIB loader: turn a release (local folder or Hub repo id) into task examples.

This file is copied verbatim into every MVL-SIB release, so it must stay
standalone: only the standard library, pyarrow / ``datasets`` and Pillow.

    import mvl_sib
    examples = mvl_sib.load_task("i2s", "eng_Latn", k=3, source=".")

Each example is a dict with

- ``instance_id``, ``language``, ``task``, ``k``, ``label`` (0-3, the correct option)
- ``references``: ``i2s`` k image ids; ``s2i``/``s2t`` k sentence texts (the
  instance's own sentence first); ``t2s`` ``[topic]``
- ``options``: ``i2s``/``t2s`` 4 sentence texts; ``s2i`` 4 image ids; ``s2t`` 4 topic names
- ``images`` / ``image_ids``: every image of the example in prompt order
  (references first, then options) as PIL images / ids; empty for text-only tasks
- ``sentences``: every target-language text of the example in prompt order
  (references first, then options); topic names are not sentences.
- ``prompt``: the prompt text exactly as the reference evaluator sends it, ``<image>``
  where each image of ``images`` goes (in that order). It comes from the release's own
  evaluator package ``mvlsib_evaluate/`` (its ``evaluation/run/prompts.py``), beside this file; without
  that package the key is absent (``with_prompt=True`` makes it an error instead).

From a Hub repo, fetch this file and the evaluator package first, then use it as here::

    import sys
    from huggingface_hub import snapshot_download
    sys.path.insert(0, snapshot_download("ORG/mvl-sib", repo_type="dataset", allow_patterns=["*.py"]))
    import mvl_sib
    ex = mvl_sib.load_task("i2s", "eng_Latn", k=3, source="ORG/mvl-sib")[0]

Images are decoded once per release in a process: ``load_task`` remembers the
decoded images of the last few releases (keyed by source and revision, and for a
folder by the images file's size and modification time), so looping over all
languages decodes each image once, not once per language. The same PIL objects are
shared by all examples (copy one before changing it in place).

A local release folder is read with pyarrow directly (fast, no cache); a Hub
repo id goes through ``datasets.load_dataset(repo, name=..., split="test")``.
"""

from __future__ import annotations

import io
import os
import re
from typing import NamedTuple

__all__ = [
    "Task",
    "TASK_TABLE",
    "TASKS",
    "LANGUAGE_COLUMNS",
    "IMAGE_COLUMNS",
    "TASK_ALIASES",
    "K_VALUES",
    "TOPICS",
    "normalize_task",
    "languages",
    "load_rows",
    "load_images",
    "source_bytes",
    "build_examples",
    "load_task",
]


class Task(NamedTuple):
    """One MVL-SIB task: the single place that says what a task is.

    Everything that knows about tasks (this loader, the evaluator's prompts, runner,
    store, scoring and report, the dataset card, validation) reads this table, so a
    new task is one row here plus its prompt wording.
    """

    name: str
    title: str  # what is matched to what, for tables
    upstream: str  # the name in upstream's loading script (WueNLP/mvl-sib), accepted as an alias
    references: str  # column of a language row holding the references (sliced to k), or "topic"
    options: str  # column holding the 4 options
    label: str  # column holding the correct option's index (0-3)
    k_values: tuple  # the numbers of references the task has
    cross_modal: bool  # shows images (the text-only tasks mirror a cross-modal one)
    mirror: str  # the task with the same options in the other modality (for the text-only vs cross-modal gap)
    question: tuple  # the question, (for k=1, for k>1 with {k})


# Canonical order: runs, reports and predictions files list tasks in this order.
# Tables are laid out as tables, a row per line, not one value per line.
# fmt: off
TASK_TABLE = (
    Task(name="i2s", title="images → sentence", upstream="img2sent",
         references="ref_image_ids", options="sentence_options", label="sentence_label",
         k_values=(1, 2, 3, 4, 5), cross_modal=True, mirror="t2s",
         question=("Which sentence is about the same topic as the image?",
                   "Which sentence is about the same topic as all {k} images?")),
    Task(name="s2i", title="sentences → image", upstream="sent2img",
         references="ref_sentences", options="image_option_ids", label="image_label",
         k_values=(1, 2, 3, 4, 5), cross_modal=True, mirror="s2t",
         question=("Which image is about the same topic as the sentence?",
                   "Which image is about the same topic as all {k} sentences?")),
    Task(name="t2s", title="topic → sentence", upstream="topic2sent",
         references="topic", options="sentence_options", label="sentence_label",
         k_values=(1,), cross_modal=False, mirror="i2s",
         question=("Which sentence is about this topic?", None)),
    Task(name="s2t", title="sentences → topic", upstream="sent2topic",
         references="ref_sentences", options="topic_options", label="image_label",
         k_values=(1, 2, 3, 4, 5), cross_modal=False, mirror="s2i",
         question=("Which topic is the sentence about?", "Which topic are all {k} sentences about?")),
)
# fmt: on
TASKS = tuple(t.name for t in TASK_TABLE)
TASK_BY_NAME = {t.name: t for t in TASK_TABLE}
CROSS_MODAL = tuple(t.name for t in TASK_TABLE if t.cross_modal)
TEXT_ONLY = tuple(t.name for t in TASK_TABLE if not t.cross_modal)
# Upstream (WueNLP/mvl-sib) task names, accepted so that existing code keeps working.
TASK_ALIASES = {t.upstream: t.name for t in TASK_TABLE}
K_VALUES = tuple(sorted({k for t in TASK_TABLE for k in t.k_values}))
# The k the paper reports and the evaluator runs by default.
DEFAULT_K_VALUES = (1, 3, 5)
# A leaderboard's id (eval.yaml, the Hub's results, the Inspect task names): a task at a k, and its inverse.
TASK_ID = "{task}_k{k}"
TASK_ID_PATTERN = re.compile(r"^(?P<task>[a-z0-9]+)_k(?P<k>[0-9]+)\Z")
# What a column of a language row holds, for the columns that tasks use as references or options.
IMAGE_COLUMNS_OF_ROWS = ("ref_image_ids", "image_option_ids")
TOPICS = ("entertainment", "geography", "health", "politics", "science/technology", "sports", "travel")


def topic_slug(topic: str) -> str:
    """File- and id-safe form of a topic (``science/technology`` -> ``science_technology``)."""
    return topic.replace("/", "_")


SLUG_TO_TOPIC = {topic_slug(t): t for t in TOPICS}


def topic_from_slug(slug: str) -> str:
    try:
        return SLUG_TO_TOPIC[slug]
    except KeyError:
        raise ValueError(f"unknown topic slug {slug!r}; expected one of {sorted(SLUG_TO_TOPIC)}") from None


# The release's columns in file order, (name, type): the one declaration from which the
# parquet schema, the `datasets` features and the JSON Schema of a release row are derived.
# Types: string, int64, list<string>, list<int64>, image ({bytes, path}, the `datasets` Image),
# option (an int64 0-3 that `datasets` shows as a ClassLabel named by OPTION_LETTERS).
# fmt: off
LANGUAGE_COLUMNS = (
    ("instance_id", "string"), ("index_id", "int64"), ("language", "string"), ("topic", "string"),
    ("sentence", "string"), ("ref_sentence_ids", "list<int64>"), ("ref_sentences", "list<string>"),
    ("ref_image_ids", "list<string>"), ("neg_topics", "list<string>"),
    ("sentence_option_ids", "list<int64>"), ("sentence_options", "list<string>"), ("sentence_label", "option"),
    ("image_option_ids", "list<string>"), ("topic_options", "list<string>"), ("image_label", "option"),
)
# Language-dependent columns and the id column whose sentences they hold, in that language.
TEXT_OF = {"sentence": "index_id", "ref_sentences": "ref_sentence_ids", "sentence_options": "sentence_option_ids"}
IMAGE_COLUMNS = (
    ("image", "image"), ("image_id", "string"), ("topic", "string"), ("license", "string"), ("author", "string"),
    ("source_url", "string"), ("width", "int64"), ("height", "int64"), ("sha256", "string"),
)
# fmt: on
# The letters of the 4 options, A-D: a label's name (the ClassLabel of the `option` columns).
OPTION_LETTERS = ("A", "B", "C", "D")
IMAGES_CONFIG = "images"
# A few dozen rendered examples with their images embedded, for the Hub's Dataset Viewer; not a language.
PREVIEW_CONFIG = "preview"
NON_LANGUAGE_CONFIGS = (IMAGES_CONFIG, PREVIEW_CONFIG)
SPLIT = "test"
# A language is an ISO 639-3 code and an ISO 15924 script, as Flores-200 and SIB-200 name them
# (fra_Latn); any other folder name (a backup "fra_Latn copy", "x: y") is not a language.
LANGUAGE_CODE = re.compile(r"[a-z]{3}_[A-Z][a-z]{3}")


# A Hub repo id ORG/NAME, by huggingface_hub's rules (utils.validate_repo_id), in ASCII: two parts of
# letters, digits, "-", "_" and ".", each starting and ending with a letter, digit or "_", at most 96
# characters, no "--" or "..", no ".git" at the end. The one rule for every option that takes one.
_HUB_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
HUB_REPO_ID = re.compile(rf"(?!.*(?:--|\.\.))(?!.*\.git\Z){_HUB_PART}/{_HUB_PART}\Z")


HUB_ID_RULE = (
    "letters, digits, '-', '_' and '.', each part starting and ending with a letter or digit, at most 96 "
    "characters, no '--' or '..'"
)


def hub_id_problem(text: str) -> str | None:
    """Why ``text`` is not a Hub repo id ORG/NAME (None when it is one)."""
    if HUB_REPO_ID.match(text):
        return None
    return f"{text!r} is not a Hub repo id ORG/NAME ({HUB_ID_RULE})"


def is_language_code(name: str) -> bool:
    return bool(LANGUAGE_CODE.fullmatch(name))


# Columns a language file must provide for build_examples: those the task table names.
_ROW_COLUMNS = tuple(
    dict.fromkeys(
        ["instance_id", "language", "topic"]
        + [c for t in TASK_TABLE for c in (t.references, t.options, t.label) if c != "topic"]
    )
)


class LoaderError(ValueError):
    """Bad arguments or an incomplete release; the message says what to fix."""

    input_error = True  # the toolkit's error boundary shows it as one line, exit 2


def normalize_task(task: str) -> str:
    """Canonical task name for ``task`` (accepts the upstream aliases)."""
    name = str(task).strip().lower()
    name = TASK_ALIASES.get(name, name)
    if name not in TASKS:
        raise LoaderError(
            f"unknown task {task!r}: expected one of {', '.join(TASKS)} "
            f"(or the upstream names {', '.join(sorted(TASK_ALIASES))})"
        )
    return name


def _check_k(task: str, k) -> int:
    values = TASK_BY_NAME[task].k_values
    if isinstance(k, bool) or not isinstance(k, int):
        raise LoaderError(f"k must be an integer in {values[0]}..{values[-1]}, got {k!r}")
    if k not in values:
        if len(values) == 1:
            raise LoaderError(f"task {task} has a single reference, so only k={values[0]} exists; got k={k}")
        raise LoaderError(
            f"k must be in {values[0]}..{values[-1]} (each instance has {values[-1]} references), got k={k}"
        )
    return k


MANIFEST_NAME = "manifest.json"
# The most manifest.json may hold: the bound of the toolkit's reader of it too (readers.KINDS
# "release_manifest"; tests/release_format checks they are equal). A release of all 205 languages
# lists some 420 files in well under a MiB.
MANIFEST_MAX_BYTES = 64 * 1024 * 1024
# What tools and operating systems drop into any folder: never part of a release (not listed, not
# checked, never uploaded). Any other file under data/ must be listed: the loader reads data/.
LITTER_DIRS = frozenset({"__pycache__"})
LITTER_NAMES = frozenset({"Thumbs.db", "desktop.ini", "Desktop.ini"})
LITTER_SUFFIXES = (".pyc", ".pyo")
DATA_DIR = "data"


def is_litter(parts) -> bool:
    """Dot-files, Python caches and OS litter, by the parts of their path inside the release."""
    parts = tuple(parts)
    return any(part.startswith(".") or part in LITTER_DIRS for part in parts) or (
        bool(parts) and (parts[-1] in LITTER_NAMES or parts[-1].endswith(LITTER_SUFFIXES))
    )


def _read_manifest_listing(path: str):
    """The ``files`` of manifest.json, read within MANIFEST_MAX_BYTES (the file is never read whole
    when larger), or a problem line."""
    import json
    import stat

    def no_constant(name):
        raise ValueError(f"{name} is not JSON")

    try:
        # opened without waiting (a FIFO would block an open for reading), then checked by what was opened
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return None, f"{MANIFEST_NAME}: not a regular file"
            data = fh.read(MANIFEST_MAX_BYTES + 1)
        if len(data) > MANIFEST_MAX_BYTES:
            return None, f"{MANIFEST_NAME}: larger than {MANIFEST_MAX_BYTES >> 20} MiB, not a release's manifest"
        listed = json.loads(data.decode("utf-8"), parse_constant=no_constant)["files"]
        return dict(listed), None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        return None, f"{MANIFEST_NAME}: unreadable ({type(exc).__name__})"


def manifest_problems(source=".", listed=None) -> list:
    """Files of a local release that do not match its manifest.json (missing, resized, changed), and
    files under data/ (what the loader reads) that it does not list.

    Empty when they all match or when there is no manifest (a folder made by hand). ``listed``: the
    manifest's ``files`` when the caller has read it already (the toolkit, through its reader). The
    evaluator runs this before the first model call, ``publish --release`` before uploading and every
    ``export`` before reading a table.
    """
    import hashlib

    path = os.path.join(os.fspath(source), MANIFEST_NAME)
    if listed is None:
        if not os.path.lexists(path):
            return []
        listed, problem = _read_manifest_listing(path)
        if problem:
            return [problem]
    try:
        items = sorted(listed.items())
    except (AttributeError, TypeError) as exc:
        return [f"{MANIFEST_NAME}: unreadable ({type(exc).__name__})"]
    problems = []
    root = os.path.realpath(os.fspath(source))
    for rel, entry in items:
        full = os.path.realpath(os.path.join(root, rel))
        if os.path.isabs(rel) or ".." in rel.replace("\\", "/").split("/") or not full.startswith(root + os.sep):
            problems.append(f"{rel}: path escapes the release folder")
        elif full != os.path.join(root, os.path.normpath(rel)):
            problems.append(f"{rel}: reached through a symbolic link (a release holds none); put the file itself there")
        elif not os.path.isfile(full):
            problems.append(f"{rel}: listed in manifest.json but missing")
        elif not isinstance(entry, dict) or os.path.getsize(full) != entry.get("size"):
            problems.append(
                f"{rel}: size {os.path.getsize(full)} bytes, manifest.json says "
                f"{entry.get('size') if isinstance(entry, dict) else '?'} (changed or corrupted)"
            )
        else:
            h = hashlib.sha256()
            with open(full, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
            if h.hexdigest() != entry.get("sha256"):
                problems.append(f"{rel}: sha256 differs from manifest.json (changed or corrupted)")
    problems += [f"{rel}: present but not listed in manifest.json" for rel in unlisted_data(source, listed)]
    return problems


def unlisted_data(source, listed) -> list:
    """Files under the release's data/ (litter aside) that ``listed`` does not name, sorted: a table
    put there by hand would be read as part of the release. A symbolic link is never walked through
    (it may lead anywhere, or in a loop): a linked folder is named itself, as a file would be."""
    top = os.path.join(os.fspath(source), DATA_DIR)
    out = []
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        linked = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        dirs[:] = [d for d in dirs if d not in linked]
        for name in [*files, *linked]:
            parts = os.path.relpath(os.path.join(folder, name), os.fspath(source)).split(os.sep)
            if not is_litter(parts) and "/".join(parts) not in listed:
                out.append("/".join(parts))
    return sorted(out)


def _is_local(source) -> bool:
    return os.path.isdir(os.fspath(source))


def _local_file(source, config: str) -> str:
    return os.path.join(os.fspath(source), "data", config, f"{SPLIT}.parquet")


def languages(source=".", revision=None) -> list:
    """Language configs of a local release folder or a Hub repo id (ORG/NAME), sorted."""
    if not _is_local(source):
        _hub_dataset(source, None, revision, check_only=True)
        import datasets

        # The card's `configs:` list every config; reading it downloads the card only.
        names = list(datasets.get_dataset_config_names(str(source), revision=revision))
        names = [n for n in names if n not in NON_LANGUAGE_CONFIGS]
        # the card is the Hub's answer: a config that is no language code is no language of a release
        # (it would become a task name and a file name), as a local folder's data/ holds none
        bad = next((n for n in names if not (isinstance(n, str) and is_language_code(n))), None)
        if bad is not None:
            raise LoaderError(
                f"{source}: the dataset card lists the config {ascii(bad)[:60]}, which is not a language code like "
                "eng_Latn; this is not an MVL-SIB release (or its card was edited): give the release's repo id"
            )
        return sorted(names)
    data = os.path.join(os.fspath(source), "data")
    if not os.path.isdir(data):
        return []
    return sorted(
        name for name in os.listdir(data) if is_language_code(name) and os.path.isfile(_local_file(source, name))
    )


def _hub_dataset(source, config, revision=None, check_only=False):
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the user's environment
        raise LoaderError(
            f"{source!r} is not a local folder, and loading from the Hub needs the `datasets` package "
            "(pip install datasets)"
        ) from exc
    if hub_id_problem(str(source)) is not None:
        raise LoaderError(
            f"{source!r} is neither an existing release folder nor a Hub repo id ORG/NAME ({HUB_ID_RULE})"
        )
    if check_only:
        return None
    return datasets.load_dataset(str(source), name=config, split=SPLIT, revision=revision)


def load_rows(language: str, source=".", revision=None) -> list:
    """The instance rows (dicts) of one language config."""
    if language in NON_LANGUAGE_CONFIGS:
        raise LoaderError(f"{language!r} is a config of the release but not a language; see languages(source)")
    if _is_local(source):
        path = _local_file(source, language)
        if not os.path.isfile(path):
            have = languages(source)
            hint = f"; languages here: {', '.join(have[:8])}{' ...' if len(have) > 8 else ''}" if have else ""
            raise LoaderError(f"{path}: no such file; {language!r} is not a language of this release{hint}")
        return _read_parquet(path, list(_ROW_COLUMNS)).to_pylist()
    ds = _hub_dataset(source, language, revision)
    return ds.select_columns(list(_ROW_COLUMNS)).to_list()


# Where a decoded image keeps the bytes the release stores: an OpenAI-compatible server can then be
# sent exactly the bytes this process decoded (see ``source_bytes``).
SOURCE_BYTES_KEY = "mvl_sib.source_bytes"


def _read_parquet(path, columns):
    """The columns of a release's parquet file; a truncated or damaged one is a LoaderError naming it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path, columns=columns)
    except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise LoaderError(f"{path}: not a readable parquet file ({first}); re-download the release") from None


def _decode(data: bytes, image_id: str):
    from PIL import Image

    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception as exc:
        raise LoaderError(f"image {image_id!r} in the images config cannot be decoded: {exc}") from exc
    img.info[SOURCE_BYTES_KEY] = data
    return img


def source_bytes(image):
    """``(bytes, format)`` of the release file an image was decoded from (``format`` as Pillow names it:
    ``"PNG"``, ``"JPEG"``), or ``None`` when there are none or they no longer describe it.

    PIL copies ``info`` into converted and resized copies, so the bytes are checked against the
    image's size and mode (read from the file's header, not decoded): a thumbnail or an RGB copy of an
    RGBA image has its own pixels, not the file's."""
    data = getattr(image, "info", {}).get(SOURCE_BYTES_KEY)
    if not isinstance(data, bytes):
        return None
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as header:
            same = header.size == image.size and header.mode == image.mode
            fmt = header.format
    except Exception:
        return None
    return (data, fmt) if same and fmt else None


def load_images(source=".", revision=None) -> dict:
    """All images of a release as ``{image_id: PIL.Image}``, each decoded once."""
    if _is_local(source):
        path = _local_file(source, IMAGES_CONFIG)
        if not os.path.isfile(path):
            raise LoaderError(f"{path}: no such file; the release's images config is missing")
        table = _read_parquet(path, ["image_id", "image"])
        ids = table.column("image_id").to_pylist()
        blobs = table.column("image").combine_chunks().field("bytes").to_pylist()
        return {image_id: _decode(blob, image_id) for image_id, blob in zip(ids, blobs)}
    ds = _hub_dataset(source, IMAGES_CONFIG, revision)
    out = {}
    for row in ds:
        img = row["image"]
        if isinstance(img, dict):  # a datasets version that does not decode on access
            img = _decode(img["bytes"], row["image_id"])
        out[row["image_id"]] = img
    return out


# Decoded images of recently loaded releases (see the module docstring), most recent last.
_IMAGE_CACHE: dict = {}
_IMAGE_CACHE_RELEASES = 4


def _images_key(source, revision):
    if _is_local(source):
        path = os.path.abspath(_local_file(source, IMAGES_CONFIG))
        try:
            st = os.stat(path)
        except OSError:
            return None  # load_images says what is missing
        return ("folder", path, st.st_size, st.st_mtime_ns)
    return ("hub", str(source), revision)


def _release_images(source=".", revision=None) -> dict:
    """``load_images``, decoded once per release and revision in this process."""
    key = _images_key(source, revision)
    if key is None:
        return load_images(source, revision)
    images = _IMAGE_CACHE.pop(key, None)
    if images is None:
        images = load_images(source, revision)
        while len(_IMAGE_CACHE) >= _IMAGE_CACHE_RELEASES:
            _IMAGE_CACHE.pop(next(iter(_IMAGE_CACHE)))
    _IMAGE_CACHE[key] = images
    return dict(images)


def check_label(row, column: str, n_options: int = 4) -> int:
    """The answer index in ``row[column]``; a null or out-of-range key is a ``LoaderError`` (it
    would be scored as wrong, or crash, after the model answered)."""
    label = row[column]
    if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label < n_options:
        raise LoaderError(
            f"instance {row['instance_id']} ({row.get('language')}): {column} is {label!r}, not an "
            f"option index 0..{n_options - 1}; the release is damaged"
        )
    return label


def _prompt_renderer(required):
    """The release evaluator's ``render_prompt_text`` (one source of the prompt text), or None."""
    import sys

    # no __pycache__ inside a release folder: its files are checked against manifest.json
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        # the release's evaluator, beside this file
        from mvlsib_evaluate.evaluation.run.prompts import render_prompt_text
    except ImportError as exc:
        if required:
            raise LoaderError(
                "with_prompt=True needs the release's evaluator package mvlsib_evaluate/ importable beside "
                f"mvl_sib.py ({exc}); fetch it with the loader (allow_patterns=['*.py'])"
            ) from None
        return None
    finally:
        sys.dont_write_bytecode = writes
    return render_prompt_text


def build_examples(rows, images, task: str, k: int = 1, with_prompt=None) -> list:
    """Task examples from language rows (see ``load_rows``) and images (see ``load_images``).

    ``images`` may be ``None`` for the text-only tasks ``t2s`` and ``s2t``. ``with_prompt``:
    None adds ``prompt`` when the release's evaluator is importable, True requires it, False omits it.
    """
    task = normalize_task(task)
    k = _check_k(task, k)
    render = _prompt_renderer(with_prompt is True) if with_prompt is not False else None
    spec = TASK_BY_NAME[task]
    if spec.cross_modal and images is None:
        raise LoaderError(f"task {task} shows images: pass the images (load_images(source))")
    out = []
    for row in rows:
        references = [row["topic"]] if spec.references == "topic" else list(row[spec.references][:k])
        options = list(row[spec.options])
        label = check_label(row, spec.label, len(options))
        # Prompt order: references first, then options.
        image_ids = [
            *(references if spec.references in IMAGE_COLUMNS_OF_ROWS else ()),
            *(options if spec.options in IMAGE_COLUMNS_OF_ROWS else ()),
        ]
        sentences = [
            *(references if spec.references == "ref_sentences" else ()),
            *(options if spec.options == "sentence_options" else ()),
        ]
        try:
            example_images = [images[i] for i in image_ids]
        except KeyError as exc:
            raise LoaderError(
                f"instance {row['instance_id']}: image {exc.args[0]!r} is not in the images config"
            ) from None
        out.append(
            {
                "instance_id": row["instance_id"],
                "language": row["language"],
                "task": task,
                "k": k,
                "references": references,
                "options": options,
                "label": int(label),
                "images": example_images,
                "image_ids": list(image_ids),
                "sentences": list(sentences),
            }
        )
        if render is not None:
            out[-1]["prompt"] = render(task, k, references, options)
    return out


def load_task(task: str, language: str, k: int = 1, source=".", revision=None, with_prompt=None) -> list:
    """Examples of ``task`` (``i2s``, ``s2i``, ``t2s``, ``s2t``) in ``language`` with ``k`` references.

    ``source`` is a release folder (default: the current folder, where this file
    lives in a release) or a Hub repo id such as ``ORG/mvl-sib``; ``revision``
    picks a Hub branch, tag or commit. ``with_prompt``: see ``build_examples``.
    """
    task = normalize_task(task)
    k = _check_k(task, k)
    if with_prompt is True:
        _prompt_renderer(True)  # say so before any download
    rows = load_rows(language, source, revision)
    images = _release_images(source, revision) if TASK_BY_NAME[task].cross_modal else None
    return build_examples(rows, images, task, k, with_prompt=with_prompt)


def _main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="Print a summary of MVL-SIB task examples.")
    parser.add_argument("--task", default="i2s", help="i2s, s2i, t2s or s2t (default i2s)")
    parser.add_argument("--language", default="eng_Latn", help="language config, e.g. eng_Latn")
    parser.add_argument("--k", type=int, default=1, help="number of references, 1..5 (t2s: 1)")
    parser.add_argument("--source", default=".", help="release folder or Hub repo id (default .)")
    args = parser.parse_args(argv)
    try:
        examples = load_task(args.task, args.language, k=args.k, source=args.source)
    except LoaderError as exc:
        parser.exit(2, f"error: {exc}\n")
    print(f"{len(examples)} examples of {normalize_task(args.task)} k={args.k} in {args.language}")
    if examples:
        first = dict(examples[0])
        first["images"] = [f"<{im.mode} {im.width}x{im.height}>" for im in first["images"]]
        print(first)
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
