"""Write a release's evaluator: readable source files, the same code, no second copy.

The modules of ``mvlsib.evaluation`` are copied verbatim at publish time into the
release folder under the package name ``mvlsib_evaluate/`` (plus the leaf modules they
use, once, in ``mvlsib_evaluate/_shared/``), and ``evaluate.py`` is a short launcher that
imports it. Everything is plain ``.py`` text a reader can review on the Hub. The copied
package reaches nothing outside itself except through ``_compat``, which in a release
uses the release's own ``mvl_sib.py`` loader (and its task table). The same toolkit
version therefore always writes byte-identical files (``tests/release/test_bundle.py``
compares them with the package's own sources).
"""

from __future__ import annotations

import ast
import io
import textwrap
import zipfile
from pathlib import Path

import mvlsib
import mvlsib.evaluation
from mvlsib import readers
from mvlsib.atomic import atomic_open, atomic_path
from mvlsib.evaluation.requirements import PATHS, pip_line

BUNDLE_PACKAGE = "mvlsib_evaluate"


def _leaf_imports(tree: ast.AST, *, relative: bool) -> set[str]:
    """The top-level mvlsib modules a module imports: ``from mvlsib import x``, ``from mvlsib.x import ...``
    and, for a leaf (``relative``), ``from . import x`` and ``from .x import ...``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0 and node.module == "mvlsib" or relative and node.level == 1 and node.module is None:
            names |= {alias.name for alias in node.names}
        elif node.level == 0 and node.module and node.module.startswith("mvlsib."):
            names.add(node.module.split(".")[1])
        elif relative and node.level == 1 and node.module:
            names.add(node.module.split(".")[0])
    return names


def shared_leaves() -> tuple[str, ...]:
    """The leaves of mvlsib the evaluator uses: those ``evaluation/_compat.py`` (its only door out) imports,
    and the leaves those import in turn. ``_compat`` is the one declaration; the release format's loader
    ships as the release's own ``mvl_sib.py`` instead."""
    src = Path(mvlsib.__file__).resolve().parent
    compat = ast.parse((src / "evaluation" / "_compat.py").read_text("utf-8"))
    todo = _leaf_imports(compat, relative=False) - {"release_format"}
    found: set[str] = set()
    while todo:
        name = todo.pop()
        found.add(name)
        todo |= _leaf_imports(ast.parse((src / f"{name}.py").read_text("utf-8")), relative=True) - found
    return tuple(sorted(found))


SHARED_LEAVES = shared_leaves()
TOOLKIT_VERSION = mvlsib.__version__
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip entries' timestamp: the same bytes on every build


def bundle_files() -> list[tuple[str, bytes]]:
    """``(path inside mvlsib_evaluate/, bytes)`` of every file of the release's evaluator package, sorted."""
    # Exactly the evaluator package: test fixtures live in tests/tiny_models, never in here.
    root = Path(mvlsib.evaluation.__file__).resolve().parent
    # Package data read through pkgutil.get_data (which zipimport serves) ships too: the language table.
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".csv") and "__pycache__" not in p.parts
    )
    out = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in files]
    # The leaf modules the evaluator uses (through _compat), copied once beside it: no second copy.
    shared = Path(mvlsib.__file__).resolve().parent
    out.append(("_shared/__init__.py", b'"""Leaf modules of mvlsib used by the release\'s evaluator."""\n'))
    for name in SHARED_LEAVES:
        out.append((f"_shared/{name}.py", (shared / f"{name}.py").read_bytes()))
    # The schemas of the reader's kinds, where the reader finds them (a package beside it).
    out.append(("_shared/schema/__init__.py", b'"""The JSON Schemas of the reader\'s input kinds."""\n'))
    for schema_name in sorted({k.schema for k in readers.KINDS.values() if k.schema}):
        path = shared / "schema" / f"{schema_name}.schema.json"
        out.append((f"_shared/schema/{path.name}", path.read_bytes()))
    info = (
        '"""Written by mvlsib-build\'s release/bundle.py: this package is mvlsib.evaluation, copied."""\n'
        f"VERSION = {TOOLKIT_VERSION!r}\n"
    ).encode()
    out.append(("_bundle_info.py", info))
    return sorted(out)


