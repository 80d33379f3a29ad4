"""The reference evaluator and its model backends."""
