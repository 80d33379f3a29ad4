"""The model-based check of the image pool: every image must be classified as its topic."""
