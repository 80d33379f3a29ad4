"""Session fixtures of the evaluator tests: a tiny random-weight LLaVA and a real release.

Both are built here from real inputs (SIB-200 text, the bundled image pool) once per
test session; nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

LANGUAGES = ("eng_Latn", "arb_Arab")


@pytest.fixture(scope="session")
def tiny_llava(tmp_path_factory, sib_dir) -> Path:
    """A random-weight LLaVA whose output layer favours the letters A-D (answers are letters
    or garbage, so parsing, scoring and format errors all get exercised)."""
    from mvlsib.evaluation.tiny_models import build_tiny_llava, sib_sentences

    out = tmp_path_factory.mktemp("tiny-llava")
    return build_tiny_llava(out, sib_sentences(sib_dir, LANGUAGES, limit=150), letter_scale=3.0)


@pytest.fixture(scope="session")
def release_dir(tmp_path_factory, sib_dir, pool_dir) -> Path:
    """A release folder made by the real pipeline (ingest -> sample -> publish) for two languages."""
    from mvlsib.builder.ingest import ingest
    from mvlsib.builder.publish import publish
    from mvlsib.builder.sample import sample

    base = tmp_path_factory.mktemp("release")
    work = base / "work"
    ingest(work, sib=sib_dir, languages=",".join(LANGUAGES), progress=False)
    sample(work, seed=0, pool=pool_dir, progress=False)
    publish(work, base / "rel", pool_dir, progress=False)
    return base / "rel"
