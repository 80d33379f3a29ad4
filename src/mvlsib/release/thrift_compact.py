"""Thrift's compact protocol, as parquet footers and page indexes use it: read and write generic
structs, byte for byte.

A struct is a list of ``[field id, type, value]`` in the order the fields were read; a list or set
value is ``(element type, [values])``. Writing what was read gives the same bytes: the encoder
makes the choices Apache Thrift's own encoder makes (a field header holds the id's delta from the
previous field when it is 1-15, else the id in full; a list's size sits in its header when it is
below 15). ``tests/release/test_parquet_splice.py`` reads and writes back every footer and page
index of a real release. Maps are refused: parquet's metadata has none.

Values that never change can be handed to :func:`write_struct` already encoded
(:class:`Encoded`), which :func:`encode_value` makes.
"""

from __future__ import annotations

STOP, TRUE, FALSE, BYTE, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)
_INTS = (I16, I32, I64)


class ThriftError(ValueError):
    """Bytes that are not a compact-protocol struct of the kinds parquet uses."""


class Encoded(bytes):
    """A field value in its encoded form (without its field header), written as it is."""


def read_struct(buf, pos: int = 0) -> tuple[list, int]:
    """The struct at ``buf[pos:]`` and the position after it."""
    try:
        return _read_struct(buf, pos)
    except IndexError:
        raise ThriftError(f"thrift struct at byte {pos} runs past the end of its buffer") from None


def write_struct(out: bytearray, fields: list) -> bytearray:
    """Append the encoding of ``fields`` to ``out`` and return ``out``."""
    last = 0
    append = out.append
    for fid, typ, value in fields:
        delta = fid - last
        if 0 < delta <= 15:
            append(delta << 4 | typ)
        else:
            append(typ)
            _write_varint(out, _zigzag(fid))
        if typ != TRUE and typ != FALSE:
            if type(value) is Encoded:
                out += value
            else:
                _write_value(out, typ, value)
        last = fid
    append(STOP)
    return out


def encode_value(typ: int, value) -> Encoded:
    """``value`` of type ``typ`` encoded once, for :func:`write_struct` to copy."""
    out = bytearray()
    _write_value(out, typ, value)
    return Encoded(out)


def field(fields: list, fid: int):
    """The value of field ``fid``, or None when the struct does not have it."""
    for f in fields:
        if f[0] == fid:
            return f[2]
    return None


def set_field(fields: list, fid: int, value) -> None:
    """Give the struct's field ``fid`` (which it must have) a new value."""
    for f in fields:
        if f[0] == fid:
            f[2] = value
            return
    raise ThriftError(f"struct has no field {fid}")


def _read_varint(buf, pos: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ThriftError(f"varint longer than 10 bytes at byte {pos}")


def _read_struct(buf, pos: int) -> tuple[list, int]:
    fields: list = []
    last = 0
    while True:
        header = buf[pos]
        pos += 1
        if header == STOP:
            return fields, pos
        typ, delta = header & 0x0F, header >> 4
        if delta:
            fid = last + delta
        else:
            raw, pos = _read_varint(buf, pos)
            fid = (raw >> 1) ^ -(raw & 1)
        if typ == TRUE or typ == FALSE:
            fields.append([fid, typ, None])
        else:
            value, pos = _read_value(buf, pos, typ)
            fields.append([fid, typ, value])
        last = fid


def _read_value(buf, pos: int, typ: int):
    if typ in _INTS:
        raw, pos = _read_varint(buf, pos)
        return (raw >> 1) ^ -(raw & 1), pos
    if typ == BINARY:
        size, pos = _read_varint(buf, pos)
        if pos + size > len(buf):
            raise ThriftError(f"binary of {size} bytes at byte {pos} runs past the end of its buffer")
        return bytes(buf[pos : pos + size]), pos + size
    if typ == STRUCT:
        return _read_struct(buf, pos)
    if typ == LIST or typ == SET:
        header = buf[pos]
        pos += 1
        size, elem = header >> 4, header & 0x0F
        if size == 15:
            size, pos = _read_varint(buf, pos)
        items = []
        for _ in range(size):
            if elem == TRUE or elem == FALSE:  # a bool in a list is a byte: 1 true, 2 false
                items.append(buf[pos])
                pos += 1
            else:
                value, pos = _read_value(buf, pos, elem)
                items.append(value)
        return (elem, items), pos
    if typ == BYTE:
        return buf[pos], pos + 1
    if typ == DOUBLE:
        return bytes(buf[pos : pos + 8]), pos + 8
    raise ThriftError(f"thrift type {typ} at byte {pos} is not one parquet metadata uses")


def _zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def _write_varint(out: bytearray, n: int) -> None:
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _write_value(out: bytearray, typ: int, value) -> None:
    if typ in _INTS:
        _write_varint(out, _zigzag(value))
    elif typ == BINARY:
        _write_varint(out, len(value))
        out += value
    elif typ == STRUCT:
        write_struct(out, value)
    elif typ == LIST or typ == SET:
        elem, items = value
        if len(items) < 15:
            out.append(len(items) << 4 | elem)
        else:
            out.append(0xF0 | elem)
            _write_varint(out, len(items))
        if elem == TRUE or elem == FALSE:
            out += bytes(items)
        else:
            for item in items:
                _write_value(out, elem, item)
    elif typ == BYTE:
        out.append(value)
    elif typ == DOUBLE:
        out += value
    else:
        raise ThriftError(f"thrift type {typ} is not one parquet metadata uses")
