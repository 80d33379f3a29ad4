"""Parquet files that share most of their columns, each shared column encoded once.

Every language file of a release holds the same 11 id and label columns (the same arrays,
``tables.plan_instances``) beside 4 columns of its own (``language`` and the texts). Encoding the
shared 11 again for each of 199 languages cost about a third of a build's parquet writing (0.8 of
2.5 CPU s, issue #15). A parquet writer encodes each column chunk on its own, and a chunk's bytes
(its pages and their headers) do not say where in the file they sit: only the footer and the
offset index hold positions. So :class:`SharedColumns` keeps one whole file (the template) and
makes another language's file from the template's shared chunks and the chunks of a file holding
only that language's own columns (written with the same settings): chunks in column order, the
column indexes, the offset indexes with their page positions moved, and the template's footer with
the new positions and the own columns' metadata. That is the file the writer makes from the whole
table, byte for byte; ``release.tables.LanguageWriter`` checks it on the first language (and writes
every file whole when it differs: another pyarrow version, say), and
``tests/release/test_parquet_splice.py`` on every language of a real release.

Only the layout pyarrow writes for these files is accepted (one row group, chunks then column
indexes then offset indexes then the footer, no bloom filters, no encryption); anything else raises
:class:`SpliceError`, and the caller writes the file whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from mvlsib.release.thrift_compact import (
    FALSE,
    STRUCT,
    TRUE,
    Encoded,
    ThriftError,
    encode_value,
    field,
    read_struct,
    write_struct,
)

MAGIC = b"PAR1"
# Field ids of parquet.thrift (apache/parquet-format) this module reads or rewrites.
_FILE_ROW_GROUPS, _FILE_NUM_ROWS, _FILE_CREATED_BY, _FILE_ENCRYPTION, _FILE_SIGNING_KEY = 4, 3, 6, 8, 9
_GROUP_COLUMNS, _GROUP_BYTES, _GROUP_OFFSET, _GROUP_COMPRESSED = 1, 2, 5, 6
_CHUNK_PATH, _CHUNK_OFFSET, _CHUNK_META = 1, 2, 3
_CHUNK_OI_OFFSET, _CHUNK_OI_LENGTH, _CHUNK_CI_OFFSET, _CHUNK_CI_LENGTH = 4, 5, 6, 7
_CHUNK_CRYPTO, _CHUNK_ENCRYPTED_META = 8, 9
_META_TYPE, _META_PATH, _META_CODEC, _META_UNCOMPRESSED, _META_COMPRESSED = 1, 3, 4, 6, 7
_META_PAGE_OFFSETS = (9, 10, 11)  # data, index and dictionary page offsets
_META_BLOOM_OFFSET = 14
_OI_PAGES, _PAGE_OFFSET = 1, 1


class SpliceError(ValueError):
    """The files are not laid out as this module expects; write the file whole instead."""


@dataclass
class _Column:
    chunk: memoryview  # the column chunk's bytes: dictionary page and data pages
    start: int  # where the chunk starts in its file
    meta: list  # the ColumnChunk struct, positions as in its file
    column_index: memoryview
    offset_index: list  # the OffsetIndex struct, page positions as in its file


def _layout(data) -> tuple[list, list, dict[bytes, _Column]]:
    """(FileMetaData, its one RowGroup, the columns by dotted path), checking the layout."""
    view = memoryview(data)
    if view.format != "B":  # a pyarrow Buffer's view is of signed chars
        view = view.cast("B")
    if len(view) < 12 or view[:4] != MAGIC or view[-4:] != MAGIC:
        raise SpliceError("not a parquet file (no PAR1 at both ends)")
    footer_start = len(view) - 8 - int.from_bytes(view[-8:-4], "little")
    if footer_start < 4:
        raise SpliceError("footer length larger than the file")
    try:
        meta, end = read_struct(view, footer_start)
    except ThriftError as exc:
        raise SpliceError(f"footer: {exc}") from None
    if end != len(view) - 8:
        raise SpliceError("footer does not end where its length says")
    if field(meta, _FILE_ENCRYPTION) is not None or field(meta, _FILE_SIGNING_KEY) is not None:
        raise SpliceError("encrypted file")
    groups = field(meta, _FILE_ROW_GROUPS)
    if groups is None or len(groups[1]) != 1:
        raise SpliceError("not exactly one row group")
    group = groups[1][0]
    columns: dict[bytes, _Column] = {}
    pos = 4
    for chunk in field(group, _GROUP_COLUMNS)[1]:
        md = field(chunk, _CHUNK_META)
        if md is None or any(field(chunk, f) is not None for f in (_CHUNK_PATH, _CHUNK_CRYPTO, _CHUNK_ENCRYPTED_META)):
            raise SpliceError("a column chunk in another file, encrypted, or without metadata")
        if field(chunk, _CHUNK_OFFSET) not in (None, 0) or field(md, _META_BLOOM_OFFSET) is not None:
            raise SpliceError("a column chunk with a file offset or a bloom filter")
        starts = [field(md, f) for f in _META_PAGE_OFFSETS if field(md, f) is not None]
        size = field(md, _META_COMPRESSED)
        if not starts or min(starts) != pos or size is None:
            raise SpliceError("column chunks are not one after another from the start of the file")
        name = b".".join(field(md, _META_PATH)[1])
        if name in columns:
            raise SpliceError(f"column {name!r} twice")
        columns[name] = _Column(view[pos : pos + size], pos, chunk, view[:0], [])
        pos += size
    for column in columns.values():
        offset, length = field(column.meta, _CHUNK_CI_OFFSET), field(column.meta, _CHUNK_CI_LENGTH)
        if offset != pos or length is None:
            raise SpliceError("column indexes missing or not right after the column chunks")
        column.column_index = view[pos : pos + length]
        pos += length
    for column in columns.values():
        offset, length = field(column.meta, _CHUNK_OI_OFFSET), field(column.meta, _CHUNK_OI_LENGTH)
        if offset != pos or length is None:
            raise SpliceError("offset indexes missing or not right after the column indexes")
        try:
            column.offset_index, end = read_struct(view, pos)
        except ThriftError as exc:
            raise SpliceError(f"offset index: {exc}") from None
        if end != pos + length:
            raise SpliceError("an offset index does not end where its length says")
        pos += length
    if pos != footer_start:
        raise SpliceError("bytes between the offset indexes and the footer")
    metas = [field(c.meta, _CHUNK_META) for c in columns.values()]
    if (
        field(group, _GROUP_BYTES) != sum(field(m, _META_UNCOMPRESSED) for m in metas)
        or field(group, _GROUP_COMPRESSED) != sum(field(m, _META_COMPRESSED) for m in metas)
        or field(group, _GROUP_OFFSET) not in (None, 4)
    ):
        raise SpliceError("row group sizes are not the sums of its column chunks")
    return meta, group, columns


class SharedColumns:
    """A template file whose columns other files of the same schema and row count can take."""

    def __init__(self, template):
        meta, group, self._columns = _layout(template)
        self._num_rows = field(meta, _FILE_NUM_ROWS)
        self._created_by = field(meta, _FILE_CREATED_BY)
        # What stays the same in every file is encoded once: all of the footer but the row group,
        # all of a column's metadata but its page offsets.
        self._footer = _encoded(meta, (_FILE_ROW_GROUPS,))
        self._group = _encoded(group, (_GROUP_COLUMNS, _GROUP_BYTES, _GROUP_COMPRESSED))
        self._static = {name: _static_meta(c.meta) for name, c in self._columns.items()}

    def assemble(self, part) -> bytes:
        """The template with the columns ``part`` (a parquet file of some of its columns) holds
        taken from ``part``."""
        meta, _, own = _layout(part)
        if field(meta, _FILE_NUM_ROWS) != self._num_rows or field(meta, _FILE_CREATED_BY) != self._created_by:
            raise SpliceError("the file has another row count or writer than the template")
        for name, column in own.items():
            mine = self._columns.get(name)
            if mine is None:
                raise SpliceError(f"column {name.decode()!r} is not in the template")
            a, b = field(mine.meta, _CHUNK_META), field(column.meta, _CHUNK_META)
            if field(a, _META_TYPE) != field(b, _META_TYPE) or field(a, _META_CODEC) != field(b, _META_CODEC):
                raise SpliceError(f"column {name.decode()!r} has another type or codec than in the template")
        pos = 4
        chunks, column_indexes, offset_indexes, structs = [], [], [], []
        uncompressed = compressed = 0
        for name, mine in self._columns.items():
            column = own.get(name, mine)
            delta = pos - column.start
            md = self._static[name] if column is mine else _static_meta(column.meta)
            md = [[f, t, v + delta] if type(v) is int else [f, t, v] for f, t, v in md]
            structs.append([[f, t, md if f == _CHUNK_META else v] for f, t, v in column.meta])
            chunks.append(column.chunk)
            column_indexes.append(column.column_index)
            offset_indexes.append(_moved_offset_index(column.offset_index, delta))
            sizes = field(column.meta, _CHUNK_META)
            uncompressed += field(sizes, _META_UNCOMPRESSED)
            compressed += field(sizes, _META_COMPRESSED)
            pos += len(column.chunk)
        ci_pos = pos
        oi_pos = ci_pos + sum(map(len, column_indexes))
        for struct, ci, oi in zip(structs, column_indexes, offset_indexes):
            for entry in struct:
                entry[2] = {
                    _CHUNK_OI_OFFSET: oi_pos,
                    _CHUNK_OI_LENGTH: len(oi),
                    _CHUNK_CI_OFFSET: ci_pos,
                    _CHUNK_CI_LENGTH: len(ci),
                }.get(entry[0], entry[2])
            ci_pos += len(ci)
            oi_pos += len(oi)
        group = [[f, t, v] for f, t, v in self._group]
        for entry in group:
            if entry[0] == _GROUP_COLUMNS:
                entry[2] = (STRUCT, structs)
            elif entry[0] == _GROUP_BYTES:
                entry[2] = uncompressed
            elif entry[0] == _GROUP_COMPRESSED:
                entry[2] = compressed
        footer = bytes(
            write_struct(
                bytearray(), [[f, t, (STRUCT, [group]) if f == _FILE_ROW_GROUPS else v] for f, t, v in self._footer]
            )
        )
        return b"".join(
            [MAGIC, *chunks, *column_indexes, *offset_indexes, footer, len(footer).to_bytes(4, "little"), MAGIC]
        )


def _static_meta(chunk: list) -> list:
    """A ColumnChunk's ColumnMetaData with every field but the page offsets encoded."""
    return _encoded(field(chunk, _CHUNK_META), _META_PAGE_OFFSETS)


def _encoded(fields: list, keep: tuple[int, ...]) -> list:
    """``fields`` with each value but those of ``keep`` encoded once (a bool field has no value)."""
    return [[f, t, v if f in keep or t in (TRUE, FALSE) else encode_value(t, v)] for f, t, v in fields]


def _moved_offset_index(index: list, delta: int) -> Encoded:
    out = []
    for f, t, v in index:
        if f == _OI_PAGES:
            elem, pages = v
            v = (elem, [[[pf, pt, pv + delta if pf == _PAGE_OFFSET else pv] for pf, pt, pv in page] for page in pages])
        out.append([f, t, v])
    return Encoded(write_struct(bytearray(), out))
