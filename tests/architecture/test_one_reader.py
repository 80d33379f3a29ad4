"""Every external input through one declared reader (``mvlsib.readers``), enforced.

A JSON, YAML, parquet or CSV parser called anywhere else in ``src/mvlsib`` is a reader beside the
registry, without its bounds (bytes read, depth, number length, NaN, UTF-8) or its schema; a user's
CSV goes through ``mvlsib.csvio`` (bytes read, UTF-8, a ``csv.Error`` as one line). The
source is read with ``ast``, so lazy imports, aliases (``import pyarrow.parquet as pq``) and
``from json import loads`` are seen too. What may still parse on its own is listed below with why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from support import REPO

from mvlsib import readers

SRC = REPO / "src" / "mvlsib"

# module -> attribute names that parse external bytes
PARSERS: dict[str, frozenset[str]] = {
    "json": frozenset({"load", "loads", "JSONDecoder", "decoder"}),
    "yaml": frozenset(
        {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all", "full_load_all", "parse"}
    ),
    "pyarrow.parquet": frozenset(
        {"read_table", "ParquetFile", "read_schema", "read_metadata", "read_pandas", "ParquetDataset"}
    ),
    "pandas": frozenset({"read_parquet", "read_json"}),
    "mvlsib.jsonio": frozenset({"loads"}),
    "csv": frozenset({"reader", "DictReader", "Sniffer"}),
}

# (module under src/mvlsib, parser "module.name") -> why it may parse without the registry
ALLOWED: dict[tuple[str, str], str] = {
    ("readers.py", "json.loads"): "the reader layer: parses its own schema files (package data)",
    ("readers.py", "yaml.parse"): "the reader layer: counts the nesting depth from the event stream",
    ("readers.py", "yaml.safe_load"): "the reader layer, after its bounds",
    ("readers.py", "pyarrow.parquet.read_table"): "the reader layer",
    ("readers.py", "mvlsib.jsonio.loads"): "the reader layer's bounded JSON parser",
    ("jsonio.py", "json.loads"): "the bounded JSON parser the reader layer calls",
    ("csvio.py", "csv.DictReader"): "the CSV reader layer, over bytes read within its bound",
    ("builder/tsv.py", "csv.reader"): "SIB-200's TSV files: strict csv with its own line and byte errors "
    "(tests/builder/test_ingest_faults.py), a cut-off last line refused",
    ("evaluation/run/languages.py", "csv.DictReader"): "the packaged language table (package data)",
    ("schema/validators.py", "json.loads"): "the package's own schema files (package data)",
    ("release_format/mvl_sib.py", "json.loads"): "ships alone in every release (no mvlsib to import): "
    "manifest.json read within MANIFEST_MAX_BYTES, the reader layer's bound (see BOUNDED_IN)",
    ("release_format/mvl_sib.py", "pyarrow.parquet.read_table"): "ships alone in every release; its "
    "readers name a bad file as a LoaderError",
    ("release/exports/templates/inspect_task.py", "json.load"): "shipped into an export: reads the export's "
    "own data file, written beside it",
    ("release/exports/templates/lmms_eval_utils.py", "json.load"): "shipped into an export: reads the export's "
    "own data file, written beside it",
    ("release/exports/vlmevalkit.py", "json.loads"): "parses the image_path lists it has just built",
    ("release/card/render.py", "yaml.safe_load"): "card_metadata parses the card header it rendered",
    ("evaluation/scale/prepare.py", "json.JSONDecoder"): "line_custom_id reads the custom_id of a request "
    "line whose file's sha256 the batch manifest fixed (checked by the caller)",
    ("evaluation/backends/openai.py", "mvlsib.jsonio.loads"): "a server's HTTP answer, bounded by httpio and "
    "checked by check_answer: not a file",
    ("hubio.py", "mvlsib.jsonio.loads"): "a Hub API answer, bounded by the transport and checked by SHAPES: not a file",
}


# An allowance for a module that cannot import the reader layer holds only inside the function named
# here, and that function must read a bounded number of bytes: an allowance by module alone let a second,
# unbounded parse (``json.load`` of a whole file) into the same module unseen.
BOUNDED_IN: dict[tuple[str, str], str] = {
    ("release_format/mvl_sib.py", "json.loads"): "_read_manifest_listing",
}


def _aliases(tree: ast.AST, module_name: str) -> tuple[dict[str, str], dict[str, str]]:
    """(local name -> parser module, local name -> "module.attr") of the module's imports."""
    modules: dict[str, str] = {}
    names: dict[str, str] = {}
    package = module_name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in PARSERS:
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}" if base else alias.name
                if full in PARSERS:  # from pyarrow import parquet as pq / from . import jsonio
                    modules[alias.asname or alias.name] = full
                elif base in PARSERS and alias.name in PARSERS[base]:
                    names[alias.asname or alias.name] = f"{base}.{alias.name}"
    # `_compat.jsonio` and the bundled `jsonio`: the same module
    return modules, names


