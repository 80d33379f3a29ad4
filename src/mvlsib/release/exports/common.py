"""What every export format shares: choosing what to export, reading the release, writing atomically.

Every format reads the release through its loader (``release_format/mvl_sib.py``) and the
evaluator's own prompts (``evaluation/run/prompts.py``), so an exported prompt, option list,
image order and gold letter is exactly what ``mvlsib-eval run`` sends and scores.
``export`` writes the output folder atomically: a staging folder renamed into place, refused when
the folder holds files an earlier export did not write.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mvlsib import __version__, jsonio, readers
from mvlsib.atomic import staged_output
from mvlsib.errors import MvlsibError
from mvlsib.readers import schema_validator
from mvlsib.release.manifest import check_release_folder
from mvlsib.release_format import mvl_sib
from mvlsib.schema.validators import inlined_schema

# Written into every export folder: what was exported from what.
EXPORT_INFO = "export.json"


@dataclass(frozen=True)
class Selection:
    """What to export: the release (folder or Hub repo), languages and (task, k) pairs."""

    source: str
    revision: str | None
    languages: tuple[str, ...]
    task_ks: tuple[tuple[str, int], ...]
    local: bool = field(default=True)

    def info(self, fmt: str) -> dict:
        return {
            "format": fmt,
            "source": self.source,
            "revision": self.revision,
            "languages": list(self.languages),
            "tasks": [f"{t}/k{k}" for t, k in self.task_ks],
            "mvlsib_build": __version__,
        }


def _split(values: str | Sequence[str] | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = values.split(",")
    out = [v.strip() for v in values if v and v.strip()]
    return out or None


def select(
    release: str | os.PathLike[str],
    *,
    languages=None,
    tasks=None,
    ks=None,
    revision: str | None = None,
    allowed: Callable[[str, int], bool] = lambda task, k: True,
    default_ks: Sequence[int] = mvl_sib.DEFAULT_K_VALUES,
) -> Selection:
    """Resolve the user's choice against the release and the task table.

    ``allowed`` restricts (task, k) pairs to those a format can express; pairs the user
    did not ask for explicitly are dropped silently, explicit ones raise.
    """
    source = os.fspath(release)
    local = os.path.isdir(source)
    if local:
        source = str(Path(source).resolve())
        if not (Path(source) / "data" / mvl_sib.IMAGES_CONFIG / f"{mvl_sib.SPLIT}.parquet").is_file():
            raise MvlsibError(f"{source}: not an MVL-SIB release folder (no data/images/test.parquet)")
        available = mvl_sib.languages(source)
    elif mvl_sib.hub_id_problem(source) is not None:
        raise MvlsibError(
            f"{source!r} is neither an existing release folder nor a Hub repo id ORG/NAME ({mvl_sib.HUB_ID_RULE})"
        )
    else:
        # The repo's card lists its language configs (one small download): a misspelt repo, revision
        # or language is said now, not by the harness that runs the export later.
        available = mvl_sib.languages(source, revision)
        if not available:
            raise MvlsibError(f"--release {source}: its card lists no language config; is this an MVL-SIB release?")
    langs = _split(languages)
    if langs is None:
        langs = available
    else:
        missing = [lang for lang in langs if lang not in available]
        if missing:
            raise MvlsibError(
                f"not in {source}: {', '.join(missing)}; languages here: {', '.join(available[:8])}"
                f"{' ...' if len(available) > 8 else ''}"
            )
    if not langs:
        raise MvlsibError(f"{source}: the release holds no language")
    task_names = _split(tasks)
    try:
        task_names = [mvl_sib.normalize_task(t) for t in task_names] if task_names else list(mvl_sib.TASKS)
    except mvl_sib.LoaderError as exc:
        raise MvlsibError(str(exc)) from None
    explicit_ks = ks is not None
    k_list = [int(k) for k in ks] if explicit_ks else list(default_ks)
    pairs = []
    for spec in mvl_sib.TASK_TABLE:
        if spec.name not in task_names:
            continue
        for k in k_list:
            if k not in spec.k_values:
                # t2s has k=1 only: asking for 1,3,5 means "each task at the k it has".
                continue
            if not allowed(spec.name, k):
                if tasks is not None and explicit_ks:
                    raise MvlsibError(f"{spec.name} with k={k} cannot be exported in this format")
                continue
            pairs.append((spec.name, k))
    if not pairs:
        raise MvlsibError("nothing to export: no task of --tasks has a --k this format supports")
    if local:
        _check_tables(Path(source), langs)
    return Selection(source, revision, tuple(langs), tuple(pairs), local)


def _types(config: str) -> tuple[tuple[str, str], ...]:
    """The column types of a release's table (``mvl_sib``'s column tables), checked as it is read."""
    return mvl_sib.IMAGE_COLUMNS if config == mvl_sib.IMAGES_CONFIG else mvl_sib.LANGUAGE_COLUMNS


def _check_tables(release: Path, languages: Sequence[str]) -> None:
    """Read every table the export will point at, through the reader layer, before anything is
    written: formats that only name the files (lmms-eval, Inspect) must not ship a folder whose
    data cannot be read, and a damaged file is one line naming it. First the release is checked against
    its manifest.json (every export alike): a changed file would be exported under the release's name."""
    check_release_folder(release)
    for config in (*languages, mvl_sib.IMAGES_CONFIG):
        path = release / "data" / config / f"{mvl_sib.SPLIT}.parquet"
        if not path.is_file():
            raise MvlsibError(f"{path}: missing from the release; re-download or rebuild it")
        readers.read_parquet("release_parquet", path, types=_types(config))


