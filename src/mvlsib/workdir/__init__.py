"""The work-folder contract: which files the stages exchange, and their readers.

The stages are pure functions of values (``ingest`` -> ``Corpus`` -> ``sample`` -> instances ->
``validate`` / ``publish``); the modules here move those values to and from the work folder, so a
command that runs one stage is load -> stage -> save. Stages never import each other.

| file | written by | read by |
|---|---|---|
| ``corpus.parquet`` + ``ingest_report.json`` | ``corpus.save_corpus`` | ``corpus.load_corpus`` |
| ``instances.jsonl`` | ``instances.save_instances`` | ``instances.load_instances`` |
| ``sample_report.json`` | ``instances.save_sample_report`` | ``instances.load_sample_report`` (the seed), people |
| ``POOL/manifest.csv`` (default: ``BUNDLED_POOL``) | ``image_pool`` | ``pool_manifest.load_pool`` (once per command or build; the ``Pool`` goes to ``builder.sample``, ``validation``, ``release.publish``), ``verify_images`` |
"""

from pathlib import Path

CORPUS_FILE = "corpus.parquet"
CORPUS_COLUMNS = ("language", "index_id", "split", "topic", "text")
INGEST_REPORT_FILE = "ingest_report.json"
INSTANCES_FILE = "instances.jsonl"
SAMPLE_REPORT_FILE = "sample_report.json"
POOL_MANIFEST_FILE = "manifest.csv"

# The demo pool ships inside the package (package data), so the default `--pool` works the
# same from a wheel install as from a checkout and both build byte-identical releases.
BUNDLED_POOL = Path(__file__).resolve().parent.parent / "data" / "image_pool"
