"""The dataset card (README.md) of a release and its templates."""
