"""Arrow arrays from Python lists without importing pandas.

``pyarrow.array`` (and ``pa.scalar``, ``Table.from_pylist``) first asks whether its input is a
pandas object, and to ask it imports pandas: 0.15-0.2 CPU s and ~40 MB in every process that
builds a table, although nothing here uses pandas (issue #15: heavy imports only where used).
:func:`column` builds the same arrays from their buffers (values, offsets, validity), which
needs no such check. It covers the types of the corpus and the release tables (strings,
binaries, 64/32-bit integers, lists and structs of them, nulls included) and hands anything
else to ``pa.array``. ``tests/test_arrowcols.py`` checks it against ``pa.array``: equal arrays,
equal ``nbytes`` (the card's ``num_bytes``), equal parquet bytes.
"""

from __future__ import annotations

from array import array
from itertools import accumulate, chain, compress

_INT32_MAX = 2**31 - 1


def column(values, typ):
    """``pa.array(values, type=typ)`` for the types above, built without pandas."""
    import pyarrow as pa

    values = values if isinstance(values, list) else list(values)
    n = len(values)
    validity, null_count = _validity(values)
    valid = values if validity is None else [v for v in values if v is not None]
    # Type checks and conversions run as map/set over the whole list (no Python frame per value):
    # the corpus has 200k texts.
    if pa.types.is_string(typ) or pa.types.is_binary(typ):
        kind = str if pa.types.is_string(typ) else bytes
        filled = values if validity is None else [kind() if v is None else v for v in values]
        try:  # str.encode refuses anything but a str, so it checks the types on the way
            encoded = list(map(str.encode, filled)) if kind is str else filled
        except TypeError:
            encoded = None
        if encoded is None or (kind is bytes and set(map(type, encoded)) != {bytes}):
            return pa.array(values, type=typ)
        lengths = list(map(len, encoded))
        if sum(lengths) > _INT32_MAX:  # beyond 32-bit offsets: pyarrow's own (large) handling
            return pa.array(values, type=typ)
        offsets = array("i", accumulate(lengths, initial=0))
        return pa.Array.from_buffers(
            typ, n, [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))], null_count=null_count
        )
    if pa.types.is_int64(typ) or pa.types.is_int32(typ):
        if valid and set(map(type, valid)) != {int}:
            return pa.array(values, type=typ)
        code = "q" if pa.types.is_int64(typ) else "i"
        try:
            data = array(code, values if validity is None else [0 if v is None else v for v in values])
        except OverflowError:
            data = None
        if data is None:
            return pa.array(values, type=typ)  # pyarrow's own error, naming the value that does not fit
        return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(data)], null_count=null_count)
    if pa.types.is_list(typ):
        if valid and set(map(type, valid)) != {list}:
            return pa.array(values, type=typ)
        items = list(chain.from_iterable(valid))
        if len(items) > _INT32_MAX:
            return pa.array(values, type=typ)
        offsets = array("i", accumulate(map(len, values if validity is None else [v or () for v in values]), initial=0))
        child = column(items, typ.value_type)
        return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(offsets)], null_count=null_count, children=[child])
    if pa.types.is_struct(typ):
        if valid and set(map(type, valid)) != {dict}:
            return pa.array(values, type=typ)
        names = [typ.field(i).name for i in range(typ.num_fields)]
        # As pyarrow does: a missing key is a null child value, a null row an empty (valid) one.
        children = [
            column([_empty(typ.field(i).type) if v is None else v.get(name) for v in values], typ.field(i).type)
            for i, name in enumerate(names)
        ]
        return pa.Array.from_buffers(typ, n, [validity], null_count=null_count, children=children)
    return pa.array(values, type=typ)


def repeated(value: str, n: int):
    """A string array of ``n`` times ``value`` (``pa.array([value] * n)``), made in one go: every
    language table has a column of its language's code."""
    import pyarrow as pa

    data = value.encode("utf-8")
    if len(data) * n > _INT32_MAX:
        return column([value] * n, pa.string())
    import numpy as np  # pyarrow's own dependency, imported with it

    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(len(data))
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data * n)])


def steps(n: int, width: int):
    """int32 ``0, width, 2 * width, ..., n * width``: the offsets of ``n`` lists of ``width`` items."""
    import numpy as np
    import pyarrow as pa

    if n * width > _INT32_MAX:
        raise ValueError(f"{n} lists of {width} items do not fit 32-bit offsets")
    return pa.Array.from_buffers(
        pa.int32(), n + 1, [None, pa.py_buffer(np.arange(n + 1, dtype=np.int32) * np.int32(width))]
    )


def table(columns: dict, schema):
    """``pa.table(columns, schema=schema)`` of :func:`column` arrays; ``columns`` maps the schema's
    names to lists (or arrow arrays)."""
    import pyarrow as pa

    arrays = [
        values if isinstance(values, pa.Array) else column(values, schema.field(name).type)
        for name, values in ((name, columns[name]) for name in schema.names)
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def _empty(typ):
    """The value pyarrow puts in a child array under a null struct row."""
    import pyarrow as pa

    if pa.types.is_struct(typ):
        return {typ.field(i).name: _empty(typ.field(i).type) for i in range(typ.num_fields)}
    if pa.types.is_list(typ):
        return []
    if pa.types.is_string(typ):
        return ""
    if pa.types.is_binary(typ):
        return b""
    return 0


def _validity(values: list):
    """The validity bitmap (least significant bit first) and null count, or (None, 0) with no nulls."""
    import pyarrow as pa

    nulls = values.count(None)  # in C; the usual answer is 0
    if not nulls:
        return None, 0
    valid = [v is not None for v in values]
    bits = bytearray((len(values) + 7) // 8)
    for n in compress(range(len(values)), valid):
        bits[n >> 3] |= 1 << (n & 7)
    return pa.py_buffer(bytes(bits)), nulls
