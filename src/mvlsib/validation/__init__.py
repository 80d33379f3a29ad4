"""Dataset invariants (SPEC section 4) and model-based image checks."""
