"""Tiny random-weight models built from configs, for tests and benchmarks. Never shipped in a release."""
