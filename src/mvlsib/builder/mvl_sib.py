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

Images are decoded once per call and the same PIL objects are shared by all
examples of that call (copy one before changing it in place).

A local release folder is read with pyarrow directly (fast, no cache); a Hub
repo id goes through ``datasets.load_dataset(repo, name=..., split="test")``.
"""

from __future__ import annotations

import io
import os

__all__ = [
    "TASKS",
    "TASK_ALIASES",
    "K_VALUES",
    "TOPICS",
    "normalize_task",
    "languages",
    "load_rows",
    "load_images",
    "build_examples",
    "load_task",
]

TASKS = ("i2s", "s2i", "t2s", "s2t")
# Upstream (WueNLP/mvl-sib) task names, accepted so that existing code keeps working.
TASK_ALIASES = {
    "img2sent": "i2s",
    "sent2img": "s2i",
    "topic2sent": "t2s",
    "sent2topic": "s2t",
}
K_VALUES = (1, 2, 3, 4, 5)
TOPICS = (
    "entertainment",
    "geography",
    "health",
    "politics",
    "science/technology",
    "sports",
    "travel",
)
IMAGES_CONFIG = "images"
SPLIT = "test"

# Columns a language file must provide for build_examples.
_ROW_COLUMNS = (
    "instance_id",
    "language",
    "topic",
    "ref_image_ids",
    "ref_sentences",
    "sentence_options",
    "sentence_label",
    "image_option_ids",
    "topic_options",
    "image_label",
)


class LoaderError(ValueError):
    """Bad arguments or an incomplete release; the message says what to fix."""


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
    if isinstance(k, bool) or not isinstance(k, int):
        raise LoaderError(f"k must be an integer in 1..5, got {k!r}")
    if task == "t2s" and k != 1:
        raise LoaderError(f"task t2s has a single reference (the topic label), so only k=1 exists; got k={k}")
    if k not in K_VALUES:
        raise LoaderError(f"k must be in 1..5 (each instance has 5 references), got k={k}")
    return k


def _is_local(source) -> bool:
    return os.path.isdir(os.fspath(source))


def _local_file(source, config: str) -> str:
    return os.path.join(os.fspath(source), "data", config, f"{SPLIT}.parquet")


def languages(source=".") -> list:
    """Language configs of a local release folder, sorted."""
    if not _is_local(source):
        raise LoaderError(f"{source!r} is not a local folder; languages() lists local releases only")
    data = os.path.join(os.fspath(source), "data")
    if not os.path.isdir(data):
        return []
    return sorted(
        name
        for name in os.listdir(data)
        if name != IMAGES_CONFIG and os.path.isfile(_local_file(source, name))
    )


def _hub_dataset(source, config: str, revision=None):
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the user's environment
        raise LoaderError(
            f"{source!r} is not a local folder, and loading from the Hub needs the `datasets` package "
            "(pip install datasets)"
        ) from exc
    if "/" not in str(source) or str(source).count("/") != 1:
        raise LoaderError(
            f"{source!r} is neither an existing release folder nor a Hub repo id of the form ORG/NAME"
        )
    return datasets.load_dataset(str(source), name=config, split=SPLIT, revision=revision)


def load_rows(language: str, source=".", revision=None) -> list:
    """The instance rows (dicts) of one language config."""
    if _is_local(source):
        path = _local_file(source, language)
        if not os.path.isfile(path):
            have = languages(source)
            hint = f"; languages here: {', '.join(have[:8])}{' ...' if len(have) > 8 else ''}" if have else ""
            raise LoaderError(f"{path}: no such file; {language!r} is not a language of this release{hint}")
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=list(_ROW_COLUMNS))
        return table.to_pylist()
    ds = _hub_dataset(source, language, revision)
    return ds.select_columns(list(_ROW_COLUMNS)).to_list()


def _decode(data: bytes, image_id: str):
    from PIL import Image

    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception as exc:
        raise LoaderError(f"image {image_id!r} in the images config cannot be decoded: {exc}") from exc
    return img


def load_images(source=".", revision=None) -> dict:
    """All images of a release as ``{image_id: PIL.Image}``, each decoded once."""
    if _is_local(source):
        path = _local_file(source, IMAGES_CONFIG)
        if not os.path.isfile(path):
            raise LoaderError(f"{path}: no such file; the release's images config is missing")
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=["image_id", "image"])
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


def build_examples(rows, images, task: str, k: int = 1) -> list:
    """Task examples from language rows (see ``load_rows``) and images (see ``load_images``).

    ``images`` may be ``None`` for the text-only tasks ``t2s`` and ``s2t``.
    """
    task = normalize_task(task)
    k = _check_k(task, k)
    if task in ("i2s", "s2i") and images is None:
        raise LoaderError(f"task {task} shows images: pass the images (load_images(source))")
    out = []
    for row in rows:
        if task == "i2s":
            references = list(row["ref_image_ids"][:k])
            options = list(row["sentence_options"])
            label = row["sentence_label"]
            image_ids = references
            sentences = options
        elif task == "s2i":
            references = list(row["ref_sentences"][:k])
            options = list(row["image_option_ids"])
            label = row["image_label"]
            image_ids = options
            sentences = references
        elif task == "t2s":
            references = [row["topic"]]
            options = list(row["sentence_options"])
            label = row["sentence_label"]
            image_ids = []
            sentences = options
        else:  # s2t
            references = list(row["ref_sentences"][:k])
            options = list(row["topic_options"])
            label = row["image_label"]
            image_ids = []
            sentences = references
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
    return out


def load_task(task: str, language: str, k: int = 1, source=".", revision=None) -> list:
    """Examples of ``task`` (``i2s``, ``s2i``, ``t2s``, ``s2t``) in ``language`` with ``k`` references.

    ``source`` is a release folder (default: the current folder, where this file
    lives in a release) or a Hub repo id such as ``ORG/mvl-sib``; ``revision``
    picks a Hub branch, tag or commit.
    """
    task = normalize_task(task)
    k = _check_k(task, k)
    rows = load_rows(language, source, revision)
    images = load_images(source, revision) if task in ("i2s", "s2i") else None
    return build_examples(rows, images, task, k)


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