def parser_calls(path: Path, module_name: str | None = None) -> list[tuple[int, str]]:
    """(line, "module.name") of every use of a parser in the module at ``path``."""
    return [(line, name) for line, _, name in parser_uses(path, module_name)]


def _functions(tree: ast.AST) -> dict[int, str]:
    """id(node) -> the name of the innermost function holding it (module level: absent)."""
    out: dict[int, str] = {}

    def visit(node, function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if function is not None:
            out[id(node)] = function
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return out


def parser_uses(path: Path, module_name: str | None = None) -> list[tuple[int, str | None, str]]:
    """(line, enclosing function, "module.name") of every use of a parser in the module at ``path``."""
    module_name = module_name or ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    modules, names = _aliases(tree, module_name)
    modules.setdefault("jsonio", "mvlsib.jsonio")
    function_of = _functions(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            module = modules[node.value.id]
            if node.attr in PARSERS[module]:
                found.append((node.lineno, function_of.get(id(node)), f"{module}.{node.attr}"))
        elif isinstance(node, ast.Attribute) and node.attr == "loads" and isinstance(node.value, ast.Attribute):
            if node.value.attr == "jsonio":  # _compat.jsonio.loads
                found.append((node.lineno, function_of.get(id(node)), "mvlsib.jsonio.loads"))
        elif isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load):
            found.append((node.lineno, function_of.get(id(node)), names[node.id]))
    return found


MODULES = sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(SRC).as_posix())
def test_no_parser_outside_the_reader_layer(path):
    rel = path.relative_to(SRC).as_posix()
    stray = [f"{rel}:{line}: {name}" for line, name in parser_calls(path) if (rel, name) not in ALLOWED]
    assert not stray, (
        "external input parsed outside mvlsib.readers (register its kind there and read it through "
        "read_json / json_lines / read_yaml / read_parquet / parse_option, a CSV through csvio.read_dicts, "
        "or, when it parses what the "
        f"toolkit itself just wrote, add it to ALLOWED with why): {stray}"
    )


@pytest.mark.parametrize("allowance", sorted(BOUNDED_IN), ids="/".join)
def test_a_standalone_module_parses_only_in_its_bounded_read(allowance):
    """Every parse the allowance covers lies in its one function, and that function reads a bounded number
    of bytes (each ``read`` with a size) and parses nothing read whole (no ``json.load`` of a handle)."""
    rel, parser = allowance
    path = SRC / rel
    function = BOUNDED_IN[allowance]
    uses = [(line, fn) for line, fn, name in parser_uses(path) if name == parser]
    assert uses and all(fn == function for _, fn in uses), f"{rel}: {parser} outside {function}: {uses}"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    reads = [
        n
        for n in ast.walk(body)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "read"
    ]
    assert reads and all(r.args for r in reads), f"{rel}: {function} must read with a size bound"


def test_the_bounded_read_scan_sees_an_unbounded_parse(tmp_path):
    """The gap closed: a module allowed ``json.loads`` once gains a ``json.load`` of a whole file elsewhere."""
    module = tmp_path / "probe.py"
    module.write_text(
        "import json\ndef bounded(fh):\n    return json.loads(fh.read(10))\n"
        "def whole(fh):\n    return json.load(fh), json.loads(fh.read())\n",
        encoding="utf-8",
    )
    uses = parser_uses(module, "mvlsib.probe")
    assert sorted((fn, name) for _, fn, name in uses) == [
        ("bounded", "json.loads"),
        ("whole", "json.load"),
        ("whole", "json.loads"),
    ]


def test_every_allowance_is_still_used():
    used = {(p.relative_to(SRC).as_posix(), name) for p in MODULES for _, name in parser_calls(p)}
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"ALLOWED entries that no longer parse anything: drop them: {stale}"


