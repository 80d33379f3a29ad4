"""Helpers importable from any test module (``from support import ...``; tests/ is on sys.path).

Fixtures live in conftest.py files; plain functions and constants live here, because
``from conftest import ...`` breaks as soon as a sub-folder has its own conftest.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from mvlsib.builder.ingest import ingest
from mvlsib.builder.sample import sample, sample_report
from mvlsib.workdir import CORPUS_COLUMNS
from mvlsib.workdir.corpus import Corpus, load_corpus, save_corpus
from mvlsib.workdir.instances import save_instances, save_sample_report

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
SIB_DIR = SHARED / "sib-200"
TOPIC_PHOTOS = SHARED / "topic-photos"
POOL_DIR = REPO / "src" / "mvlsib" / "data" / "image_pool"
# Root without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH: mode bits bind, as they do for any other user
# (CI and these machines run the suite as root).
DROP_CAPS = ["setpriv", "--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]
# The languages of the evaluator tests' release: one Latin-script, one right-to-left.
EVAL_LANGUAGES = ("eng_Latn", "arb_Arab")
# A user turn with two images between text parts: how the family tests probe where a template puts images.
TWO_IMAGE_TURN = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "Images:\n"},
            {"type": "image"},
            {"type": "text", "text": "\n"},
            {"type": "image"},
            {"type": "text", "text": "\nWhich?"},
        ],
    }
]


def read_corpus(workdir: str | os.PathLike[str]):
    """``WORK/corpus.parquet`` as a pandas DataFrame: language, index_id, split, topic, text
    (string/int64 dtypes). pandas is for tests only: no stage imports it."""
    import pandas as pd
    import pyarrow as pa

    table = load_corpus(workdir).table
    df = table.to_pandas(types_mapper={pa.string(): pd.StringDtype(), pa.large_string(): pd.StringDtype()}.get)
    df["index_id"] = df["index_id"].astype("int64")
    return df


def corpus_from_frame(frame) -> Corpus:
    """A ``Corpus`` from a DataFrame with the corpus columns (missing values become None)."""
    columns = {}
    for name in CORPUS_COLUMNS:
        if name in frame.columns:
            values = frame[name].astype(object).where(frame[name].notna(), None).tolist()
            columns[name] = [int(v) for v in values] if name == "index_id" else values
    return Corpus(columns=columns)


def release_requests(release_dir, task_ks, per_language: int = 2):
    """The evaluator's requests for the first ``per_language`` instances of each of
    ``EVAL_LANGUAGES`` in a release, per ``(task, k)``; and the images they show (id -> image)."""
    from mvlsib.evaluation.backends import Request
    from mvlsib.evaluation.run.prompts import prompt_for_example
    from mvlsib.release_format import mvl_sib

    images = mvl_sib.load_images(str(release_dir))
    reqs = []
    for language in EVAL_LANGUAGES:
        rows = mvl_sib.load_rows(language, str(release_dir))[:per_language]
        for task, k in task_ks:
            for ex in mvl_sib.build_examples(rows, images, task, k):
                p = prompt_for_example(ex)
                reqs.append(Request(f"{task}|{k}|{language}|{ex['instance_id']}", tuple(p.messages()), p.image_ids))
    needed = {i for r in reqs for i in r.image_ids}
    return reqs, {i: images[i] for i in sorted(needed)}


def one_line_cli_error(cli, *args) -> str:
    """Invoke ``cli`` with ``args``; assert it keeps the error contract (``support.cli_contract``: exit 2,
    one line, no traceback; transformers may draw its weight-loading bar first); return that line."""
    from click.testing import CliRunner

    from support.cli_contract import refused

    return refused(CliRunner().invoke(cli, [str(a) for a in args]), prefixed=False)


# Runs ``mvlsib-eval`` in a child process in which the named packages behave as not installed
# (``import`` fails, ``find_spec`` is None, so transformers' availability checks say False too).
_WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
from mvlsib.cli import eval_cli
eval_cli.main(sys.argv[2:], prog_name="mvlsib-eval")
"""


def one_line_eval_error_without(packages: tuple[str, ...], *args) -> str:
    """``one_line_cli_error`` of ``mvlsib-eval ARGS`` where ``packages`` are not installed (the eval
    session has them all: this is how it checks the refusals a user without them gets)."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT, ",".join(packages), *map(str, args)],
        env=subprocess_env(OMP_NUM_THREADS="1"),
        capture_output=True,
        text=True,
        timeout=600,
    )
    from support.cli_contract import refused

    return refused(done, prefixed=False)


def prefix_ordered_requests(release_dir):
    """i2s k=1,3, s2i k=1 and s2t k=1 for 2 instances in both languages, in the evaluator's prefix order
    (what the KV-prefix tests send), and the images they show."""
    from mvlsib.evaluation.run.schedule import prefix_order

    reqs, images = release_requests(release_dir, [("i2s", 1), ("i2s", 3), ("s2i", 1), ("s2t", 1)])
    return prefix_order(reqs, messages_of=lambda r: r.messages), images


def tiny_hf_backend(model, images, **options):
    """The hf backend on CPU as the reuse tests run it (batch 4, 3 new tokens, no feature cache unless
    ``options`` say so), its images set."""
    from mvlsib.evaluation.backends import make_backend

    options.setdefault("feature_cache_mb", 0)
    b = make_backend("hf", model=str(model), batch_size=4, device="cpu", max_new_tokens=3, **options)
    b.set_images(images)
    return b


def subprocess_env(**extra: str) -> dict[str, str]:
    """Environment for running the package from this checkout in a child process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


# Prelude for scripts that must prove the release works without the toolkit: run in a child
# process with cwd = the release folder, it removes every path entry that provides `mvlsib`
# and stops if `mvlsib` is still importable.
WITHOUT_MVLSIB = r"""
import json, os, sys
here = os.path.abspath(".")
sys.path[:] = [p for p in sys.path if not os.path.isdir(os.path.join(p or here, "mvlsib"))]
try:
    import mvlsib  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("mvlsib is importable; the test would prove nothing")
"""


def write_workdir(work: Path, sib: Path, pool: Path, *, languages=None, seed: int = 0) -> Path:
    """A work folder as `mvlsib-build ingest` then `sample` leave it: corpus, ingest report, instances, sample report."""
    corpus = ingest(str(sib), languages=languages, progress=False)
    save_corpus(work, corpus)
    instances = sample(corpus, pool, seed, progress=False)
    save_instances(work, [inst.as_dict() for inst in instances])
    save_sample_report(work, sample_report(corpus, pool, instances, seed).to_dict())
    return work


def selected_env(config) -> str:
    """The test environment this run selects (``--env``; default: all where the [eval] extra is installed)."""
    env = config.getoption("--env")
    if env is None:
        import importlib.util

        have_eval = all(importlib.util.find_spec(name) for name in ("torch", "transformers"))
        env = "all" if have_eval else "core"
    return env
