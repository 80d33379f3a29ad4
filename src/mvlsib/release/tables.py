"""The release's parquet files: one per language and one holding the images once.

Writer settings are fixed here so that the same inputs always give the same bytes
with a given pyarrow version (parquet files name their writer in the footer, so
byte equality across pyarrow versions is not promised; the instance data is).
The ``huggingface`` schema metadata is written as a fixed JSON string rather than
by ``datasets`` so the bytes do not change with the installed ``datasets``.
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from PIL import Image

from mvlsib import jsonio, readers
from mvlsib.atomic import atomic_path
from mvlsib.errors import MvlsibError
from mvlsib.limits import MAX_IMAGE_FILE_BYTES
from mvlsib.release_format import mvl_sib
from mvlsib.release_format.mvl_sib import IMAGES_CONFIG, OPTION_LETTERS, SPLIT, TEXT_OF
from mvlsib.schema.validators import load_schema
from mvlsib.workdir.pool_manifest import image_order, pool_file

LANGUAGE_COLUMNS: tuple[str, ...] = tuple(name for name, _ in mvl_sib.LANGUAGE_COLUMNS)
IMAGE_COLUMNS: tuple[str, ...] = tuple(name for name, _ in mvl_sib.IMAGE_COLUMNS)

# Fixed writer settings (see module docstring). zstd is deterministic for a given level.
_WRITER = dict(
    version="2.6",
    compression="zstd",
    compression_level=3,
    use_dictionary=True,
    data_page_version="1.0",
    store_schema=False,
    # As `datasets` 5.x writes parquet: the page index lets readers (the Dataset Viewer) fetch one
    # page of rows, and content-defined chunking puts page boundaries where the content says, so a
    # rebuilt release shares its unchanged pages with the previous upload (Hub deduplication).
    # Both are deterministic: two builds still give the same bytes (tests/release/test_release.py,
    # tests/packaging/test_wheel.py across processes). Cost on fra_Latn: 332,417 -> 336,371 bytes.
    write_page_index=True,
    use_content_defined_chunking=True,
    write_page_checksum=False,
)
# The Dataset Viewer and streaming readers want small row groups for image data.
IMAGE_ROW_GROUP = 10


def _feature(kind: str) -> dict:
    """The `datasets` feature (as its JSON form) of a column type of the release format."""
    if kind == "image":
        return {"_type": "Image"}
    if kind.startswith("list<"):
        return {"feature": _feature(kind[5:-1]), "_type": "List"}
    if kind == "option":
        # stored as int64 (the same bytes as before); `datasets` and the Viewer show the letter
        return {"names": list(OPTION_LETTERS), "_type": "ClassLabel"}
    return {"dtype": kind, "_type": "Value"}


def _arrow_type(kind: str):
    if kind == "image":
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    if kind.startswith("list<"):
        return pa.list_(_arrow_type(kind[5:-1]))
    return {"string": pa.string(), "int64": pa.int64(), "option": pa.int64()}[kind]


LANGUAGE_FEATURES: dict = {name: _feature(kind) for name, kind in mvl_sib.LANGUAGE_COLUMNS}
IMAGE_FEATURES: dict = {name: _feature(kind) for name, kind in mvl_sib.IMAGE_COLUMNS}


def _card_dtype(kind: str):
    if kind == "image":
        return "image"
    if kind == "option":
        return {"class_label": {"names": {str(n): letter for n, letter in enumerate(OPTION_LETTERS)}}}
    return kind


def card_features(column_types) -> list[dict]:
    """The features of a config as a dataset card's ``dataset_info`` lists them (the YAML form of
    `datasets`' ``Features._to_yaml_list``), from the column table without importing `datasets`
    (0.5 s of a build); tests/release/test_card_render.py checks it equals `datasets`' own."""
    out = []
    for name, kind in column_types:
        if kind.startswith("list<"):
            out.append({"name": name, "list": _card_dtype(kind[5:-1])})
        else:
            out.append({"name": name, "dtype": _card_dtype(kind)})
    return out


