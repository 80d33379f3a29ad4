"""Generated faults for every input kind of ``mvlsib.readers``: each a parametrized id.

For each kind with a schema, from a valid document: a value of every other JSON type at every
path, every key removed, an extra key in every object; then, for every kind, depth bombs, size
bombs (the bytes read, not a size stated), bad encodings, NaN/Infinity, huge numbers, lone
surrogates. The reader must answer each with the document or with one ``ReadError`` line naming
the file and, for a shape fault, the field; never another exception. Whether a mutated document is
refused is decided by ``jsonschema`` on the kind's schema file itself: the schema is the one
declaration, and the reader must agree with it.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from support import DROP_CAPS

from mvlsib import readers

HEX = "0" * 64
VALID: dict[str, Any] = {
    "batch_manifest": {
        "format": "mvlsib-batch/1",
        "endpoint": "/v1/chat/completions",
        "toolkit_version": "0.1.0",
        "release_manifest_sha256": HEX,
        "n_requests": 2,
        "fingerprint": {"data": "rel", "languages": ["eng_Latn"]},
        "fingerprint_sha256": HEX,
        "run": {
            "data": "rel",
            "data_revision": None,
            "model": "m",
            "tasks": ["i2s"],
            "ks": [1, 3],
            "languages": ["eng_Latn"],
            "limit": 3,
            "limit_mode": "stratified",
            "order": "prefix",
            "max_new_tokens": 8,
            "backend_options": {"request_style": "chat"},
        },
        "limits": {"max_requests": 20, "max_bytes": 1000},
        "files": [{"name": "requests-00001.jsonl", "n_requests": 2, "bytes": 10, "sha256": HEX}],
        "command": ["mvlsib-eval", "batch", "prepare"],
    },
    "batch_result_line": {
        "id": "batch_req_1",
        "custom_id": "i2s|k1|eng_Latn|1-0",
        "response": {"status_code": 200, "request_id": "r1", "body": {"choices": [{"message": {"content": "A"}}]}},
        "error": None,
    },
    "eval_yaml": {"name": "MVL-SIB", "tasks": [{"id": "i2s_k1", "config": "eng_Latn", "split": "test"}]},
    "release_manifest": {"files": {"README.md": {"sha256": HEX, "size": 10}}, "build": {"seed": 0}},
    "json_option": {"enable_thinking": False, "max_pixels": 401408},
    "work_report": {"n_rows": 3, "languages": ["eng_Latn"]},
    "sample_report": {"seed": 0, "n_instances": 3012, "pool": "pool", "pool_manifest_sha256": HEX},
    "verify_report": {"models": ["m"], "images": [{"image_id": "a", "topic": "t", "results": {}}]},
    "hash_cache": {"format": 1, "hashes": {}},
    "ledger": {"files": {"a.txt": HEX}},
    "batch_retry_index": {"n_requests": 1, "files": [{"name": "requests-00001.jsonl", "sha256": HEX}]},
    "instance_line": {"instance_id": "1-0", "topic": "science"},
}
# kinds checked whole (hub_answer is checked per endpoint, against one of its definitions: below)
SCHEMA_KINDS = sorted(n for n, k in readers.KINDS.items() if k.schema and "$defs" not in readers.schema(n))
SHA1 = "a" * 40
HUB_ANSWERS: dict[str, Any] = {
    "agent_harnesses": {
        "standardEnvVars": ["AI_AGENT", "AGENT"],
        "harnesses": {"claude-code": {"envVars": {"CLAUDECODE": "1"}}, "other": None},
    },
    "repo_info": {
        "id": "org/x",
        "sha": SHA1,
        "private": False,
        "siblings": [{"rfilename": "README.md", "size": 3}],
        "tags": ["t"],
        "lastModified": "2026-01-01",
    },
    "tree": [{"type": "file", "path": "a", "oid": "o", "size": 1, "lfs": {"oid": "x", "size": 1}}],
    "refs": {"branches": [{"name": "main", "targetCommit": SHA1, "ref": "refs/heads/main"}], "tags": []},
    "discussions": {
        "count": 1,
        "start": 0,
        "discussions": [
            {
                "num": 1,
                "title": "t",
                "status": "open",
                "isPullRequest": True,
                "createdAt": "2026-01-01T00:00:00.000Z",
                "author": {"name": "a"},
                "repo": {"name": "org/m", "type": "model"},
            }
        ],
    },
    "preupload": {"files": [{"path": "a", "uploadMode": "regular", "shouldIgnore": False}], "commitOid": SHA1},
    "commit": {"commitOid": SHA1, "commitUrl": "u"},
    "repo_create": {"url": "u"},
    "lfs_batch": {"objects": [{"oid": "o", "size": 1, "actions": {"upload": {"href": "h", "header": {}}}}]},
}
OTHER_TYPES: list[Any] = [None, True, 7, 1.5, "x", [], {}]


def _type(value: Any) -> str:
    return "bool" if isinstance(value, bool) else type(value).__name__


def _paths(doc: Any, at: tuple = ()):
    yield at, doc
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, (*at, key))
    elif isinstance(doc, list):
        for n, value in enumerate(doc):
            yield from _paths(value, (*at, n))


def _set(doc: Any, at: tuple, value: Any) -> Any:
    if not at:
        return value
    out = copy.deepcopy(doc)
    node = out
    for part in at[:-1]:
        node = node[part]
    node[at[-1]] = value
    return out


def _delete(doc: Any, at: tuple) -> Any:
    out = copy.deepcopy(doc)
    node = out
    for part in at[:-1]:
        node = node[part]
    del node[at[-1]]
    return out


def _shown(at: tuple) -> str:
    out = ""
    for p in at:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _mutations():
    for name in SCHEMA_KINDS:
        doc = VALID[name]
        for at, value in _paths(doc):
            for other in OTHER_TYPES:
                if _type(other) != _type(value):
                    yield pytest.param(name, at, _set(doc, at, other), id=f"{name}:{_shown(at)}={_type(other)}")
            if at and isinstance(at[-1], str):
                yield pytest.param(name, at[:-1], _delete(doc, at), id=f"{name}:{_shown(at)}-missing")
            if isinstance(value, dict):
                extra = _set(doc, at, {**value, "zz_extra": 1})
                yield pytest.param(name, at, extra, id=f"{name}:{_shown(at)}+extra-key")


def _parse(name: str, doc: Any, source: str = "FILE") -> Any:
    if name == "eval_yaml":
        return readers.parse_yaml(name, yaml.safe_dump(doc).encode("utf-8"), source)
    return readers.parse_json(name, json.dumps(doc).encode("utf-8"), source)


def _one_line(exc: BaseException, source: str = "FILE") -> str:
    message = str(exc)
    assert "\n" not in message and message.startswith(source), message
    return message


@pytest.mark.parametrize("name", SCHEMA_KINDS)
def test_the_valid_document_is_read(name):
    assert Draft202012Validator(readers.schema(name)).is_valid(VALID[name])
    assert _parse(name, VALID[name]) == VALID[name]


@pytest.mark.parametrize("name, at, doc", list(_mutations()))
def test_a_wrong_shape_is_one_line_naming_the_field(name, at, doc):
    wanted = Draft202012Validator(readers.schema(name)).is_valid(doc)
    if wanted:
        assert _parse(name, doc) == doc
        return
    with pytest.raises(readers.ReadError) as err:
        _parse(name, doc)
    message = _one_line(err.value)
    # the field itself, or the object that lacks or has one key too many
    named = [_shown(at[:n]) for n in range(len(at), -1, -1)]
    assert any(f": {n} " in message or f": {n}." in message or f": {n}[" in message for n in named), message


JSON_KINDS = sorted(n for n in readers.KINDS if n not in ("eval_yaml", "pool_manifest") and "parquet" not in n)
TEXT_FAULTS: dict[str, tuple[bytes, str]] = {
    "nested-60000": (b"[" * 60_000 + b"]" * 60_000, "nested"),
    "nested-objects-5000": (b'{"a":' * 5_000 + b"1" + b"}" * 5_000, "nested"),
    "number-5000-digits": (b'{"k": ' + b"9" * 5_000 + b"}", "number of 5,000 characters"),
    "nan": (b'{"a": NaN}', "NaN"),
    "infinity": (b'{"a": -Infinity}', "Infinity"),
    "overflowing-float": (b'{"a": 1e999}', "finite"),
    "invalid-utf8": (b'{"a": "\xff"}', "not UTF-8"),
    "overlong-utf8": (b'{"a": "\xc0\xaf"}', "not UTF-8"),
    "utf8-encoded-surrogate": (b'{"a": "\xed\xb2\x80"}', "not UTF-8"),
    "truncated": (b'{"a": [1, 2', "not valid JSON"),
    "empty": (b"", "not valid JSON"),
    "duplicate-trailing-data": (b"{} {}", "not valid JSON"),
}


@pytest.mark.parametrize("fault", sorted(TEXT_FAULTS))
@pytest.mark.parametrize("name", JSON_KINDS)
def test_a_bomb_or_bad_encoding_is_one_line(name, fault):
    data, why = TEXT_FAULTS[fault]
    with pytest.raises(readers.ReadError) as err:
        readers.parse_json(name, data, "FILE", ", line 3")
    message = _one_line(err.value)
    assert message.startswith("FILE, line 3: ") and why in message, message


@pytest.mark.parametrize("name", JSON_KINDS)
def test_a_lone_surrogate_is_refused_or_kept_storable(name):
    doc = copy.deepcopy(VALID.get(name, {}))
    text = json.dumps(doc)[:-1] + (', "note": "a\\udc80b"}' if doc else '"note": "a\\udc80b"}')
    kind = readers.KINDS[name]
    if kind.surrogates == "escape":
        value = readers.parse_json(name, text.encode(), "FILE")
        json.dumps(value, ensure_ascii=False).encode("utf-8")  # storable as UTF-8
        assert value["note"] == "a\\udc80b"
    else:
        with pytest.raises(readers.ReadError) as err:
            readers.parse_json(name, text.encode(), "FILE")
        assert "note" in _one_line(err.value) and "surrogate" in str(err.value)


YAML_FAULTS: dict[str, tuple[bytes, str]] = {
    "nested-flow-60000": (b"tasks: " + b"[" * 60_000 + b"]" * 60_000, "nested"),
    "nested-block-200": (b"".join(b"  " * n + b"a:\n" for n in range(200)), "nested"),
    "k-5000-digits": (b"tasks:\n- id: i2s_k1\n  k: " + b"9" * 5_000 + b"\n", "number of 5,000 characters"),
    "nan": (b"tasks:\n- id: i2s_k1\n  k: .nan\n", "finite"),
    "inf": (b"tasks:\n- id: i2s_k1\n  k: -.inf\n", "finite"),
    "alias-bomb": (b"a: &a [1, 1]\nb: &b [*a, *a]\nc: [*b, *b]\ntasks: []\n", "alias"),
    "invalid-utf8": (b"tasks:\n- id: \xff\n", "not UTF-8"),
    "utf16": ("tasks:\n- id: x\n".encode("utf-16"), "not UTF-8"),
    "not-yaml": (b"tasks: [\n", "not valid YAML"),
    "a-list": (b"- 1\n- 2\n", "(top level)"),
    "python-object": (b"tasks: !!python/object/apply:os.system ['true']\n", "not valid YAML"),
    "lone-surrogate": (b'tasks:\n- id: "a\\udc80"\n', "surrogate"),
}


@pytest.mark.parametrize("fault", sorted(YAML_FAULTS))
def test_an_eval_yaml_fault_is_one_line(fault):
    data, why = YAML_FAULTS[fault]
    with pytest.raises(readers.ReadError) as err:
        readers.parse_yaml("eval_yaml", data, "FILE")
    message = _one_line(err.value)
    assert why in message, message


@pytest.mark.parametrize(
    "text",
    [b"root:x:0:0:root:/root:/bin/bash\nSECRET-LINE: k3y: v\n", b"tasks:\n- id: SECRET-LINE\n  : [\n",
     b"SECRET-LINE\n\t- x\n", b"a: 'SECRET-LINE\n"],
    ids=["passwd-like", "bad-key", "tab", "unclosed-quote"],
)  # fmt: skip
def test_a_yaml_fault_names_the_place_without_quoting_the_file(text):
    """The file may be a link to another (/etc/passwd): its lines are not printed, only where it fails."""
    with pytest.raises(readers.ReadError) as err:
        readers.parse_yaml("eval_yaml", text, "FILE")
    message = _one_line(err.value)
    assert "SECRET-LINE" not in message and "not valid YAML" in message and "line " in message, message


def _small(monkeypatch, name: str, max_bytes: int = 1024) -> None:
    monkeypatch.setitem(readers.KINDS, name, dataclasses.replace(readers.KINDS[name], max_bytes=max_bytes))


@pytest.mark.parametrize("name", [*JSON_KINDS, "eval_yaml"])
def test_a_file_over_the_bound_is_refused_by_what_was_read(name, tmp_path, monkeypatch):
    _small(monkeypatch, name)
    path = tmp_path / "big"
    body = json.dumps(VALID.get(name, {}))
    path.write_text(body + " " * (1025 - len(body)), encoding="utf-8")  # valid JSON (and YAML), one byte over
    read = readers.read_yaml if name == "eval_yaml" else readers.read_json
    with pytest.raises(readers.ReadError) as err:
        read(name, path)
    assert "over 1,024 bytes" in _one_line(err.value, str(path))
    path.write_text(body + " " * (1024 - len(body)), encoding="utf-8")
    assert read(name, path) == VALID.get(name, {})


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/urandom", "fifo", "folder", "missing", "unreadable"])
@pytest.mark.parametrize("name", ["release_manifest", "batch_manifest", "eval_yaml", "run_config"])
def test_a_device_pipe_or_folder_is_refused_without_reading_it(name, special, tmp_path):
    path = Path(special) if special.startswith("/dev/") else tmp_path / special
    if special == "fifo":
        os.mkfifo(path)  # nobody writes: reading would block for ever
    elif special == "folder":
        path.mkdir()
    elif special == "unreadable":
        path.write_text("{}")
        path.chmod(0)
    read = "read_yaml" if name == "eval_yaml" else "read_json"
    if special == "unreadable" and os.access(path, os.R_OK):  # root: read where mode bits bind
        code = f"from mvlsib import readers\ntry:\n    readers.{read}({name!r}, {str(path)!r})\nexcept readers.ReadError as e:\n    print(e)"
        res = subprocess.run([*DROP_CAPS, sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and res.stdout.strip(), res.stderr
        assert "permission denied" in res.stdout.lower() and len(res.stdout.strip().splitlines()) == 1, res.stdout
        assert str(path) in res.stdout
        return
    with pytest.raises(readers.ReadError) as err:
        getattr(readers, read)(name, path)
    _one_line(err.value, str(path))


def test_a_size_stat_understates_does_not_pass():
    """/proc files say size 0 and hold more: the bound counts bytes read."""
    assert os.stat("/proc/self/maps").st_size == 0
    with pytest.raises(readers.ReadError, match="over 16 bytes"):
        readers.read_limited("/proc/self/maps", 16)


@pytest.mark.parametrize(
    "value, why",
    [
        ("[" * 5_000 + "]" * 5_000, "nested"),
        ('{"a": NaN}', "NaN"),
        ('{"a": Infinity}', "Infinity"),
        ('{"a": 1e999}', "finite"),
        ('{"a": ' + "1" * 5_000 + "}", "number"),
        ("[1]", "is not of type object"),
        ('"x"', "is not of type object"),
        ("{", "not valid JSON"),
        ('{"a": "\\ud800"}', "surrogate"),
    ],
    ids=["deep", "nan", "infinity", "overflow", "long-number", "list", "string", "truncated", "surrogate"],
)
def test_a_json_option_is_one_line_naming_the_flag(value, why):
    with pytest.raises(readers.ReadError) as err:
        readers.parse_option("json_option", value, "--processor-kwargs")
    assert why in _one_line(err.value, "--processor-kwargs")


@pytest.mark.parametrize("special", ["fifo", "folder", "/dev/zero"])
def test_json_lines_refuses_a_device_pipe_or_folder(special, tmp_path):
    path = Path(special) if special.startswith("/") else tmp_path / special
    if special == "fifo":
        os.mkfifo(path)
    elif special == "folder":
        path.mkdir()
    with pytest.raises(readers.ReadError) as err:
        list(readers.json_lines("batch_result_line", path))
    _one_line(err.value, str(path))


def test_json_lines_bounds_each_line_as_it_is_read(tmp_path, monkeypatch):
    _small(monkeypatch, "batch_result_line", 64)
    path = tmp_path / "r.jsonl"
    path.write_text('{"custom_id": "a", "error": 1}\n' + "x" * 100)
    with pytest.raises(readers.ReadError, match="line 2: a line over 64 bytes"):
        list(readers.json_lines("batch_result_line", path))


def _hub_checker(definition: str) -> Draft202012Validator:
    return readers.schema_validator({"$ref": f"#/$defs/{definition}", "$defs": readers.schema("hub_answer")["$defs"]})


def test_every_endpoint_s_definition_has_a_valid_answer_here():
    from mvlsib import hubio

    assert {definition for _, _, definition in hubio.SHAPES} == set(HUB_ANSWERS)
    for definition, answer in HUB_ANSWERS.items():
        assert readers.definition_problem("hub_answer", definition, answer) is None, definition


def _hub_mutations():
    for definition, doc in HUB_ANSWERS.items():
        for at, value in _paths(doc):
            for other in OTHER_TYPES:
                if _type(other) != _type(value):
                    yield pytest.param(
                        definition, at, _set(doc, at, other), id=f"{definition}:{_shown(at)}={_type(other)}"
                    )
            if at and isinstance(at[-1], str):
                yield pytest.param(definition, at[:-1], _delete(doc, at), id=f"{definition}:{_shown(at)}-missing")


@pytest.mark.parametrize("definition, at, doc", list(_hub_mutations()))
def test_a_hub_answer_of_the_wrong_shape_names_the_field(definition, at, doc):
    found = readers.definition_problem("hub_answer", definition, doc)
    if _hub_checker(definition).is_valid(doc):
        assert found is None
        return
    assert found is not None
    field, why = found
    assert field in [_shown(at[:n]) for n in range(len(at), -1, -1)], (field, why)
