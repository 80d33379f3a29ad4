"""Language files assembled from a template's shared column chunks are the files pyarrow writes
whole, byte for byte, for every language of the real SIB-200 build (issue #15)."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mvlsib.release import tables as rt
from mvlsib.release.parquet_splice import SharedColumns, SpliceError
from mvlsib.release.thrift_compact import (
    BINARY,
    BYTE,
    DOUBLE,
    FALSE,
    I16,
    I32,
    I64,
    LIST,
    STRUCT,
    TRUE,
    ThriftError,
    field,
    read_struct,
    write_struct,
)
from mvlsib.workdir.corpus import read_corpus_texts
from mvlsib.workdir.instances import read_instances


@pytest.fixture(scope="module")
def plan_and_texts(full_workdir):
    index_ids, texts = read_corpus_texts(full_workdir)
    return rt.plan_instances(read_instances(full_workdir), index_ids), texts


@pytest.fixture(scope="module")
def whole_files(plan_and_texts) -> dict[str, bytes]:
    """Every language's file as pyarrow writes the whole table (the reference)."""
    plan, texts = plan_and_texts
    return {lang: rt.encode_table(rt.language_table(plan, lang, texts[lang])) for lang in sorted(texts)}


def _footer_and_indexes(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of the footer and of every page index struct in a parquet file."""
    n = int.from_bytes(data[-8:-4], "little")
    spans = [(len(data) - 8 - n, len(data) - 8)]
    footer, _ = read_struct(data, spans[0][0])
    for chunk in field(field(footer, 4)[1][0], 1)[1]:
        for offset, length in ((field(chunk, 4), field(chunk, 5)), (field(chunk, 6), field(chunk, 7))):
            spans.append((offset, offset + length))
    return spans


def test_every_footer_and_page_index_of_a_release_reads_and_writes_back_byte_for_byte(whole_files):
    checked = 0
    for lang, data in whole_files.items():
        for start, end in _footer_and_indexes(data):
            fields, stop = read_struct(data, start)
            assert stop == end, lang
            assert bytes(write_struct(bytearray(), fields)) == data[start:end], lang
            checked += 1
    assert checked == len(whole_files) * (1 + 2 * 15)


def test_the_writer_assembles_every_language_file_byte_for_byte(plan_and_texts, whole_files, tmp_path):
    plan, texts = plan_and_texts
    writer = rt.LanguageWriter(tmp_path, plan)
    assert writer.own_columns == ["language", "sentence", "ref_sentences", "sentence_options"]
    for n, lang in enumerate(sorted(texts)):
        size = writer.write(lang, texts[lang], check_full=n == 0)
        data = rt.config_path(tmp_path, lang).read_bytes()
        assert data == whole_files[lang], lang
        assert size.download_size == len(data)
    # Every file after the first was assembled from the template, none encoded whole.
    assert writer.assembled == len(texts) - 1 >= 198
    back = pq.read_table(rt.config_path(tmp_path, "zho_Hans"))
    assert back.equals(pq.read_table(io.BytesIO(whole_files["zho_Hans"])))


def test_when_the_first_file_does_not_assemble_to_itself_every_file_is_written_whole(
    plan_and_texts, whole_files, tmp_path, monkeypatch
):
    # A pyarrow whose files do not splice back (here: the own columns encoded with another
    # compression level) must not change a byte: the writer then encodes every file whole.
    plan, texts = plan_and_texts
    real = rt.encode_table

    def own_columns_differ(table, **kwargs):
        if table.num_columns == 4:
            return _part(table, table.column_names, compression_level=9)
        return real(table, **kwargs)

    monkeypatch.setattr(rt, "encode_table", own_columns_differ)
    writer = rt.LanguageWriter(tmp_path, plan)
    langs = sorted(texts)[:3]
    for lang in langs:
        writer.write(lang, texts[lang])
        assert rt.config_path(tmp_path, lang).read_bytes() == whole_files[lang], lang
    assert writer.assembled == 0


def _part(table: pa.Table, columns: list[str], **settings_) -> bytes:
    sink = pa.BufferOutputStream()
    with pq.ParquetWriter(sink, table.select(columns).schema, **{**rt._WRITER, **settings_}) as w:
        w.write_table(table.select(columns), row_group_size=table.num_rows)
    return sink.getvalue().to_pybytes()


def test_files_of_another_layout_are_refused_with_a_reason(whole_files):
    data = whole_files["eng_Latn"]
    table = pq.read_table(io.BytesIO(data))
    shared = SharedColumns(data)
    with pytest.raises(SpliceError, match="row count"):
        shared.assemble(_part(table.slice(0, 100), ["sentence"]))
    with pytest.raises(SpliceError, match="not in the template"):
        shared.assemble(_part(table.rename_columns([c + "_x" for c in table.column_names]), ["sentence_x"]))
    with pytest.raises(SpliceError, match="another type or codec"):
        shared.assemble(_part(table, ["sentence"], compression="snappy", compression_level=None))
    two_groups = pa.BufferOutputStream()
    with pq.ParquetWriter(two_groups, table.schema, **rt._WRITER) as w:
        w.write_table(table, row_group_size=1000)
    with pytest.raises(SpliceError, match="one row group"):
        SharedColumns(two_groups.getvalue().to_pybytes())
    no_index = _part(table, table.column_names, write_page_index=False)
    with pytest.raises(SpliceError, match="column indexes missing"):
        SharedColumns(no_index)
    with pytest.raises(SpliceError, match="not a parquet file"):
        SharedColumns(data[:-1])
    with pytest.raises(SpliceError, match="footer"):
        SharedColumns(data[:-8] + (len(data)).to_bytes(4, "little") + b"PAR1")


def test_a_template_column_taken_from_a_part_moves_the_others(whole_files):
    # Taking another language's own columns changes their sizes: the shared chunks after them move,
    # and pyarrow must read the assembled file as that language's table.
    eng, fra = whole_files["eng_Latn"], whole_files["fra_Latn"]
    fra_table = pq.read_table(io.BytesIO(fra))
    assembled = SharedColumns(eng).assemble(
        rt.encode_table(fra_table.select(["language", "sentence", "ref_sentences", "sentence_options"]))
    )
    assert assembled == fra
    meta = pq.ParquetFile(io.BytesIO(assembled))
    assert meta.read().equals(fra_table)
    assert [meta.metadata.row_group(0).column(i).data_page_offset for i in range(15)] == [
        pq.ParquetFile(io.BytesIO(fra)).metadata.row_group(0).column(i).data_page_offset for i in range(15)
    ]


# --------------------------------------------------------------- the compact protocol itself

_SCALARS = {
    I16: st.integers(-(2**15), 2**15 - 1),
    I32: st.integers(-(2**31), 2**31 - 1),
    I64: st.integers(-(2**63), 2**63 - 1),
    BINARY: st.binary(max_size=40),
    BYTE: st.integers(0, 255),
    DOUBLE: st.binary(min_size=8, max_size=8),
}


def _value(typ: int, depth: int):
    if typ in _SCALARS:
        return _SCALARS[typ]
    if typ == LIST:
        elem = st.sampled_from([I32, I64, BINARY, TRUE] + ([STRUCT] if depth < 2 else []))
        return elem.flatmap(
            lambda e: st.lists(st.sampled_from([1, 2]) if e == TRUE else _value(e, depth + 1), max_size=20).map(
                lambda v: (e, v)
            )
        )
    return _struct(depth + 1)


def _struct(depth: int = 0):
    kinds = [I16, I32, I64, BINARY, BYTE, DOUBLE, TRUE, FALSE] + ([LIST, STRUCT] if depth < 2 else [])

    def fields(ids_and_types):
        out = []
        for fid, typ in ids_and_types:
            out.append(
                st.just([fid, typ, None])
                if typ in (TRUE, FALSE)
                else _value(typ, depth).map(lambda v, fid=fid, typ=typ: [fid, typ, v])
            )
        return st.tuples(*out).map(list)

    # Field ids in any order, gaps above 15 and negative ids included: both header forms.
    ids = st.lists(st.integers(-40, 300), unique=True, max_size=8)
    return ids.flatmap(
        lambda fids: st.tuples(*(st.sampled_from(kinds) for _ in fids)).map(
            lambda types, fids=fids: list(zip(fids, types))
        )
    ).flatmap(fields)


@settings(max_examples=300, deadline=None)
@given(_struct())
def test_structs_round_trip_through_the_compact_protocol(fields):
    data = bytes(write_struct(bytearray(), fields))
    back, end = read_struct(data, 0)
    assert end == len(data)
    assert back == fields
    assert bytes(write_struct(bytearray(), back)) == data


def test_known_encodings():
    # Values from the compact protocol's specification (apache/thrift doc/specs/thrift-compact-protocol.md).
    assert bytes(write_struct(bytearray(), [[1, I32, 1]])) == b"\x15\x02\x00"  # delta 1, type 5, zigzag 2
    assert bytes(write_struct(bytearray(), [[1, I64, -1]])) == b"\x16\x01\x00"
    assert bytes(write_struct(bytearray(), [[17, I32, 0]])) == b"\x05\x22\x00\x00"  # long form: zigzag 17 = 34
    assert bytes(write_struct(bytearray(), [[1, TRUE, None], [2, FALSE, None]])) == b"\x11\x12\x00"
    assert bytes(write_struct(bytearray(), [[1, LIST, (I32, list(range(15)))]]))[:3] == b"\x19\xf5\x0f"
    assert bytes(write_struct(bytearray(), [[1, BINARY, b"x" * 200]]))[:3] == b"\x18\xc8\x01"


def test_truncated_or_foreign_bytes_raise_thrift_errors():
    data = bytes(write_struct(bytearray(), [[1, BINARY, b"abcdef"], [2, I64, 2**40]]))
    for cut in range(1, len(data)):
        with pytest.raises(ThriftError):
            read_struct(data[:cut], 0)
    with pytest.raises(ThriftError, match="type 11"):
        read_struct(b"\x1b\x00\x00", 0)  # a map


def test_values_encoded_once_write_the_same_bytes():
    from mvlsib.release.parquet_splice import _encoded

    fields = [[1, TRUE, None], [2, I32, -5], [3, LIST, (BINARY, [b"a", b"bc"])], [20, STRUCT, [[1, FALSE, None]]]]
    assert bytes(write_struct(bytearray(), _encoded(fields, (2,)))) == bytes(write_struct(bytearray(), fields))