def test_the_scan_sees_each_spelling(tmp_path):
    """The scan itself: each way of reaching a parser is found."""
    module = tmp_path / "probe.py"
    text = (
        "import json\nimport yaml as y\nimport pyarrow.parquet as pq\nfrom json import loads as L\n"
        "from . import jsonio\nfrom pyarrow import parquet\nimport csv as c\nfrom csv import reader\n"
        "json.load(f); y.safe_load(t); pq.ParquetFile(p); L(t); jsonio.loads(b); parquet.read_table(p)\n"
        "c.DictReader(fh); reader(fh)\n"
    )
    module.write_text(text, encoding="utf-8")
    names = sorted(name for _, name in parser_calls(module, "mvlsib.probe"))
    assert names == sorted(
        [
            "json.load",
            "yaml.safe_load",
            "pyarrow.parquet.ParquetFile",
            "json.loads",
            "mvlsib.jsonio.loads",
            "pyarrow.parquet.read_table",
            "csv.DictReader",
            "csv.reader",
        ]
    )


@pytest.mark.parametrize("name", sorted(readers.KINDS))
def test_every_kind_declares_its_shape_and_bounds(name):
    kind = readers.KINDS[name]
    assert kind.max_bytes > 0 and kind.max_depth > 0 and kind.fix
    assert kind.surrogates in ("refuse", "escape")
    if kind.schema is None:
        assert kind.shape, f"{name}: no schema, so `shape` must say where its shape is checked"
    else:
        from jsonschema import Draft202012Validator

        Draft202012Validator.check_schema(readers.schema(name))


# (module, line's function) -> why it may open a file for reading without ``readers.open_input``
# (``read_text``/``read_bytes`` read a FIFO for ever and a huge file whole, as ``open`` does)
OPEN_ALLOWED = {
    ("schema/validators.py", "load_schema"): "package data",
    ("schema/validators.py", "release_row_schema"): "package data",
    ("readers.py", "schema"): "package data",
    ("release/card/render.py", "render_card"): "package data (the card template)",
    ("release/card/sections.py", "sampling_markdown"): "package data",
    ("release/bundle.py", "_imported_tops"): "the toolkit's own source files",
    ("release/bundle.py", "bundle_files"): "the toolkit's own source files",
    ("release/exports/inspect_eval.py", "export_inspect"): "package data (the task template)",
    ("evaluation/scale/collect.py", "collect"): "the batch manifest read_manifest has just read (bounded, regular)",
    ("evaluation/run/runner.py", "_sort_predictions"): "the predictions file this run has just written",
    ("release/hub.py", "retarget_card"): "README.md and eval.yaml of a release verify_release checked against "
    "its manifest (sizes and hashes)",
    ("atomic.py", "_zombie"): "the kernel's /proc/PID/stat of a process, not an input",
    ("atomic.py", "sha256_file"): "hashes files it found regular (folder_files, the ledger's _digest)",
    ("release/hub.py", "git_blob_id"): "files of the release being uploaded, listed by its own manifest",
    ("release_format/mvl_sib.py", "manifest_problems"): "standalone loader (no mvlsib beside it): hashes the "
    "listed files it found regular",
    ("release/exports/templates/inspect_task.py", None): "package data beside the task file",
    ("release/exports/templates/lmms_eval_utils.py", None): "package data beside the task file",
}


