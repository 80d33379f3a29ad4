"""mvlsib-build: construct, validate, publish and evaluate the MVL-SIB benchmark.

The stages are functions of values, importable from here::

    from mvlsib import ingest, sample, validate, publish

    corpus = ingest("../shared/sib-200")             # -> Corpus
    instances = sample(corpus, pool, seed=0)         # -> list[Instance]
    result = validate(corpus, instances, pool)       # -> ValidationResult (result.ok)
    publish(corpus, instances, pool, "release")      # -> ReleaseSummary

``pool`` is a pool folder (``BUNDLED_POOL``: the bundled demo pool) or a ``Pool`` read once with
``load_pool``. The names are imported on first use (PEP 562), so ``import mvlsib`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from mvlsib.builder.ingest import ingest
    from mvlsib.builder.sample import sample
    from mvlsib.pipeline import build
    from mvlsib.release.publish import publish
    from mvlsib.validation.invariants import validate
    from mvlsib.workdir import BUNDLED_POOL
    from mvlsib.workdir.pool_manifest import Pool, load_pool

# name -> the module that defines it
_API = {
    "ingest": "mvlsib.builder.ingest",
    "sample": "mvlsib.builder.sample",
    "validate": "mvlsib.validation.invariants",
    "publish": "mvlsib.release.publish",
    "build": "mvlsib.pipeline",
    "Pool": "mvlsib.workdir.pool_manifest",
    "load_pool": "mvlsib.workdir.pool_manifest",
    "BUNDLED_POOL": "mvlsib.workdir",
}

__all__ = ["BUNDLED_POOL", "Pool", "__version__", "build", "ingest", "load_pool", "publish", "sample", "validate"]


def __getattr__(name: str) -> Any:
    """The stage functions and the pool value, imported from their modules on first access."""
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'mvlsib' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later accesses find it directly
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
