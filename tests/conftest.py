"""Shared fixtures. Real data lives in ../shared beside the checkout and is never copied."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

# One torch (OpenMP/MKL) thread per test worker: xdist runs a worker per core, and torch's
# all-cores default then oversubscribes the CI machine (2 threads under load ran 7-10x slower
# than 1). Set before anything imports torch; subprocesses inherit it, and the hf
# backend's --threads default follows OMP_NUM_THREADS.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import pytest
from hypothesis import settings
from support import EVAL_LANGUAGES, POOL_DIR, REPO, SIB_DIR, TOPIC_PHOTOS, read_corpus, selected_env, write_workdir

from mvlsib.pipeline import build
from mvlsib.workdir.instances import load_instances

# Which test environment (noxfile.py session) a test belongs to: ``pytest.mark.eval`` (needs the
# [eval] extra), ``pytest.mark.harness`` (runs the real harnesses), ``pytest.mark.vllm`` (starts real
# vLLM servers from the engine venv the vllm session makes), else the core. A module says
# it with ``pytestmark``, read here from its source before it is imported, so that ``--env core``
# never imports a module that needs torch; ``--env all`` (the default) runs everything.
ENVIRONMENTS = ("core", "eval", "harness", "vllm")
# Folders whose every module belongs to one environment.
FOLDER_ENVIRONMENTS = {
    "model_families": "eval",
    "torchvision_families": "eval",
    "tiny_models": "eval",
    "vllm_engine": "vllm",
}


# Tiers: plain ``pytest`` runs the ``unit`` tier (units, architecture, the core command paths: under
# two minutes on 2 cores); ``--tier all`` (the nox sessions) runs every tier. A module's tier is its
# ``pytestmark`` or the table below (by path under tests/, a folder or a module), else ``unit``.
TIERS = ("unit", "faults", "families", "e2e")
PATH_TIERS = {
    "model_families": "families",
    "torchvision_families": "families",
    "evaluation/test_families.py": "families",
    "evaluation/test_feature_cache.py": "families",
    "evaluation/test_kv_prefix.py": "families",
    "evaluation/test_load_and_library_errors.py": "families",
    "evaluation/test_reasoning_and_decoding.py": "families",
    "cli/test_fault_matrix.py": "faults",
    "cli/test_bad_input_walk.py": "faults",
    "cli/test_output_folders.py": "faults",
    "cli/test_hostile_values.py": "faults",
    "evaluation/test_plan_script.py": "faults",
    "test_hub_faults.py": "faults",
    "builder/test_ingest_faults.py": "faults",
    "evaluation/test_hub_data_faults.py": "faults",
    "evaluation/test_openai_faults.py": "faults",
    "evaluation/test_openai_hostile.py": "faults",
    "evaluation/test_run_file_faults.py": "faults",
    "release/test_hub_publish_faults.py": "faults",
    "release/test_hub_failed_publish.py": "faults",
    "release/test_release_faults.py": "faults",
    "release/test_card_hostile.py": "faults",
    "image_pool/test_pool_hostile_fields.py": "faults",
    "validation/test_invariant_faults.py": "faults",
    "generated": "faults",  # faults generated per reader kind and per bounded option
    "docs": "e2e",
    "packaging": "e2e",
    "verify_images/test_verify_images.py": "e2e",
    "evaluation/test_runner.py": "e2e",
    "release/test_exports.py": "e2e",
    "release/test_export_inspect.py": "e2e",
    "release/test_evaluate_requirements.py": "e2e",
    "release/test_release_bytes.py": "e2e",
    "test_pipeline.py": "e2e",
    # Whole releases built, published to the Hub stand-in, or run through batch files and waves:
    # each module builds its scene once and then checks it, which the unit tier leaves to CI.
    "release/test_release.py": "e2e",
    "release/test_provenance.py": "e2e",
    "release/test_publish_hub.py": "e2e",
    "evaluation/test_batch.py": "e2e",
    "evaluation/test_hub_results.py": "e2e",
    "evaluation/test_schedule.py": "e2e",
    "test_api.py": "e2e",
    "vllm_engine": "e2e",
}


def pytest_addoption(parser):
    parser.addoption(
        "--env",
        choices=(*ENVIRONMENTS, "all"),
        default=None,
        help="Run only the tests of one test environment (noxfile.py): core, eval, harness or vllm; default: "
        "all where the [eval] extra is installed, else core.",
    )
    parser.addoption(
        "--tier",
        choices=(*TIERS, "all"),
        default=None,
        help="Run one tier (unit, faults, families, e2e) or all; default: unit, or all when paths are given.",
    )


def pytest_configure(config):
    for name in ENVIRONMENTS[1:]:
        config.addinivalue_line("markers", f"{name}: belongs to the {name!r} test environment (noxfile.py)")
    for name in TIERS:
        config.addinivalue_line("markers", f"{name}: a test of the {name!r} tier (tests/conftest.py)")


def pytest_report_header(config):
    return f"mvlsib tests: --env {selected_env(config)} --tier {selected_tier(config)}"


def selected_tier(config) -> str:
    tier = config.getoption("--tier")
    if tier is None:
        tier = "all" if config.option.file_or_dir else "unit"
    return tier


def module_tier(path: Path) -> str:
    """The tier a test module declares (``pytestmark``), or the table's for its path, or ``unit``."""
    declared = _declared_marks(path) & set(TIERS)
    if declared:
        return sorted(declared)[0]
    rel = path.relative_to(Path(__file__).parent).as_posix()
    for key, tier in PATH_TIERS.items():
        if rel == key or rel.startswith(key + "/"):
            return tier
    return "unit"