@contextlib.contextmanager
def staging(out: str | os.PathLike[str]) -> Iterator[Path]:
    """A fresh folder beside ``out`` that replaces ``out`` only when the block succeeds; refused when
    ``out`` holds files an earlier export did not write (its ledger lists them)."""
    with staged_output(Path(out).resolve(), "mvlsib-build export") as stage:
        yield stage


def write_info(stage: Path, info: dict) -> None:
    (stage / EXPORT_INFO).write_text(
        jsonio.dumps(info, indent=2, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n"
    )


def load_rows(sel: Selection, language: str, all_columns: bool = False) -> list[dict]:
    """A language's rows through the loader; ``all_columns`` adds the id columns it does not read."""
    try:
        if not all_columns:
            return mvl_sib.load_rows(language, sel.source, sel.revision)
        if sel.local:
            path = Path(sel.source) / "data" / language / f"{mvl_sib.SPLIT}.parquet"
            if not path.is_file():
                mvl_sib.load_rows(language, sel.source)  # raises the loader's message
            return readers.read_parquet("release_parquet", path, types=_types(language)).to_pylist()
        import datasets

        return datasets.load_dataset(sel.source, name=language, split=mvl_sib.SPLIT, revision=sel.revision).to_list()
    except mvl_sib.LoaderError as exc:
        raise MvlsibError(str(exc)) from None


def load_image_bytes(sel: Selection) -> dict[str, tuple[bytes, str]]:
    """``{image_id: (encoded bytes, topic)}`` in the release's image order, bytes as stored (never re-encoded).
    Every id is one the release format allows (the instance schema's ``image_id``): exports name files
    after them, so ``../../somewhere`` from a tampered release must never reach a path."""
    images = _image_bytes(sel)
    check = schema_validator(inlined_schema("instance")["properties"]["ref_image_ids"]["items"])
    for image_id in images:
        if not check.is_valid(image_id):
            raise MvlsibError(
                f"{sel.source}: the image table holds the image id {image_id!r}, which is not an MVL-SIB image id "
                "(topic_N); the release is damaged or was altered: re-download or rebuild it"
            )
    return images


def _image_bytes(sel: Selection) -> dict[str, tuple[bytes, str]]:
    if sel.local:
        table = readers.read_parquet(
            "release_parquet",
            Path(sel.source) / "data" / mvl_sib.IMAGES_CONFIG / f"{mvl_sib.SPLIT}.parquet",
            columns=["image_id", "topic", "image"],
        )
        ids = table.column("image_id").to_pylist()
        topics = table.column("topic").to_pylist()
        blobs = table.column("image").combine_chunks().field("bytes").to_pylist()
        return {i: (b, t) for i, t, b in zip(ids, topics, blobs)}
    import datasets

    ds = datasets.load_dataset(sel.source, name=mvl_sib.IMAGES_CONFIG, split=mvl_sib.SPLIT, revision=sel.revision)
    ds = ds.cast_column("image", datasets.Image(decode=False))
    return {row["image_id"]: (row["image"]["bytes"], row["topic"]) for row in ds}


def image_suffix(data: bytes) -> str:
    """File suffix of encoded image bytes, from their signature."""
    if data[:3] == b"\xff\xd8\xff":
        return ".jpg"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return ".png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    return ".img"
