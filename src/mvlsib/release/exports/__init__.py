"""Other formats a release can be exported to (one module per format; see docs/contributing/release_artifact.md)."""