def _hf_metadata(features: dict) -> dict[bytes, bytes]:
    text = jsonio.dumps({"info": {"features": features}}, sort_keys=False, ensure_ascii=False, separators=(",", ":"))
    return {b"huggingface": text.encode("utf-8")}


def language_schema():
    fields = [(name, _arrow_type(kind)) for name, kind in mvl_sib.LANGUAGE_COLUMNS]
    return pa.schema(fields, metadata=_hf_metadata(LANGUAGE_FEATURES))


@functools.cache
def _language_schema():
    return language_schema()


def image_schema():
    fields = [(name, _arrow_type(kind)) for name, kind in mvl_sib.IMAGE_COLUMNS]
    return pa.schema(fields, metadata=_hf_metadata(IMAGE_FEATURES))


@dataclass(frozen=True)
class ConfigSize:
    """What the card's ``dataset_info`` records for one config."""

    num_examples: int
    num_bytes: int  # size of the decoded arrow table (what `datasets` calls the split's num_bytes)
    download_size: int  # size of the parquet file


def config_path(out: Path, config: str) -> Path:
    return Path(out) / "data" / config / f"{SPLIT}.parquet"


def write_table(table, path: Path, *, row_group_size: int | None = None, no_stats: Sequence[str] = ()) -> Path:
    """Write ``table`` atomically with the fixed settings."""
    with atomic_path(path) as tmp:
        _write(table, str(tmp), row_group_size, no_stats)
    return Path(path)


def encode_table(table, *, row_group_size: int | None = None, no_stats: Sequence[str] = ()) -> bytes:
    """The bytes :func:`write_table` writes for ``table``, in memory."""
    sink = pa.BufferOutputStream()
    _write(table, sink, row_group_size, no_stats)
    return sink.getvalue().to_pybytes()


def _write(table, sink, row_group_size: int | None, no_stats: Sequence[str]) -> None:
    stats: bool | list[str] = True
    if no_stats:
        # Binary min/max statistics would copy whole images into the footer.
        stats = [f.name for f in table.schema if f.name not in no_stats]
    metadata = dict(table.schema.metadata or {})
    # store_schema=False keeps the version-specific ARROW:schema blob out of the file;
    # it also drops schema metadata, so the datasets features are added explicitly.
    with pq.ParquetWriter(sink, table.schema, write_statistics=stats, **_WRITER) as writer:
        writer.write_table(table, row_group_size=row_group_size or max(1, table.num_rows))
        if metadata:
            writer.add_key_value_metadata(metadata)


# ---------------------------------------------------------------- languages


@dataclass(frozen=True)
class InstancePlan:
    """Language-independent part of every language table, computed once per release.

    Sentence texts are looked up per language by position (``take``) in that
    language's texts ordered by index_id, so writing 200 languages does no
    per-row Python work.
    """

    index_ids: list[int]  # sorted sentence ids; position in this list = text position
    base: dict  # column name -> pyarrow array (language-independent columns)
    sentence_pos: pa.Array  # int32: position of each instance's sentence
    ref_pos: pa.Array  # flattened positions for ref_sentences (5 per instance)
    option_pos: pa.Array  # flattened positions for sentence_options (4 per instance)
    num_rows: int
    ref_offsets: pa.Array  # int32 list offsets 0, 5, 10, ... (made once, shared by every language)
    option_offsets: pa.Array  # 0, 4, 8, ...


def _positions(instances: list[dict], index_ids: Sequence[int]) -> tuple[list[int], list[int], list[int]]:
    """Each instance's sentence, reference and option ids as positions in ``index_ids``."""
    pos = {int(x): n for n, x in enumerate(index_ids)}

    def lookup(ids, inst, field):
        try:
            return [pos[int(x)] for x in ids]
        except KeyError as exc:
            raise MvlsibError(
                f"instance {inst.get('instance_id')}: {field} refers to sentence id {exc.args[0]}, "
                "which is not in corpus.parquet; re-run `mvlsib-build sample` on this corpus"
            ) from None

    sent: list[int] = []
    refs: list[int] = []
    opts: list[int] = []
    for inst in instances:
        sent += lookup([inst["index_id"]], inst, "index_id")
        refs += lookup(inst["ref_sentence_ids"], inst, "ref_sentence_ids")
        opts += lookup(inst["sentence_option_ids"], inst, "sentence_option_ids")
        if len(inst["ref_sentence_ids"]) != 5 or len(inst["sentence_option_ids"]) != 4:
            raise MvlsibError(
                f"instance {inst.get('instance_id')}: expected 5 ref_sentence_ids and 4 sentence_option_ids; "
                "run `mvlsib-build validate` to see what is wrong with instances.jsonl"
            )
    return sent, refs, opts


