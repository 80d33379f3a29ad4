"""Write a release's standalone ``evaluate.py``: the same evaluator code, no second copy.

The modules of ``mvlsib.evaluation`` are packed at publish time into a deterministic
zip (sorted entries, fixed timestamps and permissions) under the package name
``mvlsib_evaluate``, embedded in ``evaluate.py`` as base64 and imported through
``zipimport``. The bundled package reaches nothing outside itself except through
``_compat``, which in bundled mode uses the release's own ``mvl_sib.py`` loader (and its task table).
The same toolkit version therefore always writes a byte-identical ``evaluate.py``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from pathlib import Path

import mvlsib
import mvlsib.evaluation
from mvlsib import __version__ as TOOLKIT_VERSION
from mvlsib.atomic import atomic_open

BUNDLE_PACKAGE = "mvlsib_evaluate"
# Leaves of mvlsib that the evaluator needs: each imports nothing from mvlsib itself.
SHARED_LEAVES = ("atomic", "csvio", "errors", "httpio", "locks", "versions")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def _sources() -> list[tuple[str, bytes]]:
    # Exactly the evaluator package: test fixtures live in mvlsib.testing, never in here.
    root = Path(mvlsib.evaluation.__file__).resolve().parent
    # Package data read through pkgutil.get_data (which zipimport serves) ships too: the language table.
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".csv")
                   and "__pycache__" not in p.parts)
    out = [(p.relative_to(root).as_posix(), p.read_bytes()) for p in files]
    # The leaf modules the evaluator uses (through _compat), packed once beside it: no second copy.
    shared = Path(mvlsib.__file__).resolve().parent
    out.append(("_shared/__init__.py", b'"""Leaf modules of mvlsib used by the bundled evaluator."""\n'))
    for name in SHARED_LEAVES:
        out.append((f"_shared/{name}.py", (shared / f"{name}.py").read_bytes()))
    info = f'"""Written by bundle.py."""\nVERSION = {TOOLKIT_VERSION!r}\n'.encode("utf-8")
    out.append(("_bundle_info.py", info))
    return sorted(out)


def bundle_zip() -> bytes:
    """The evaluator package as a deterministic zip archive."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in _sources():
            info = zipfile.ZipInfo(f"{BUNDLE_PACKAGE}/{name}", date_time=_FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zf.writestr(info, data, compresslevel=9)
    return buf.getvalue()


_TEMPLATE = '''#!/usr/bin/env python3
"""MVL-SIB reference evaluator, bundled with this release (mvlsib-build {version}).

    python evaluate.py --data . --model MODEL_DIR_OR_HUB_ID --out RUN_DIR [--tasks i2s,s2i,t2s,s2t] [--k 1,3,5]
    python evaluate.py --backend openai --base-url http://localhost:8000/v1 --model NAME --out RUN_DIR
    python evaluate.py merge RUN_DIR --out RUN_DIR      # combine --shard I/N runs
    python evaluate.py report RUN_DIR [RUN2 ...] --out REPORT_DIR
    python evaluate.py --help

Needs torch, transformers, pyarrow (or datasets for Hub repos), pillow, click and tqdm;
matplotlib for `report`. The mvlsib package is not needed: the evaluator's code (the
`mvlsib.evaluation` package of mvlsib-build {version}) is embedded below as a zip archive
(sha256 {sha256}) and imported with zipimport; the loader is this folder's mvl_sib.py.
Generated file: do not edit; regenerate with `mvlsib-build publish`.
"""

import atexit
import base64
import hashlib
import os
import shutil
import sys
import tempfile

_BUNDLE_SHA256 = "{sha256}"
_BUNDLE = """
{payload}
"""


def _load():
    data = base64.b64decode("".join(_BUNDLE.split()))
    if hashlib.sha256(data).hexdigest() != _BUNDLE_SHA256:
        sys.exit("evaluate.py: the embedded evaluator archive is damaged (sha256 mismatch); re-download the release")
    tmp = tempfile.mkdtemp(prefix="mvlsib-evaluate-")
    atexit.register(shutil.rmtree, tmp, True)
    path = os.path.join(tmp, "mvlsib_evaluate.zip")
    with open(path, "wb") as fh:
        fh.write(data)
    sys.path.insert(0, path)
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(1, here)
    # The bundled package imports the release's own loader (mvl_sib.py, beside this file).
    from {package}.commands import standalone_main

    return standalone_main


if __name__ == "__main__":
    try:
        import click  # noqa: F401
    except ImportError:
        sys.exit("evaluate.py needs the click package: pip install click")
    _load()()
'''


def evaluate_script() -> str:
    """The text of ``evaluate.py``."""
    data = bundle_zip()
    b64 = base64.b64encode(data).decode("ascii")
    payload = "\n".join(b64[i : i + 100] for i in range(0, len(b64), 100))
    return _TEMPLATE.format(
        version=TOOLKIT_VERSION,
        sha256=hashlib.sha256(data).hexdigest(),
        payload=payload,
        package=BUNDLE_PACKAGE,
    )


def write_evaluate_script(path: str | Path) -> Path:
    """Write the standalone evaluator to ``path`` (normally RELEASE/evaluate.py)."""
    path = Path(path)
    with atomic_open(path) as fh:
        fh.write(evaluate_script())
    return path