def _reading_opens(tree: ast.AST):
    """(line, enclosing function, what) of every builtin ``open`` for reading and ``Image.open`` of a path."""
    found = []

    def visit(node, function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id == "open":
                mode = (
                    node.args[1]
                    if len(node.args) > 1
                    else next((k.value for k in node.keywords if k.arg == "mode"), None)
                )
                text = mode.value if isinstance(mode, ast.Constant) else ("r" if mode is None else "")
                if "r" in text and "+" not in text:
                    found.append((node.lineno, function, "open"))
            elif isinstance(f, ast.Attribute) and f.attr in ("read_text", "read_bytes"):
                found.append((node.lineno, function, f.attr))
            elif (
                isinstance(f, ast.Attribute)
                and f.attr == "open"
                and getattr(f.value, "id", None) == "Image"
                and node.args
            ):
                arg = node.args[0]
                wrapped = isinstance(arg, ast.Call) and getattr(arg.func, "attr", getattr(arg.func, "id", "")) in (
                    "BytesIO",
                    "open_input",
                )
                if not wrapped and not (isinstance(arg, ast.Name) and arg.id in ("fh", "fp")):
                    found.append((node.lineno, function, "Image.open"))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return found


def test_input_files_are_opened_through_open_input():
    """A FIFO where a TSV or an image belongs would make ``open`` wait for a writer for ever; a device
    would stream without end. ``readers.open_input`` refuses both by the file it opened."""
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for line, function, what in _reading_opens(ast.parse(path.read_text("utf-8"))):
            if (rel, function) not in OPEN_ALLOWED:
                bad.append(f"{rel}:{line} ({function}): {what}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("special", ["fifo", "folder", "/dev/zero", "symlink to fifo"])
def test_open_input_refuses_what_is_not_a_regular_file_without_waiting(special, tmp_path):
    import os

    path = tmp_path / "x"
    if special == "fifo":
        os.mkfifo(path)
    elif special == "folder":
        path.mkdir()
    elif special == "symlink to fifo":
        os.mkfifo(tmp_path / "f")
        path.symlink_to(tmp_path / "f")
    else:
        path = Path(special)
    with pytest.raises((readers.ReadError, IsADirectoryError), match="not a regular file|Is a directory"):
        readers.open_input(path)


def _line_loops(tree: ast.AST) -> list[int]:
    """Lines of ``for ... in F`` / ``enumerate(F)`` / ``F.readline()`` / ``F.readlines()`` over a handle
    ``F`` that a ``with`` bound from ``open_input`` (directly or wrapped): a line read this way has no
    bound, so a file without a line break is read whole into memory."""
    handles: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.With):
            for item in node.items:
                opens = any(
                    isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", "")) == "open_input"
                    for n in ast.walk(item.context_expr)
                )
                if opens and isinstance(item.optional_vars, ast.Name):
                    handles.add(item.optional_vars.id)
    found = []
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.For):
            target = node.iter
            if isinstance(target, ast.Call) and getattr(target.func, "id", "") == "enumerate" and target.args:
                target = target.args[0]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") in ("readline", "readlines"):
            if not node.args:  # readline(n) is bounded
                target = node.func.value
        if isinstance(target, ast.Name) and target.id in handles:
            found.append(node.lineno)
    return found


def test_no_line_is_read_without_a_bound():
    """Lines of an input file come from ``readers.read_lines``/``json_lines`` (or a ``csvio`` reader),
    each bounded as it is read, never from iterating over a handle."""
    bad = []
    for path in MODULES:
        rel = path.relative_to(SRC).as_posix()
        bad += [f"{rel}:{line}" for line in _line_loops(ast.parse(path.read_text("utf-8")))]
    assert not bad, "unbounded line reads: " + ", ".join(bad)


def test_the_line_scan_sees_each_spelling():
    code = """
with readers.open_input(p) as fh:
    for line in fh: pass
with io.TextIOWrapper(readers.open_input(p)) as g:
    for i, line in enumerate(g, 1): pass
with open_input(p) as h:
    h.readline()
    h.readline(100)
"""
    assert _line_loops(ast.parse(code)) == [3, 5, 7]


def _integer_subschemas(node, where=""):
    if isinstance(node, dict):
        if node.get("type") == "integer" or (isinstance(node.get("type"), list) and "integer" in node["type"]):
            yield where, node
        for key, value in node.items():
            yield from _integer_subschemas(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _integer_subschemas(value, f"{where}/{i}")


INTEGER_FIELDS = [
    pytest.param(sub, id=f"{path.stem}{where}")
    for path in sorted((SRC / "schema").glob("*.schema.json"))
    for where, sub in _integer_subschemas(readers.jsonio.loads(path.read_text("utf-8")))
]


@pytest.mark.parametrize("subschema", INTEGER_FIELDS)
def test_every_integer_of_every_schema_refuses_a_float_and_a_bool(subschema):
    """Generated from the schema files: an integral float (3.0) or a bool passes JSON Schema's
    "integer", and is then used as an index or a count; the one validator refuses both."""
    validator = readers.schema_validator({k: v for k, v in subschema.items() if k != "$defs"})
    low = subschema.get("minimum", 0)
    assert validator.is_valid(low)
    assert not validator.is_valid(float(low)) and not validator.is_valid(True) and not validator.is_valid(False)


def test_the_integer_walk_sees_the_schemas():
    assert len(INTEGER_FIELDS) >= 5
