"""`arrowcols.column` builds exactly what `pa.array` builds, without importing pandas (issue #15)."""

from __future__ import annotations

import io
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st
from support import subprocess_env

from mvlsib.arrowcols import column, repeated, steps, table

IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
TYPES = {
    "string": (pa.string(), st.text()),
    "binary": (pa.binary(), st.binary()),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
}


def _values(kind: str, depth: int = 0):
    if kind in TYPES:
        return TYPES[kind]
    if kind == "image":
        return IMAGE, st.fixed_dictionaries(
            {}, optional={"bytes": st.none() | st.binary(), "path": st.none() | st.text()}
        )
    typ, inner = _values(kind[5:-1])  # list<...>
    return pa.list_(typ), st.lists(st.none() | inner, max_size=4)


KINDS = [
    "string",
    "binary",
    "int64",
    "int32",
    "image",
    "list<string>",
    "list<int64>",
    "list<image>",
    "list<list<int32>>",
]


def _same(values, typ) -> None:
    ours, theirs = column(values, typ), pa.array(values, type=typ)
    ours.validate(full=True)
    assert ours.equals(theirs) and ours.type == theirs.type
    assert ours.null_count == theirs.null_count
    assert ours.nbytes == theirs.nbytes  # the card's num_bytes is a table's nbytes
    files = []
    for array in (ours, theirs):
        sink = io.BytesIO()
        pq.write_table(
            pa.table({"c": array}),
            sink,
            compression="zstd",
            use_content_defined_chunking=True,
            write_page_index=True,
            store_schema=False,
        )
        files.append(sink.getvalue())
    assert files[0] == files[1]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), kind=st.sampled_from(KINDS))
def test_column_equals_pa_array(data, kind):
    typ, items = _values(kind)
    _same(data.draw(st.lists(st.none() | items, max_size=12)), typ)


def test_the_release_shapes_and_helpers():
    _same(["fra_Latn"] * 5 + ["", "é\u0301", "\U0001f600"], pa.string())
    _same([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]], pa.list_(pa.int64()))
    _same([{"bytes": b"\x89PNG", "path": "a.png"}, None, {"bytes": None}], IMAGE)
    assert repeated("eng_Latn", 3).equals(pa.array(["eng_Latn"] * 3))
    assert steps(3, 5).equals(pa.array([0, 5, 10, 15], pa.int32()))
    schema = pa.schema([("a", pa.int64()), ("b", pa.list_(pa.string()))])
    assert table({"a": [1, None], "b": [["x"], []]}, schema).equals(
        pa.Table.from_pylist([{"a": 1, "b": ["x"]}, {"b": []}], schema=schema)
    )


def test_values_it_does_not_build_go_to_pyarrow():
    """Anything outside the covered types or values is pyarrow's to convert, with pyarrow's errors."""
    import pytest

    with pytest.raises(pa.ArrowTypeError, match="Expected integer, got bool"):
        column([True, False], pa.int64())
    assert column([1.0], pa.float64()).equals(pa.array([1.0]))
    with pytest.raises(pa.ArrowInvalid, match="too large"):
        column([2**40], pa.int32())
    _same([{"bytes": b"", "other": 1}], IMAGE)  # keys the type does not name are left out, as pyarrow does


def test_a_build_never_imports_pandas(sib_dir, pool_dir, tmp_path):
    """pyarrow imports pandas for pa.array and pa.scalar (0.15-0.2 CPU s); a build uses neither."""
    code = (
        "import sys\n"
        "from mvlsib.pipeline import build\n"
        f"build({str(sib_dir)!r}, {str(tmp_path / 'rel')!r}, pool={str(pool_dir)!r}, "
        "languages=['eng_Latn', 'arb_Arab', 'zho_Hans'], progress=False)\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env(), check=True)
    assert out.stdout.strip() == "False", out.stderr
    assert (tmp_path / "rel" / "data" / "zho_Hans" / "test.parquet").is_file()
