"""The release's parquet files: one per language and one holding the images once.

Writer settings are fixed here so that the same inputs always give the same bytes
with a given pyarrow version (parquet files name their writer in the footer, so
byte equality across pyarrow versions is not promised; the instance data is).
The ``huggingface`` schema metadata is written as a fixed JSON string rather than
by ``datasets`` so the bytes do not change with the installed ``datasets``.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mvlsib.atomic import atomic_path
from mvlsib.errors import MvlsibError
from mvlsib.release_format.mvl_sib import IMAGE_COLUMNS as _IMAGE_COLUMN_TYPES
from mvlsib.release_format.mvl_sib import IMAGES_CONFIG, OPTION_LETTERS, SPLIT
from mvlsib.release_format.mvl_sib import LANGUAGE_COLUMNS as _LANGUAGE_COLUMN_TYPES

LANGUAGE_COLUMNS: tuple[str, ...] = tuple(name for name, _ in _LANGUAGE_COLUMN_TYPES)
IMAGE_COLUMNS: tuple[str, ...] = tuple(name for name, _ in _IMAGE_COLUMN_TYPES)

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
    import pyarrow as pa

    if kind == "image":
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    if kind.startswith("list<"):
        return pa.list_(_arrow_type(kind[5:-1]))
    return {"string": pa.string(), "int64": pa.int64(), "option": pa.int64()}[kind]


LANGUAGE_FEATURES: dict = {name: _feature(kind) for name, kind in _LANGUAGE_COLUMN_TYPES}
IMAGE_FEATURES: dict = {name: _feature(kind) for name, kind in _IMAGE_COLUMN_TYPES}


def _card_dtype(kind: str):
    if kind == "image":
        return "image"
    if kind == "option":
        return {"class_label": {"names": {str(n): letter for n, letter in enumerate(OPTION_LETTERS)}}}
    return kind


def card_features(column_types) -> list[dict]:
    """The features of a config as a dataset card's ``dataset_info`` lists them (the YAML form of
    `datasets`' ``Features._to_yaml_list``), from the column table without importing `datasets`
    (0.5 s of a build, issue #15); tests/release/test_card_render.py checks it equals `datasets`' own."""
    out = []
    for name, kind in column_types:
        if kind.startswith("list<"):
            out.append({"name": name, "list": _card_dtype(kind[5:-1])})
        else:
            out.append({"name": name, "dtype": _card_dtype(kind)})
    return out


def _hf_metadata(features: dict) -> dict[bytes, bytes]:
    text = json.dumps({"info": {"features": features}}, sort_keys=False, ensure_ascii=False, separators=(",", ":"))
    return {b"huggingface": text.encode("utf-8")}


def language_schema():
    import pyarrow as pa

    fields = [(name, _arrow_type(kind)) for name, kind in _LANGUAGE_COLUMN_TYPES]
    return pa.schema(fields, metadata=_hf_metadata(LANGUAGE_FEATURES))


@functools.cache
def _language_schema():
    return language_schema()


def image_schema():
    import pyarrow as pa

    fields = [(name, _arrow_type(kind)) for name, kind in _IMAGE_COLUMN_TYPES]
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
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    _write(table, sink, row_group_size, no_stats)
    return sink.getvalue().to_pybytes()


def _write(table, sink, row_group_size: int | None, no_stats: Sequence[str]) -> None:
    import pyarrow.parquet as pq

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
    sentence_pos: object  # int32 array: position of each instance's sentence
    ref_pos: object  # flattened positions for ref_sentences (5 per instance)
    option_pos: object  # flattened positions for sentence_options (4 per instance)
    num_rows: int
    ref_offsets: object = None  # int32 list offsets 0, 5, 10, ... (made once, shared by every language)
    option_offsets: object = None  # 0, 4, 8, ...


def plan_instances(instances: list[dict], index_ids: Sequence[int]):
    import pyarrow as pa

    pos = {int(x): n for n, x in enumerate(index_ids)}

    def lookup(ids, inst, field):
        try:
            return [pos[int(x)] for x in ids]
        except KeyError as exc:
            raise MvlsibError(
                f"instance {inst.get('instance_id')}: {field} refers to sentence id {exc.args[0]}, "
                "which is not in corpus.parquet; re-run `mvlsib-build sample` on this corpus"
            ) from None

    sent, refs, opts = [], [], []
    for inst in instances:
        sent += lookup([inst["index_id"]], inst, "index_id")
        refs += lookup(inst["ref_sentence_ids"], inst, "ref_sentence_ids")
        opts += lookup(inst["sentence_option_ids"], inst, "sentence_option_ids")
        if len(inst["ref_sentence_ids"]) != 5 or len(inst["sentence_option_ids"]) != 4:
            raise MvlsibError(
                f"instance {inst.get('instance_id')}: expected 5 ref_sentence_ids and 4 sentence_option_ids; "
                "run `mvlsib-build validate` to see what is wrong with instances.jsonl"
            )

    from mvlsib.arrowcols import column, steps

    s, i = pa.string(), pa.int64()

    def col(name, typ):
        return column([inst[name] for inst in instances], typ)

    schema = language_schema()
    base = {
        "instance_id": col("instance_id", s),
        "index_id": col("index_id", i),
        "topic": col("topic", s),
        "ref_sentence_ids": col("ref_sentence_ids", pa.list_(i)),
        "ref_image_ids": col("ref_image_ids", pa.list_(s)),
        "neg_topics": col("neg_topics", pa.list_(s)),
        "sentence_option_ids": col("sentence_option_ids", pa.list_(i)),
        "sentence_label": col("sentence_label", i),
        "image_option_ids": col("image_option_ids", pa.list_(s)),
        "topic_options": col("topic_options", pa.list_(s)),
        "image_label": col("image_label", i),
    }
    n = len(instances)
    return InstancePlan(
        index_ids=[int(x) for x in index_ids],
        base={name: array.cast(schema.field(name).type) for name, array in base.items()},
        sentence_pos=column(sent, pa.int32()),
        ref_pos=column(refs, pa.int32()),
        option_pos=column(opts, pa.int32()),
        num_rows=n,
        ref_offsets=steps(n, 5),
        option_offsets=steps(n, 4),
    )


def language_table(plan: InstancePlan, language: str, texts):
    """The table of one language; ``texts`` are its sentences ordered like ``plan.index_ids``."""
    import pyarrow as pa

    from mvlsib.arrowcols import column, repeated, steps

    texts = column(texts, pa.string()) if not isinstance(texts, pa.Array) else texts
    if len(texts) != len(plan.index_ids):
        raise MvlsibError(
            f"corpus.parquet: language {language} has {len(texts)} sentences, expected {len(plan.index_ids)} "
            "(the ids of the English annotation); re-run `mvlsib-build ingest`"
        )

    def lists(flat_pos, width, offsets):
        if offsets is None:
            offsets = steps(plan.num_rows, width)
        return pa.ListArray.from_arrays(offsets, texts.take(flat_pos))

    cols = dict(plan.base)
    cols["language"] = repeated(language, plan.num_rows)
    cols["sentence"] = texts.take(plan.sentence_pos)
    cols["ref_sentences"] = lists(plan.ref_pos, 5, plan.ref_offsets)
    cols["sentence_options"] = lists(plan.option_pos, 4, plan.option_offsets)
    schema = _language_schema()
    # The base columns were cast once (plan_instances). The others are cast even where the type is
    # already right: the cast leaves out the list values' all-valid bitmap that `take` makes, and
    # the table's nbytes (the card's num_bytes) must stay what it was.
    return pa.Table.from_arrays(
        [cols[f.name] if f.name in plan.base else cols[f.name].cast(f.type) for f in schema], schema=schema
    )


def check_language_table(table, language: str, *, full: bool) -> None:
    """Apply the release row's JSON Schema (derived from the column table) to a language table.

    The language-dependent columns (``language`` and ``TEXT_OF``) are checked vectorised against
    their schema rules. ``full`` also runs every other column's values through the JSON Schema
    validator; those id columns are the same arrays in every language, so checking them in one
    table checks them in all.
    """
    import pyarrow.compute as pc

    from mvlsib.release_format.mvl_sib import TEXT_OF
    from mvlsib.schema.validators import compile_column, compile_fast, inlined_schema, load_schema

    where = f"release table of {language}"
    if full:
        # Row by row through the schema, but each distinct value of a column once: the schema's
        # properties are independent of each other, so this equals validating every row.
        schema = load_schema("release_row")
        if list(table.column_names) != schema["required"]:
            raise MvlsibError(f"{where}: columns {table.column_names} are not the release columns (a toolkit bug)")
        inlined = inlined_schema("release_row")["properties"]
        ids = table.column("instance_id").to_pylist()
        for column in [c for c in table.column_names if c not in TEXT_OF and c != "language"]:
            values = table.column(column).to_pylist()
            whole = compile_column(inlined[column])
            if whole is not None and whole(values):  # the whole column at once: the usual answer
                continue
            fast = compile_fast(inlined[column]) or (lambda v: False)
            seen: set = set()
            for n, value in enumerate(values):
                key = tuple(value) if isinstance(value, list) else value
                if key in seen:
                    continue
                seen.add(key)
                if fast(value):
                    continue
                from jsonschema import Draft202012Validator  # only for values the fast path is unsure of

                error = next(iter(Draft202012Validator(inlined[column]).iter_errors(value)), None)
                if error is not None:
                    raise MvlsibError(
                        f"{where}, instance {ids[n]}: {column}: {error.message} (a toolkit bug: please report it)"
                    )
    props = load_schema("release_row")["properties"]
    import re

    if not re.fullmatch(props["language"]["pattern"], language):
        raise MvlsibError(f"{where}: {language!r} is not a language code of the form xxx_Xxxx")
    # No Python scalars in the compute calls below: pyarrow converts them with pa.scalar, which
    # imports pandas (arrowcols.py).
    if pc.unique(table.column("language")).to_pylist() not in ([language], []):
        raise MvlsibError(f"{where}: a row names another language (a toolkit bug: please report it)")
    for column in TEXT_OF:
        values = table.column(column)
        rule = props[column]
        if "minItems" in rule:
            lengths = pc.list_value_length(values)
            bounds = pc.min_max(lengths).as_py()
            if lengths.null_count or (len(lengths) and bounds != {"min": rule["minItems"], "max": rule["minItems"]}):
                raise MvlsibError(f"{where}: {column} must hold {rule['minItems']} texts in every row")
            values = pc.list_flatten(values)
        min_length = rule.get("items", rule)["minLength"]
        # A string has at least one character exactly when it has at least one byte; counting
        # bytes needs no UTF-8 decoding (utf8_length took most of this check's time).
        length = pc.binary_length if min_length <= 1 else pc.utf8_length
        shortest = pc.min(length(values)).as_py()
        if values.null_count or (shortest is not None and shortest < min_length):
            raise MvlsibError(f"{where}: {column} has an empty or missing text; re-run `mvlsib-build ingest`")


class LanguageWriter:
    """Writes the language files of one release, encoding the columns they share only once.

    The plan's columns (ids, labels, images) are the same arrays in every language file. The first
    file is encoded whole and kept as the template; each later one encodes only its own columns
    (``language`` and the texts) and takes the shared columns' encoded bytes from the template
    (``release.parquet_splice``): 1.8 instead of 2.5 CPU s of parquet writing for 199 languages,
    the same bytes (issue #15, ``benchmarks/build_ledger.py``). Whether the assembled file equals
    the whole one is checked on the first file; if it does not (another pyarrow's layout), or a
    later file's layout is not the expected one, files are encoded whole.
    """

    def __init__(self, out: Path, plan: InstancePlan):
        self.out, self.plan = Path(out), plan
        self.own_columns = [f.name for f in _language_schema() if f.name not in plan.base]
        self._shared = None  # parquet_splice.SharedColumns once the first file has passed the check
        self._checked = False
        self.assembled = 0  # files made from the template (the rest were encoded whole)

    def write(self, language: str, texts, *, check_full: bool = False) -> ConfigSize:
        table = language_table(self.plan, language, texts)
        check_language_table(table, language, full=check_full)
        data = self._encode(table)
        with atomic_path(config_path(self.out, language)) as tmp:
            tmp.write_bytes(data)
        return ConfigSize(table.num_rows, table.nbytes, len(data))

    def _encode(self, table) -> bytes:
        from mvlsib.release.parquet_splice import SharedColumns, SpliceError

        if self._shared is not None:
            try:
                data = self._shared.assemble(encode_table(table.select(self.own_columns)))
                self.assembled += 1
                return data
            except SpliceError:
                pass
        whole = encode_table(table)
        if not self._checked:
            self._checked = True
            try:
                shared = SharedColumns(whole)
                if shared.assemble(encode_table(table.select(self.own_columns))) == whole:
                    self._shared = shared
            except SpliceError:
                pass
        return whole


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
    import hashlib

    from PIL import Image

    from mvlsib.workdir.pool_manifest import pool_file

    pool = Path(pool)
    rel = Path(row.file)
    path = pool_file(pool, row)
    if not path.is_file():
        raise MvlsibError(f"{pool / 'manifest.csv'}: image {row.image_id}: file {row.file!r} does not exist in {pool}")
    data = path.read_bytes()
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
    from mvlsib.workdir.pool_manifest import image_order

    return image_order(rec.topic, rec.image_id)


def images_table(records: Sequence[ImageRecord]):
    import pyarrow as pa

    from mvlsib.arrowcols import column

    schema = image_schema()
    records = sorted(records, key=image_sort_key)
    cols = {
        "image": column([{"bytes": r.data, "path": r.filename} for r in records], schema.field("image").type),
    }
    for name in IMAGE_COLUMNS[1:]:
        typ = schema.field(name).type
        cols[name] = column([getattr(r, name) for r in records], typ)
    return pa.Table.from_arrays([cols[f.name] for f in schema], schema=schema)


def write_images(out: Path, records: Sequence[ImageRecord]) -> ConfigSize:
    table = images_table(records)
    path = write_table(table, config_path(out, IMAGES_CONFIG), row_group_size=IMAGE_ROW_GROUP, no_stats=("image",))
    return ConfigSize(table.num_rows, table.nbytes, path.stat().st_size)
