"""Write a release's evaluator: readable source files, the same code, no second copy.

The evaluator's modules are copied verbatim at publish time into the release folder under the
package name ``mvlsib_evaluate/``, laid out as they are in ``mvlsib``: ``evaluation/`` (the
evaluator), ``cli/eval/`` and ``cli/options.py`` (``mvlsib-eval``'s commands and their options)
and, at the top, the leaf modules these import. Every relative import therefore reaches the same
code as in the toolkit, unchanged; ``evaluate.py`` is a short launcher of the commands. Everything
is plain ``.py`` text a reader can review on the Hub. The only difference is chosen by
``evaluation/_compat.py``: in a release it takes the task table from the release's own
``mvl_sib.py`` loader. The same toolkit version therefore always writes byte-identical files
(``tests/release/test_bundle.py`` compares them with the package's own sources).
"""

from __future__ import annotations

import ast
import functools
import io
import textwrap
import zipfile
from pathlib import Path

import mvlsib
from mvlsib import readers
from mvlsib.atomic import atomic_open, atomic_path
from mvlsib.evaluation.requirements import PATHS, pip_line

BUNDLE_PACKAGE = "mvlsib_evaluate"
# What of mvlsib makes the release's evaluator (paths inside src/mvlsib): the evaluator and the
# commands of mvlsib-eval with the options they share; the leaves they import come with them.
BUNDLED = ("evaluation", "cli/eval", "cli/options.py")
# The release format's loader ships as the release's own mvl_sib.py, which _compat imports there.
LOADER_PACKAGE = "release_format"
# Package files of mvlsib that are not copied (they import the rest of the toolkit): each stands
# in the bundle as a docstring (and, at the top, the version the front door gives).
_STUBS = {
    "cli/__init__.py": "The commands of mvlsib-eval (cli/eval) and their options: the toolkit's, copied.",
    "schema/__init__.py": "The JSON Schemas of the reader's input kinds.",
}
_SRC = Path(mvlsib.__file__).resolve().parent


def _source_files() -> list[Path]:
    """The ``.py`` files of ``BUNDLED`` and the package data they read (the language table), sorted."""
    files: list[Path] = []
    for part in BUNDLED:
        path = _SRC / part
        if path.is_file():
            files.append(path)
        else:  # package data read through pkgutil.get_data (which zipimport serves) ships too
            files += [
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix in (".py", ".csv") and "__pycache__" not in p.parts
            ]
    return sorted(files)


def _import_nodes(source: str) -> list[ast.ImportFrom]:
    """The ``from ... import ...`` statements of a module, top-level or inside functions. Only the lines that
    start one (with their parenthesised continuation) are parsed, outside triple-quoted strings: parsing whole
    modules, every build, cost a build 0.17 CPU s (tests/release/test_bundle.py checks that this finds what a
    full parse finds, over the whole package)."""
    nodes: list[ast.ImportFrom] = []
    lines = source.splitlines()
    quote: str | None = None  # the triple quote of the string the current line is inside
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if quote is None and line.strip().startswith("from "):
            statement = [line.strip()]
            while "(" in statement[0] and ")" not in statement[-1] and i < len(lines):
                statement.append(lines[i].strip())
                i += 1
            nodes += [n for n in ast.parse("\n".join(statement)).body if isinstance(n, ast.ImportFrom)]
            continue
        for delimiter in ('"""', "'''"):
            if (quote is None or quote == delimiter) and line.count(delimiter) % 2:
                quote = None if quote else delimiter
    return nodes


def _imported_tops(path: Path) -> set[str]:
    """The top-level names of mvlsib that the module at ``path`` imports (relative imports resolved):
    ``from .. import x`` names ``x``, ``from ..x.y import z`` and ``from mvlsib.x import z`` name ``x``."""
    rel = path.relative_to(_SRC).with_suffix("")
    package = list(rel.parts if rel.name == "__init__" else rel.parts[:-1])
    if package and package[-1] == "__init__":
        package.pop()
    names: set[str] = set()
    for node in _import_nodes(path.read_text("utf-8")):
        module = node.module.split(".") if node.module else []
        if node.level:
            parts = package[: len(package) - (node.level - 1)] + module
        elif module[:1] == ["mvlsib"]:
            parts = module[1:]
        else:
            continue
        names |= {parts[0]} if parts else {alias.name for alias in node.names}
    return names


@functools.cache
def shared_leaves() -> tuple[str, ...]:
    """The leaf modules of mvlsib the bundled code imports, and the leaves those import in turn; found,
    not listed, so a new import cannot be forgotten. An import of any other part of the toolkit (which
    is not in a release) is refused here, at publish time."""
    bundled_tops = {part.split("/")[0] for part in BUNDLED}
    todo = set().union(*(_imported_tops(p) for p in _source_files() if p.suffix == ".py"))
    found: set[str] = set()
    while todo:
        name = todo.pop()
        if name in found or name in bundled_tops or name == LOADER_PACKAGE or name.startswith("__"):
            continue
        if not (_SRC / f"{name}.py").is_file():
            raise RuntimeError(f"the release's evaluator imports mvlsib.{name}, which is not a leaf module")
        found.add(name)
        todo |= _imported_tops(_SRC / f"{name}.py")
    return tuple(sorted(found))


TOOLKIT_VERSION = mvlsib.__version__
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip entries' timestamp: the same bytes on every build


def bundle_files() -> list[tuple[str, bytes]]:
    """``(path inside mvlsib_evaluate/, bytes)`` of every file of the release's evaluator package, sorted:
    each at its path inside ``mvlsib`` (test fixtures live in tests/tiny_models, never in here)."""
    out = [(p.relative_to(_SRC).as_posix(), p.read_bytes()) for p in _source_files()]
    out += [(f"{name}.py", (_SRC / f"{name}.py").read_bytes()) for name in shared_leaves()]
    # The schemas of the reader's kinds, where the reader finds them (a package beside it).
    for schema_name in sorted({k.schema for k in readers.KINDS.values() if k.schema}):
        out.append((f"schema/{schema_name}.schema.json", (_SRC / "schema" / f"{schema_name}.schema.json").read_bytes()))
    for rel, doc in _STUBS.items():
        out.append((rel, f'"""{doc}"""\n'.encode()))
    top = (
        '"""mvlsib-build\'s evaluator and mvlsib-eval\'s commands, copied by release/bundle.py at the places '
        'they have in mvlsib."""\n\n'
        f"__version__ = {TOOLKIT_VERSION!r}\n"
    )
    out.append(("__init__.py", top.encode()))
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
The mvlsib package is not needed: the evaluator's code is the folder {package}/ beside
this file (mvlsib-build {version}'s `evaluation/` package and `mvlsib-eval`'s commands, copied
verbatim at their places in mvlsib; the prompts are in {package}/evaluation/run/prompts.py),
and the loader is this folder's mvl_sib.py. Generated file: do not edit; regenerate with
`mvlsib-build publish`.
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
        from {package}.cli.eval import standalone_main
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
