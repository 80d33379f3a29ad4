"""Scale-out: OpenAI-format batch files (prepare, collect) and the SLURM plan."""
