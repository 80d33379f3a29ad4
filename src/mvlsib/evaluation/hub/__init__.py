"""A finished run as the Hub's ``.eval_results`` entries."""
