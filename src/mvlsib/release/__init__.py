"""Everything that writes or ships a release: tables, manifest, stats, card, evaluator bundle, Hub upload, exports."""
