"""``workdir.instances.load_instances`` on generated damaged lines: each is one message naming the
file and the line (exit 2 in the CLI), never a traceback; records with wrong field values load (the
validate stage reports every one of them)."""

from __future__ import annotations

import json

import pytest

from mvlsib.errors import MvlsibError
from mvlsib.workdir.instances import load_instances

GOOD = {"instance_id": "0-0", "index_id": 0, "topic": "sports", "sentence_label": 1}
BAD_LINES = {
    "list": b"[1, 2]",
    "number": b"7",
    "string": b'"0-0"',
    "null": b"null",
    "torn": b'{"instance_id": ',
    "not-utf8": b'{"topic": "\xff"}',
    "deep-array": b"[" * 100_000 + b"]" * 100_000,
    "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "deep-field": json.dumps({**GOOD, "topic": "@"}).replace('"@"', "[" * 1000 + "]" * 1000).encode(),
    "nan": json.dumps({**GOOD, "sentence_label": "@"}).replace('"@"', "NaN").encode(),
    "infinity": json.dumps({**GOOD, "index_id": "@"}).replace('"@"', "-Infinity").encode(),
    "huge-int": json.dumps({**GOOD, "index_id": "@"}).replace('"@"', "9" * 5000).encode(),
}


@pytest.mark.parametrize("line", [1, 2, 3])
@pytest.mark.parametrize("name", sorted(BAD_LINES))
def test_a_damaged_line_is_named(tmp_path, name, line):
    lines = [json.dumps(GOOD).encode()] * 3
    lines[line - 1] = BAD_LINES[name]
    (tmp_path / "instances.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(MvlsibError, match=rf"instances\.jsonl, line {line}: "):
        load_instances(tmp_path)


def test_wrong_field_values_load_for_validate_to_report(tmp_path):
    records = [GOOD, {**GOOD, "sentence_label": "B"}, {**GOOD, "topic": 3, "extra": [1]}]
    (tmp_path / "instances.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert load_instances(tmp_path) == records
