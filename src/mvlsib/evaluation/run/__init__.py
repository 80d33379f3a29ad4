"""The run path: prompts, answer parsing, scoring, the run files and their store, shards, the runner."""
