"""`mvlsib-eval report`, `compare`, `items` and `correlate`: what one or more finished runs say
(option parsing only; the work is in ``evaluation/analysis/``)."""

from __future__ import annotations

from pathlib import Path

import click

from ... import params, terminal
from ...atomic import staged_output
from ...errors import MvlsibError
from ..options import (
    apart,
    different_releases_option,
    groups_option,
    json_out_option,
    out_option,
    parse_mode_option,
    read_groups,
    release_option,
    run_names_option,
    runs_argument,
)


@click.command("report")
@runs_argument()
@out_option("Folder for report.md, the CSV tables, the leaderboard and the figures.", required=True)
@groups_option("CSV with columns language,group (e.g. resource tiers); repeatable.")
@parse_mode_option("How letters are read from the stored responses.")
@run_names_option()
@click.option(
    "--language-metadata",
    "metadata_csv",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="CSV with a 'language' column and metadata columns (name, family, joshi_class, or new ones such "
    "as region) overriding or extending the packaged language table; new columns become groupings.",
)
@release_option("For the topic confusion figure (default: the runs' own, when it exists).", kind="folder")
@different_releases_option
@apart("out", "runs", "groups_csv", "metadata_csv", "release")
def report_command(runs, out, groups_csv, parse_mode, names, metadata_csv, release, different_releases):
    """Tables (Markdown, CSV), a leaderboard (Markdown, CSV, HTML) and figures (PNG, SVG) for one or more
    runs side by side, with 95 % bootstrap intervals, grouped by script, family and resource class."""
    # Staged: a report that fails half-way (a damaged release, a figure that cannot be drawn) leaves
    # the folder as it was, not some of its files.
    with staged_output(Path(out).resolve(), "mvlsib-eval report") as stage:
        written = _write_report(runs, stage, groups_csv, parse_mode, names, metadata_csv, release, different_releases)
    for path in written:
        terminal.echo("wrote {}", Path(out) / Path(path).relative_to(stage))


def _write_report(runs, out, groups_csv, parse_mode, names, metadata_csv, data, different_releases):
    from ...evaluation.analysis.report import write_report
    from ...evaluation.run.languages import read_overrides

    return write_report(
        list(runs),
        out,
        groups=read_groups(groups_csv),
        mode=parse_mode,
        names=list(names) or None,
        metadata=read_overrides(metadata_csv) if metadata_csv else None,
        data=data,
        different_releases=different_releases,
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
@different_releases_option
def compare_command(run_a, run_b, json_path, parse_mode, different_releases):
    """Paired comparison of two runs on the same instances: accuracy difference A − B with a bootstrap
    interval and a permutation-test p-value, overall, per task x k and per language (Holm-corrected)."""
    from ...evaluation.analysis.compare import compare_runs, format_comparison, write_comparison_json

    res = compare_runs(
        run_a, run_b, parse_mode, different_releases=different_releases, warn=lambda text: terminal.warn("{}", text)
    )
    terminal.echo_block(format_comparison(res))
    if json_path is not None:
        terminal.echo("wrote {}", write_comparison_json(res, json_path))


@click.command("items")
@runs_argument()
@out_option("Folder for items.md, always_wrong.jsonl and the CSV tables.", required=True)
@release_option("Its texts and options are shown for listed items (default: the runs' own).", kind="folder")
@parse_mode_option("How letters are read from the stored responses.")
@run_names_option()
@click.option(
    "--max-listed",
    type=params.Int(1, params.MAX_COUNT),
    default=5000,
    show_default=True,
    help="At most this many always-wrong items (hardest first) in always_wrong.jsonl; items.md shows 50.",
)
@different_releases_option
@apart("out", "runs", "release")
def items_command(runs, out, release, parse_mode, names, max_listed, different_releases):
    """Item analysis over several runs: instance difficulty, items every run gets wrong (with their texts),
    per-image error rates and letter-position bias."""
    from ...evaluation.analysis.items import write_items

    if names and len(names) != len(runs):
        raise MvlsibError(f"--name was given {len(names)} times for {len(runs)} runs; give one per run or none")
    with staged_output(Path(out).resolve(), "mvlsib-eval items") as stage:
        written = write_items(
            list(runs),
            stage,
            data=release,
            mode=parse_mode,
            names=list(names) or None,
            max_listed=max_listed,
            different_releases=different_releases,
            warn=lambda text: terminal.warn("{}", text),
        )
    for path in written:
        terminal.echo("wrote {}", Path(out) / Path(path).relative_to(stage))


@click.command("correlate")
@runs_argument()
@click.option(
    "--scores",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="CSV with columns model,benchmark,score: other benchmarks' scores of the same models.",
)
@run_names_option("The CSV's model name per run, in order (default: folder name, else the run's model).")
@out_option("Also write the correlations to this CSV file.", file=True, name="out_csv")
@parse_mode_option("How letters are read from the stored responses.")
@different_releases_option
def correlate_command(runs, scores, names, out_csv, parse_mode, different_releases):
    """Pearson and Spearman correlations (with the number of models and 95 % intervals) between MVL-SIB's
    task x k macro accuracies and other benchmarks' scores of the same models."""
    from ...evaluation.analysis.correlate import correlate, format_correlations, read_scores, write_correlations

    if names and len(names) != len(runs):
        raise MvlsibError(f"--name was given {len(names)} times for {len(runs)} runs; give one per run or none")
    rows = correlate(
        list(runs),
        read_scores(scores),
        names=list(names) or None,
        mode=parse_mode,
        different_releases=different_releases,
        warn=lambda text: terminal.warn("{}", text),
    )
    terminal.echo_block(format_correlations(rows))
    if out_csv is not None:
        terminal.echo("wrote {}", write_correlations(rows, out_csv))
