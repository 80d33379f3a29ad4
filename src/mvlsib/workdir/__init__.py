"""The work-folder contract: which files the stages exchange, and their readers.

Stages never import each other: each writes its files into the work folder and the
next reads them through the readers here (``corpus``, ``instances``, ``pool_manifest``).

| file | written by | read by |
|---|---|---|
| ``corpus.parquet`` | ``builder.ingest`` | ``builder.sample``, ``validation``, ``release.publish`` |
| ``ingest_report.json`` | ``builder.ingest`` | ``release.publish`` (card statistics) |
| ``instances.jsonl`` | ``builder.sample`` | ``validation``, ``release.publish`` |
| ``sample_report.json`` | ``builder.sample`` | people |
| ``POOL/manifest.csv`` (default: ``BUNDLED_POOL``) | ``image_pool`` | ``builder.sample``, ``validation``, ``release.publish``, ``verify_images`` |
"""

CORPUS_FILE = "corpus.parquet"
CORPUS_COLUMNS = ("language", "index_id", "split", "topic", "text")
INGEST_REPORT_FILE = "ingest_report.json"
INSTANCES_FILE = "instances.jsonl"
SAMPLE_REPORT_FILE = "sample_report.json"
POOL_MANIFEST_FILE = "manifest.csv"

# The demo pool ships inside the package (package data), so the default `--pool` works the
# same from a wheel install as from a checkout and both build byte-identical releases.
from pathlib import Path as _Path

BUNDLED_POOL = _Path(__file__).resolve().parent.parent / "data" / "image_pool"
