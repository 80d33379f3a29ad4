"""The ``mvlsib-eval`` commands (run, merge, report, ...; ``hub-results`` in ``hub_commands``), shared
by the toolkit's CLI and the standalone ``evaluate.py`` of every release. Only option parsing lives here (the options and
error boundary in the leaf ``mvlsib.boundary``, which ``mvlsib-build`` uses too); the work is in
``runner``, ``shards``, ``report`` and the analysis modules, imported inside each command so
``--help`` is fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ._compat import MvlsibError, owned_folder, params, terminal
from .backends import backends_help, options_for
from .batch_commands import batch_group, plan_command
from .command_options import BoundaryGroup, with_backend_options
from .hub_commands import hub_results_command
from .options import json_out_option, out_option, progress_option, release_option
from .selection import (
    groups_option,
    max_new_tokens_option,
    parse_mode_option,
    read_groups,
    run_options,
    selection_options,
)

# What a run folder holds besides its ledger: a run killed with kill -9 records nothing, yet its
# files are ours to resume (predictions.shard-I-of-N.jsonl, config.json, metrics.json, the lock).
RUN_FILES = ("predictions*.jsonl", "config*.json", "metrics*.json", ".run*.lock", ".*.tmp")


@click.command("run")
@selection_options
@click.option(
    "--model",
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
def run_command(model, out, shard, parse_mode, groups_csv, progress, backend, **values):
    """Evaluate a model on MVL-SIB and write OUT/predictions.jsonl, metrics.json, config.json."""
    from .backends import backend_options
    from .run.runner import RunOptions, run_eval
    from .run.shards import parse_shard

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
        from .analysis.report_format import macro_table

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
    from .run.run_files import read_config
    from .run.shards import merge_shards

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
    from .analysis.report_format import macro_table

    terminal.echo_block(macro_table(metrics))


@click.command("report")
@click.argument(
    "runs",
    nargs=-1,
    required=True,
    callback=params.distinct(),
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@out_option("Folder for report.md, the CSV tables, the leaderboard and the figures.", required=True)
@groups_option("CSV with columns language,group (e.g. resource tiers); repeatable.")
@parse_mode_option("How letters are read from the stored responses.")
@click.option(
    "--name",
    "names",
    multiple=True,
    callback=params.paired("RUNS"),
    help="Display name per run, in order (default: folder name).",
)
@click.option(
    "--language-metadata",
    "metadata_csv",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="CSV with a 'language' column and metadata columns (name, family, joshi_class, or new ones such "
    "as region) overriding or extending the packaged language table; new columns become groupings.",
)
@release_option("For the topic confusion figure (default: the runs' own, when it exists).", kind="folder")
def report_command(runs, out, groups_csv, parse_mode, names, metadata_csv, release):
    """Tables (Markdown, CSV), a leaderboard (Markdown, CSV, HTML) and figures (PNG, SVG) for one or more
    runs side by side, with 95 % bootstrap intervals, grouped by script, family and resource class."""
    with owned_folder(out, "mvlsib-eval report"):
        written = _write_report(runs, out, groups_csv, parse_mode, names, metadata_csv, release)
    for path in written:
        terminal.echo("wrote {}", path)


def _write_report(runs, out, groups_csv, parse_mode, names, metadata_csv, data):
    from .analysis.report import write_report
    from .run.languages import read_overrides

    return write_report(
        list(runs),
        out,
        groups=read_groups(groups_csv),
        mode=parse_mode,
        names=list(names) or None,
        metadata=read_overrides(metadata_csv) if metadata_csv else None,
        data=data,
        warn=lambda text: terminal.echo("warning: {}", text, err=True),
    )


@click.command("compare")
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@json_out_option(
    "It holds the figures: overall at the top level, then per task x k and per language x task x k.",
    name="json_path",
)
@parse_mode_option("How letters are read from the stored responses.")
@click.option(
    "--different-releases",
    is_flag=True,
    default=False,
    help="Compare runs made on different releases (refused by default: the same keys may hide other "
    "instances or images); the comparison then says so at the top.",
)
def compare_command(run_a, run_b, json_path, parse_mode, different_releases):
    """Paired comparison of two runs on the same instances: accuracy difference A − B with a bootstrap
    interval and a permutation-test p-value, overall, per task x k and per language (Holm-corrected)."""
    from .analysis.compare import compare_runs, format_comparison, write_comparison_json

    res = compare_runs(run_a, run_b, parse_mode, different_releases=different_releases)
    terminal.echo_block(format_comparison(res))
    if json_path is not None:
        terminal.echo("wrote {}", write_comparison_json(res, json_path))


@click.command("items")
@click.argument(
    "runs",
    nargs=-1,
    required=True,
    callback=params.distinct(),
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@out_option("Folder for items.md, always_wrong.jsonl and the CSV tables.", required=True)
@release_option("Its texts and options are shown for listed items (default: the runs' own).", kind="folder")
@parse_mode_option("How letters are read from the stored responses.")
@click.option(
    "--name",
    "names",
    multiple=True,
    callback=params.paired("RUNS"),
    help="Display name per run, in order (default: folder name).",
)
@click.option(
    "--max-listed",
    type=params.Int(1, params.MAX_COUNT),
    default=5000,
    show_default=True,
    help="At most this many always-wrong items (hardest first) in always_wrong.jsonl; items.md shows 50.",
)
def items_command(runs, out, release, parse_mode, names, max_listed):
    """Item analysis over several runs: instance difficulty, items every run gets wrong (with their texts),
    per-image error rates and letter-position bias."""
    from .analysis.items import write_items

    if names and len(names) != len(runs):
        raise MvlsibError(f"--name was given {len(names)} times for {len(runs)} runs; give one per run or none")
    with owned_folder(out, "mvlsib-eval items"):
        written = write_items(
            list(runs), out, data=release, mode=parse_mode, names=list(names) or None, max_listed=max_listed
        )
    for path in written:
        terminal.echo("wrote {}", path)


@click.command("correlate")
@click.argument(
    "runs",
    nargs=-1,
    required=True,
    callback=params.distinct(),
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option(
    "--scores",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="CSV with columns model,benchmark,score: other benchmarks' scores of the same models.",
)
@click.option(
    "--name",
    "names",
    multiple=True,
    callback=params.paired("RUNS"),
    help="The CSV's model name per run, in order (default: folder name, else the run's model).",
)
@out_option("Also write the correlations to this CSV file.", file=True, name="out_csv")
@parse_mode_option("How letters are read from the stored responses.")
def correlate_command(runs, scores, names, out_csv, parse_mode):
    """Pearson and Spearman correlations (with the number of models and 95 % intervals) between MVL-SIB's
    task x k macro accuracies and other benchmarks' scores of the same models."""
    from .analysis.correlate import correlate, format_correlations, read_scores, write_correlations

    if names and len(names) != len(runs):
        raise MvlsibError(f"--name was given {len(names)} times for {len(runs)} runs; give one per run or none")
    rows = correlate(list(runs), read_scores(scores), names=list(names) or None, mode=parse_mode)
    terminal.echo_block(format_correlations(rows))
    if out_csv is not None:
        terminal.echo("wrote {}", write_correlations(rows, out_csv))


COMMANDS = (
    run_command,
    batch_group,
    plan_command,
    merge_command,
    report_command,
    compare_command,
    items_command,
    correlate_command,
    hub_results_command,
)


def standalone_main(argv=None, prog_name="evaluate.py") -> None:
    """Entry point of a release's evaluate.py: ``run`` is the default command."""

    @click.group(cls=BoundaryGroup, context_settings={"help_option_names": ["-h", "--help"]})
    def group():
        """MVL-SIB reference evaluator (bundled). `python evaluate.py --release . --model M --out RUN`
        runs the evaluation; `merge` and `report` as in mvlsib-eval."""

    for cmd in COMMANDS:
        group.add_command(cmd)
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or (args[0] not in {c.name for c in COMMANDS} and args[0] not in ("-h", "--help")):
        args = ["run", *args]
    group.main(args=args, prog_name=prog_name)