def _offsets(n: int, width: int) -> pa.Array:
    """int32 ``0, width, 2 * width, ..., n * width``: the offsets of ``n`` lists of ``width`` items."""
    return pa.array(range(0, (n + 1) * width, width), pa.int32())


def plan_instances(instances: list[dict], index_ids: Sequence[int]) -> InstancePlan:
    sent, refs, opts = _positions(instances, index_ids)
    schema = _language_schema()
    base = {
        name: pa.array([inst[name] for inst in instances], schema.field(name).type)
        for name in LANGUAGE_COLUMNS
        if name not in TEXT_OF and name != "language"
    }
    n = len(instances)
    return InstancePlan(
        index_ids=[int(x) for x in index_ids],
        base=base,
        sentence_pos=pa.array(sent, pa.int32()),
        ref_pos=pa.array(refs, pa.int32()),
        option_pos=pa.array(opts, pa.int32()),
        num_rows=n,
        ref_offsets=_offsets(n, 5),
        option_offsets=_offsets(n, 4),
    )


def language_table(plan: InstancePlan, language: str, texts) -> pa.Table:
    """The table of one language; ``texts`` are its sentences ordered like ``plan.index_ids``."""
    texts = texts if isinstance(texts, pa.Array) else pa.array(texts, pa.string())
    if len(texts) != len(plan.index_ids):
        raise MvlsibError(
            f"corpus.parquet: language {language} has {len(texts)} sentences, expected {len(plan.index_ids)} "
            "(the ids of the English annotation); re-run `mvlsib-build ingest`"
        )
    cols = dict(plan.base)
    cols["language"] = pa.array([language] * plan.num_rows, pa.string())
    cols["sentence"] = texts.take(plan.sentence_pos)
    cols["ref_sentences"] = pa.ListArray.from_arrays(plan.ref_offsets, texts.take(plan.ref_pos))
    cols["sentence_options"] = pa.ListArray.from_arrays(plan.option_offsets, texts.take(plan.option_pos))
    schema = _language_schema()
    # The text columns are cast even where the type is already right: the cast leaves out the list
    # values' all-valid bitmap that `take` makes, and the table's nbytes (the card's num_bytes)
    # must stay what it was.
    return pa.Table.from_arrays(
        [cols[f.name] if f.name in plan.base else cols[f.name].cast(f.type) for f in schema], schema=schema
    )


def check_language_table(table: pa.Table, language: str, *, full: bool) -> None:
    """Apply the release row's JSON Schema (derived from the column table) to a language table.

    The language-dependent columns (``language`` and ``TEXT_OF``) are checked with column-wise
    ``pyarrow.compute`` rules equal to their schema rules. ``full`` also checks that the table has
    exactly the release columns. The id columns are not run through jsonschema again: the plan
    builds them, with their arrow types, from the instance records, whose schema (the one the
    release row's id columns refer to) ``validate`` applies.
    """
    where = f"release table of {language}"
    props = load_schema("release_row")["properties"]
    if full and list(table.column_names) != load_schema("release_row")["required"]:
        raise MvlsibError(f"{where}: columns {table.column_names} are not the release columns (a toolkit bug)")
    if not re.fullmatch(props["language"]["pattern"], language):
        raise MvlsibError(f"{where}: {language!r} is not a language code of the form xxx_Xxxx")
    if pc.unique(table.column("language")).to_pylist() not in ([language], []):
        raise MvlsibError(f"{where}: a row names another language (a toolkit bug: please report it)")
    for column in TEXT_OF:
        _check_text_column(table.column(column), props[column], column, where)


