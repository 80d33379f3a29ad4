"""Every JSON text the toolkit writes or prints with ``ensure_ascii=False`` (letters kept readable)
goes through ``jsonio.dumps``, which writes the characters that act when a file is shown (C1
controls, bidi overrides, line separators) as escapes; ``json.dumps`` beside it would keep them raw
in a run's config.json, a batch's request lines or a release's manifest. Read with ``ast``. What may
still call ``json`` itself is listed with why; YAML is written ASCII-only (``allow_unicode`` off)."""

from __future__ import annotations

import ast
import json

from support import REPO

from mvlsib import jsonio

SRC = REPO / "src" / "mvlsib"

# (module, enclosing function) -> why its non-ASCII JSON is neither written nor printed
ALLOWED = {
    ("jsonio.py", "dumps"): "the one writer",
    ("credentials.py", "_spellings"): "a held credential as JSON spells it, to hide that spelling too; never written",
    ("evaluation/run/prompts.py", "prompts_hash"): "hashed, never shown; older runs' hashes stay valid",
    ("evaluation/run/runner.py", "_prompt_sha"): "hashed, never shown; older runs' hashes stay valid",
    ("evaluation/backends/openai.py", "_ask"): "a request body sent to the server, not written or printed",
}


def _calls(tree: ast.AST):
    """(line, enclosing function, callee, keyword names) of every call, with its function."""

    def visit(node, function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Call):
            f = node.func
            callee = f"{getattr(f.value, 'id', '?')}.{f.attr}" if isinstance(f, ast.Attribute) else ""
            yield node.lineno, function, callee, {k.arg: k.value for k in node.keywords}
        for child in ast.iter_child_nodes(node):
            yield from visit(child, function)

    yield from visit(tree, None)


def _raw_unicode(kw: dict) -> bool:
    value = kw.get("ensure_ascii") if "ensure_ascii" in kw else kw.get("allow_unicode")
    return value is not None and not (isinstance(value, ast.Constant) and value.value is False)


def test_non_ascii_json_and_yaml_are_written_only_through_the_one_writer():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for line, function, callee, kw in _calls(ast.parse(path.read_text("utf-8"), str(path))):
            if callee in {"json.dump", "json.dumps", "yaml.dump", "yaml.safe_dump"} and _raw_unicode(kw):
                if (rel, function) not in ALLOWED:
                    bad.append(f"{rel}:{line} ({function}): {callee} keeps non-ASCII raw; use jsonio.dumps")
    assert not bad, "\n".join(bad)


def test_yaml_is_written_only_through_the_one_writer():
    """``jsonio.yaml_dumps``: ASCII only, and no credential the process holds (``credentials.hide``)."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for line, function, callee, _ in _calls(ast.parse(path.read_text("utf-8"), str(path))):
            if callee in {"yaml.dump", "yaml.safe_dump", "yaml.dump_all", "yaml.safe_dump_all"}:
                if (rel, function) != ("jsonio.py", "yaml_dumps"):
                    bad.append(f"{rel}:{line} ({function}): {callee}; write YAML with jsonio.yaml_dumps")
    assert not bad, "\n".join(bad)


def test_every_allowed_call_is_still_there():
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        found |= {
            (rel, fn) for _, fn, callee, kw in _calls(ast.parse(path.read_text("utf-8"))) if callee == "json.dumps"
        }
    assert set(ALLOWED) <= found, set(ALLOWED) - found


HOSTILE = "".join(chr(c) for c in [0x7F, *range(0x80, 0xA0), 0x61C, 0x200E, 0x200F, *range(0x202A, 0x202F),
                                   *range(0x2066, 0x206A), 0x2028, 0x2029])  # fmt: skip


def test_the_writer_escapes_each_acting_character_and_reads_back_the_same():
    for ch in HOSTILE:
        doc = {"k": f"a{ch}b é 中 \\ {ch}", ch: [ch]}
        for kw in ({"ensure_ascii": False}, {"ensure_ascii": False, "indent": 2, "sort_keys": True}):
            text = jsonio.dumps(doc, **kw)
            assert ch not in text, (hex(ord(ch)), text)
            assert json.loads(text) == doc and "é" in text and "中" in text


# (module) -> why it writes CSV beside csvio.write_dicts
CSV_ALLOWED = {
    "csvio.py": "the one writer of tables",
    "release/exports/vlmevalkit.py": "the benchmark's data as VLMEvalKit reads it: texts as the release has them",
    "workdir/pool_manifest.py": "the pool manifest, whose values its rules check (no control, no credential) first",
}


def test_csv_is_written_only_through_the_one_writer():
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for line, function, callee, _ in _calls(ast.parse(path.read_text("utf-8"), str(path))):
            if callee in {"csv.writer", "csv.DictWriter"} and rel not in CSV_ALLOWED:
                bad.append(f"{rel}:{line} ({function}): {callee}; write tables with csvio.write_dicts")
    assert not bad, "\n".join(bad)


def test_the_csv_writer_shows_every_acting_character_as_an_escape():
    import io

    from mvlsib import csvio

    for ch in HOSTILE + "\x1b\x07\x00\x0b":
        fh = io.StringIO()
        csvio.write_dicts(fh, [{f"k{ch}": f"x{ch}y", "n": 1.5}], [f"k{ch}", "n"])
        assert ch not in fh.getvalue(), hex(ord(ch))
