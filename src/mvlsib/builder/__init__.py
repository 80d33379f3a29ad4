"""Ingest SIB-200, sample MVL-SIB instances, and run the build pipeline."""