def _check_text_column(values, rule: dict, column: str, where: str) -> None:
    if "minItems" in rule:
        lengths = pc.list_value_length(values)
        bounds = pc.min_max(lengths).as_py()
        if lengths.null_count or (len(lengths) and bounds != {"min": rule["minItems"], "max": rule["minItems"]}):
            raise MvlsibError(f"{where}: {column} must hold {rule['minItems']} texts in every row")
        values = pc.list_flatten(values)
    min_length = rule.get("items", rule)["minLength"]
    # A string has at least one character exactly when it has at least one byte; counting
    # bytes needs no UTF-8 decoding.
    length = pc.binary_length if min_length <= 1 else pc.utf8_length
    shortest = pc.min(length(values)).as_py()
    if values.null_count or (shortest is not None and shortest < min_length):
        raise MvlsibError(f"{where}: {column} has an empty or missing text; re-run `mvlsib-build ingest`")


def write_language(out: Path, plan: InstancePlan, language: str, texts, *, check_full: bool = False) -> ConfigSize:
    """Build, check and write ``data/<language>/test.parquet`` (pyarrow writes the file whole)."""
    table = language_table(plan, language, texts)
    check_language_table(table, language, full=check_full)
    path = write_table(table, config_path(out, language))
    return ConfigSize(table.num_rows, table.nbytes, path.stat().st_size)


# ---------------------------------------------------------------- images


@dataclass(frozen=True)
class ImageRecord:
    image_id: str
    topic: str
    license: str
    author: str
    source_url: str
    data: bytes
    filename: str
    width: int
    height: int
    sha256: str


def read_image_record(pool: Path, row) -> ImageRecord:
    """Read one manifest row's file, checking its hash and that it decodes."""
    pool = Path(pool)
    rel = Path(row.file)
    path = pool_file(pool, row)
    if not path.is_file():
        raise MvlsibError(f"{pool / 'manifest.csv'}: image {row.image_id}: file {row.file!r} does not exist in {pool}")
    data = readers.read_limited(path, MAX_IMAGE_FILE_BYTES, fix="run `mvlsib-build images check` and fix the pool")
    digest = hashlib.sha256(data).hexdigest()
    if row.sha256 and row.sha256.lower() != digest:
        raise MvlsibError(
            f"{pool / 'manifest.csv'}: image {row.image_id}: sha256 of {row.file} is {digest}, manifest says {row.sha256}; "
            "run `mvlsib-build images check` and fix the pool before publishing"
        )
    try:
        with Image.open(io.BytesIO(data)) as img:
            img.load()
            width, height = img.size
    except Exception as exc:  # PIL raises many types, DecompressionBombError included
        raise MvlsibError(
            f"{path}: image {row.image_id} cannot be decoded ({exc}); fix or replace it in the pool"
        ) from exc
    return ImageRecord(
        image_id=row.image_id,
        topic=row.topic,
        license=row.license,
        author=row.author,
        source_url=row.source_url,
        data=data,
        filename=rel.name,
        width=width,
        height=height,
        sha256=digest,
    )


def image_sort_key(rec) -> tuple[str, int, str]:
    return image_order(rec.topic, rec.image_id)


def images_table(records: Sequence[ImageRecord]) -> pa.Table:
    schema = image_schema()
    records = sorted(records, key=image_sort_key)
    cols = {"image": [{"bytes": r.data, "path": r.filename} for r in records]}
    for name in IMAGE_COLUMNS[1:]:
        cols[name] = [getattr(r, name) for r in records]
    return pa.table({f.name: pa.array(cols[f.name], f.type) for f in schema}, schema=schema)


def write_images(out: Path, records: Sequence[ImageRecord]) -> ConfigSize:
    table = images_table(records)
    path = write_table(table, config_path(out, IMAGES_CONFIG), row_group_size=IMAGE_ROW_GROUP, no_stats=("image",))
    return ConfigSize(table.num_rows, table.nbytes, path.stat().st_size)