@functools.cache
def _declared_marks(path: Path) -> frozenset[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            return frozenset(n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute))
    return frozenset()


@functools.cache
def module_environment(path: Path) -> str:
    """The environment a test module declares (``pytestmark``), or its folder's, or ``core``."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            marks = {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)}
            found = [name for name in ENVIRONMENTS[1:] if name in marks]
            if found:
                return found[0]
    for part in path.relative_to(Path(__file__).parent).parts[:-1]:
        if part in FOLDER_ENVIRONMENTS:
            return FOLDER_ENVIRONMENTS[part]
    return "core"


@functools.cache
def module_environments(path: Path) -> frozenset[str]:
    """Every environment a module has tests for: its own, and any a single test is marked with."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    marked = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "mark"
    }
    return frozenset({module_environment(path)} | (marked & set(ENVIRONMENTS[1:])))


def pytest_ignore_collect(collection_path, config):
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    env, tier = selected_env(config), selected_tier(config)
    if env != "all" and env not in module_environments(collection_path):
        return True
    if tier != "all" and module_tier(collection_path) != tier:
        return True
    return None


def pytest_collection_modifyitems(config, items):
    env = selected_env(config)
    keep, drop = [], []
    for item in items:
        marked = [name for name in ENVIRONMENTS[1:] if item.get_closest_marker(name)]
        own = marked[0] if marked else module_environment(Path(str(item.path)))
        if own != "core":
            item.add_marker(own)
        item.add_marker(module_tier(Path(str(item.path))))
        (keep if env in ("all", own) else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


# CI runs the property tests with a fixed seed, so a red build is reproducible; locally they explore.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _hub_offline_follows_the_environment():
    """huggingface_hub reads HF_HUB_OFFLINE once, when it is first imported: a test that sets it for
    its commands (the walks, the hostile values) would leave every later test of its worker offline."""
    yield
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
        constants.HF_HUB_OFFLINE = value.upper() in ("1", "ON", "YES", "TRUE")  # as constants.py reads it


def _require(path: Path, what: str) -> Path:
    if path.exists():
        return path
    msg = f"{what} not found at {path}: the tests need ../shared beside the checkout"
    if os.environ.get("CI"):
        # In CI a missing data folder is a broken setup, never a reason to skip.
        pytest.fail(msg, pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="session")
def sib_dir() -> Path:
    """The SIB-200 repository's data folder layout root (contains data/annotated)."""
    return _require(SIB_DIR, "SIB-200 data")


@pytest.fixture(scope="session")
def topic_photos_dir() -> Path:
    return _require(TOPIC_PHOTOS, "topic photographs")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def pool_dir() -> Path:
    return _require(POOL_DIR / "manifest.csv", "bundled image pool").parent


# A full work folder (all languages of ../shared/sib-200, seed 0, bundled pool), built once per session.
@pytest.fixture(scope="session")
def full_workdir(sib_dir: Path, pool_dir: Path, tmp_path_factory) -> Path:
    return write_workdir(tmp_path_factory.mktemp("work-full"), sib_dir, pool_dir)


@pytest.fixture(scope="session")
def full_corpus(full_workdir: Path):
    return read_corpus(full_workdir)


@pytest.fixture(scope="session")
def full_instances(full_workdir: Path) -> list[dict]:
    return load_instances(full_workdir)


# The evaluator's fixtures: a tiny random-weight LLaVA and a real two-language release, built once.
@pytest.fixture(scope="session")
def tiny_llava(tmp_path_factory, sib_dir) -> Path:
    """A random-weight LLaVA whose output layer favours the letters A-D (answers are letters
    or garbage, so parsing, scoring and format errors all get exercised)."""
    from tiny_models.llava import build_tiny_llava, sib_sentences

    out = tmp_path_factory.mktemp("tiny-llava")
    return build_tiny_llava(out, sib_sentences(sib_dir, EVAL_LANGUAGES, limit=150), letter_scale=3.0)


@pytest.fixture(scope="session")
def release_dir(tmp_path_factory, sib_dir, pool_dir) -> Path:
    """A release folder made by the real pipeline (ingest -> sample -> validate -> publish) for two languages."""
    base = tmp_path_factory.mktemp("release")
    build(str(sib_dir), base / "rel", workdir=base / "work", pool=pool_dir, languages=EVAL_LANGUAGES, progress=False)
    return base / "rel"
