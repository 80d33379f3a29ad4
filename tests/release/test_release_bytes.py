"""README command 1's release, byte for byte: the same on every Python and install mode.

The sha256 of every data file and of the card of the full build (all languages of
../shared/sib-200, seed 0, the bundled pool, run from the checkout's root as the README does)
are pinned in ``golden/release-seed0.json``. The core session runs this under Python 3.11, the
py310 and py313 sessions under 3.10 and 3.13 (noxfile.py), the lowest session with the lowest
declared libraries: all must give these bytes. The evaluator's code and ``manifest.json`` (which
records the Python and library versions) are left out: they are not data.
Regenerate only on a deliberate change of the data: ``MVLSIB_WRITE_GOLDEN=1 pytest this file``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from support import REPO

from mvlsib.pipeline import build

GOLDEN = Path(__file__).parent / "golden" / "release-seed0.json"


def _pinned(release: Path) -> dict[str, str]:
    files = sorted(release.glob("data/**/*.parquet")) + [release / "README.md", release / "eval.yaml"]
    return {p.relative_to(release).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.mark.usefixtures("sib_dir")
def test_the_full_release_has_the_pinned_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)  # the README's command runs here, naming ../shared/sib-200
    build("../shared/sib-200", tmp_path / "release", workdir=tmp_path / "work", progress=False)
    got = {
        "instances.jsonl": hashlib.sha256((tmp_path / "work" / "instances.jsonl").read_bytes()).hexdigest(),
        **_pinned(tmp_path / "release"),
    }
    if os.environ.get("MVLSIB_WRITE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got["instances.jsonl"].startswith("6a62ee05")
    assert len([name for name in got if name.endswith(".parquet")]) == 201
    differ = sorted(name for name in want.keys() | got.keys() if want.get(name) != got.get(name))
    assert differ == [], f"{len(differ)} files differ from {GOLDEN.name}: {differ[:10]}"


@pytest.mark.usefixtures("sib_dir")
def test_a_release_does_not_depend_on_where_its_inputs_lie(tmp_path, sib_dir):
    """Two machines with the same data in different folders publish the same bytes, manifest included."""
    import shutil

    trees = []
    for where in ("a", "b/deeper/still"):
        folder = tmp_path / where / "sib-200" / "data" / "annotated"
        for lang in ("eng_Latn", "fra_Latn"):
            shutil.copytree(sib_dir / "data" / "annotated" / lang, folder / lang)
        out = tmp_path / where / "release"
        build(str(tmp_path / where / "sib-200"), out, workdir=tmp_path / where / "work", progress=False)
        assert str(tmp_path) not in (out / "manifest.json").read_text(encoding="utf-8")
        trees.append({p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()})
    assert trees[0].keys() == trees[1].keys()
    assert [name for name in trees[0] if trees[0][name] != trees[1][name]] == []