def bundle_zip() -> bytes:
    """The same package as one deterministic zip archive (sorted entries, fixed timestamps), for
    places that ship the evaluator as a single file (the lmms-eval export imports it with zipimport)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in bundle_files():
            info = zipfile.ZipInfo(f"{BUNDLE_PACKAGE}/{name}", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, data, compresslevel=9)
    return buf.getvalue()


_TEMPLATE = '''#!/usr/bin/env python3
"""MVL-SIB reference evaluator of this release (mvlsib-build {version}).

    python evaluate.py --data . --model MODEL_DIR_OR_HUB_ID --out RUN_DIR [--tasks i2s,s2i,t2s,s2t] [--k 1,3,5]
    python evaluate.py --backend openai --base-url http://localhost:8000/v1 --model NAME --out RUN_DIR
    python evaluate.py merge RUN_DIR --out RUN_DIR      # combine --shard I/N runs
    python evaluate.py report RUN_DIR [RUN2 ...] --out REPORT_DIR
    python evaluate.py --help

What each path needs installed (pip packages: every path the first line's, the others add theirs):
{requirements}
The mvlsib package is not needed: the evaluator's code is the
folder {package}/ beside this file (the `mvlsib.evaluation` package of mvlsib-build
{version}, copied verbatim; the prompts are in {package}/prompts.py), and the loader is
this folder's mvl_sib.py. Generated file: do not edit; regenerate with `mvlsib-build publish`.
"""

import os
import sys

if __name__ == "__main__":
    # No __pycache__ inside the release folder: its files are checked against manifest.json.
    sys.dont_write_bytecode = True
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    # What every path imports before the error boundary exists (the rest it names in one line itself).
    try:
        import click  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as exc:
        sys.exit(f"evaluate.py needs {{exc.name}}, which is not installed: {core}")
    # The evaluator package imports the release's own loader (mvl_sib.py, beside this file).
    # Its commands run inside the package's error boundary; an unreadable file of the package
    # itself fails before that boundary exists, so it gets the same one line here.
    try:
        from {package}.commands import standalone_main
    except OSError as exc:
        where = exc.filename or "a file of this release"
        print(f"{{where!r}}: {{exc.strerror or exc}}; check that the release folder is readable (ls -l)", file=sys.stderr)
        sys.exit(2)

    standalone_main()
'''


def requirements_text() -> str:
    """The docstring's list of what each path of ``evaluate.py`` needs, from the evaluator's own table."""
    lines = []
    for i, (path, packages) in enumerate(PATHS):
        need = pip_line(packages) if i == 0 else "+ " + " ".join(packages)
        if len(f"  {path}: {need}") <= 96:
            lines.append(f"  {path}: {need}")
        else:  # the label wraps; the packages stay on one line of their own (a line to paste)
            lines += textwrap.wrap(f"{path}:", 96, initial_indent="  ", subsequent_indent="  ")
            lines.append(f"      {need}")
    return "\n".join(lines)


def evaluate_script() -> str:
    """The text of ``evaluate.py``."""
    return _TEMPLATE.format(
        version=TOOLKIT_VERSION,
        package=BUNDLE_PACKAGE,
        requirements=requirements_text(),
        core=pip_line(PATHS[0][1]),
    )


def write_evaluate_script(path: str | Path) -> Path:
    """Write the evaluator to ``path`` (normally RELEASE/evaluate.py) and its package beside it."""
    path = Path(path)
    package = path.parent / BUNDLE_PACKAGE
    for rel, data in bundle_files():
        target = package / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(target) as tmp:
            Path(tmp).write_bytes(data)
    with atomic_open(path) as fh:
        fh.write(evaluate_script())
    return path
