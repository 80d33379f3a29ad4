"""`mvlsib-eval run` and `merge`: a model over a release into a run folder, and the shards of a run
combined (option parsing only; the work is in ``evaluation/run/``: ``runner`` and ``shards``)."""

from __future__ import annotations

from pathlib import Path

import click

from ... import params, terminal
from ...atomic import owned_folder
from ...evaluation.backends import backends_help, options_for
from ..options import (
    apart,
    groups_option,
    max_new_tokens_option,
    out_option,
    parse_mode_option,
    progress_option,
    read_groups,
    run_options,
    selection_options,
    with_backend_options,
)

# What a run folder holds besides its ledger: a run killed with kill -9 records nothing, yet its
# files are ours to resume (predictions.shard-I-of-N.jsonl, config.json, metrics.json, the lock).
RUN_FILES = ("predictions*.jsonl", "config*.json", "metrics*.json", ".run*.lock", ".*.tmp")


@click.command("run")
@selection_options
@click.option(
    "--model",
    type=params.TEXT,
    required=True,
    metavar="PATH|ID|NAME",
    help=backends_help("MODEL_HELP"),
)
@out_option(
    "Run folder: predictions.jsonl, metrics.json, config.json. Rerunning the same command resumes.", required=True
)
@max_new_tokens_option
@click.option(
    "--shard",
    type=params.TEXT,
    default=None,
    metavar="I/N",
    help="Run shard I of N (0-based). Default: the SLURM array task (SLURM_ARRAY_TASK_ID of "
    "SLURM_ARRAY_TASK_COUNT, less SLURM_ARRAY_TASK_MIN), or RANK/WORLD_SIZE under torchrun/accelerate; "
    "else everything.",
)
@parse_mode_option("How letters are read for 'letter'/'correct' (metrics.json reports strict too).")
@with_backend_options
@groups_option("CSV with columns language,group (e.g. resource tiers) to average over; repeatable.")
@progress_option
@apart("out", "release", "groups_csv", inside_ok=("release",))
def run_command(model, out, shard, parse_mode, groups_csv, progress, backend, **values):
    """Evaluate a model on MVL-SIB and write OUT/predictions.jsonl, metrics.json, config.json."""
    from ...evaluation.backends import backend_options
    from ...evaluation.run.runner import RunOptions, run_eval
    from ...evaluation.run.shards import parse_shard

    params = {opt.param for _, opt in backend_options()}
    backend_values = {k: v for k, v in values.items() if k in params}
    selection = {k: v for k, v in values.items() if k not in params}
    opts = RunOptions(
        **run_options(selection),
        model=model,
        out=out,
        backend=backend,
        shard=parse_shard(shard),
        parse_mode=parse_mode,
        backend_options=options_for(backend, backend_values),
        groups=read_groups(groups_csv),
        progress=progress,
    )
    with owned_folder(out, "mvlsib-eval run", RUN_FILES):
        summary = run_eval(opts)
    terminal.echo(
        "{} new predictions ({} already done) of {} in {}",
        summary["n_new"],
        summary["n_done_before"],
        summary["n_expected"],
        summary["predictions_file"],
    )
    if "metrics" in summary:
        from ...evaluation.analysis.report_format import macro_table

        terminal.echo_block(macro_table(summary["metrics"]))
        terminal.echo("wrote {}", Path(out) / "metrics.json")
    elif summary["shard"]:
        terminal.echo(
            "shard {} {}; combine the shards with `mvlsib-eval merge {} --out {}`",
            summary["shard"],
            "complete" if summary["complete"] else "incomplete",
            out,
            out,
        )


@click.command("merge")
@click.argument(
    "sources", nargs=-1, required=True, callback=params.distinct(), type=click.Path(exists=True, path_type=Path)
)
@out_option("Run folder for the merged predictions.jsonl, config.json and metrics.json.", required=True)
@click.option(
    "--allow-partial",
    is_flag=True,
    default=False,
    help="Merge even when shards are missing or incomplete (metrics then cover less).",
)
def merge_command(sources, out, allow_partial):
    """Combine the shard files (predictions.shard-I-of-N.jsonl) found in SOURCES into one run."""
    from ...evaluation.run.run_files import read_config
    from ...evaluation.run.shards import merge_shards

    with owned_folder(out, "mvlsib-eval merge", RUN_FILES):
        metrics = merge_shards(list(sources), out, allow_partial=allow_partial)
    terminal.echo("merged {} predictions into {}", metrics["n_predictions"], Path(out) / "predictions.jsonl")
    config = read_config(Path(out) / "config.json")
    if not config.get("complete"):
        missing = ", ".join(config.get("missing_shards") or []) or "none"
        terminal.echo(
            "INCOMPLETE: {} of {} predictions (missing shards: {}); the metrics cover only what is there",
            metrics["n_predictions"],
            config["n_expected"],
            missing,
            err=True,
        )
    from ...evaluation.analysis.report_format import macro_table

    terminal.echo_block(macro_table(metrics))
