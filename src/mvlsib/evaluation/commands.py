"""The ``mvlsib-eval`` commands (run, merge, report), shared by the toolkit's CLI and the
standalone ``evaluate.py`` of every release. Only option parsing lives here; the work is
in ``runner``, ``shards`` and ``report``, imported inside each command so ``--help`` is fast.
"""

from __future__ import annotations

import functools
from pathlib import Path

import click

from ._compat import TASK_TABLE, TASKS, MvlsibError
from .schedule import ORDERS


class InputError(click.ClickException):
    """Bad input the user can fix: message on stderr, exit status 2 (as mvlsib-build)."""

    exit_code = 2


def friendly_errors(fn):
    """Bad input the user can fix -> one clean message and exit status 2, not a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except MvlsibError as exc:
            raise InputError(str(exc)) from exc

    return wrapper


def with_backend_options(fn):
    """``--backend`` and every registered backend's own options (one set for every command that runs models).

    The command receives ``backend`` and each option under its constructor name; ``options_for``
    picks the chosen backend's.
    """
    from .backends import BACKENDS, backend_options

    decorators = [click.option("--backend", type=click.Choice(list(BACKENDS)), default=BACKENDS[0], show_default=True,
                               help="hf: a transformers model run here; openai: an OpenAI-compatible chat-completions "
                               "server (vLLM, SGLang, hosted APIs).")]
    for _, opt in backend_options():
        if opt.kind is bool:
            decorators.append(click.option(f"--{opt.flag}", opt.param, is_flag=True, default=opt.default, help=opt.help))
        else:
            kind = click.Choice(list(opt.choices)) if opt.choices else opt.kind
            decorators.append(click.option(f"--{opt.flag}", opt.param, type=kind, default=opt.default,
                                           show_default=opt.default is not None, help=opt.help))
    for decorate in reversed(decorators):
        fn = decorate(fn)
    return fn


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _groups(paths) -> dict[str, dict[str, str]]:
    from .scoring import read_groups_csv

    return {Path(p).stem: read_groups_csv(p) for p in paths}


@click.command("run")
@click.option("--data", default=".", show_default=True, metavar="DIR|ORG/NAME",
              help="Release folder (with data/ and mvl_sib.py) or Hub dataset repo id.")
@click.option("--data-revision", default=None, help="Branch, tag or commit of a Hub dataset repo.")
@click.option("--model", required=True, metavar="PATH|ID|NAME",
              help="hf: local model folder or Hub model id; openai: the served model name.")
@click.option("--tasks", default=",".join(TASKS), show_default=True,
              help=f"Comma-separated tasks: {', '.join(TASKS)} (upstream names {', '.join(t.upstream for t in TASK_TABLE)} also accepted).")
@click.option("--k", "ks", default="1,3,5", show_default=True,
              help="Comma-separated numbers of references (1-5); a task with a single reference (t2s) runs k=1 only.")
@click.option("--languages", default="all", show_default=True,
              help="'all' (every language of a local release) or comma-separated codes, e.g. eng_Latn,urd_Arab.")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Run folder: predictions.jsonl, metrics.json, config.json. Rerunning the same command resumes.")
@click.option("--max-new-tokens", type=int, default=8, show_default=True,
              help="Tokens generated per prompt (the answer is a letter; a few tokens leave room for '(C)' or '**C**').")
@click.option("--limit", type=int, default=None, help="Only the first N instances of each language.")
@click.option("--shard", default=None, metavar="I/N",
              help="Run shard I of N (0-based). Default: RANK/WORLD_SIZE under torchrun/accelerate, else everything.")
@click.option("--parse-mode", type=click.Choice(["relaxed", "strict", "lenient"]), default="relaxed",
              show_default=True, help="How letters are read for 'letter'/'correct' (metrics.json reports strict too).")
@click.option("--order", type=click.Choice(list(ORDERS)), default=ORDERS[0], show_default=True,
              help="Processing order: 'prefix' sends prompts that share a prefix (instruction, reference "
                   "images, across languages) together, so a server's prefix cache reuses it; 'canonical' "
                   "goes language by language. Results and the predictions file are the same either way.")
@with_backend_options
@click.option("--groups", "groups_csv", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="CSV with columns language,group (e.g. resource tiers) to average over; repeatable.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Progress bar on stderr.")
@friendly_errors
def run_command(data, data_revision, model, tasks, ks, languages, out, max_new_tokens, limit, shard,
                parse_mode, order, groups_csv, progress, backend, **backend_values):
    """Evaluate a model on MVL-SIB and write OUT/predictions.jsonl, metrics.json, config.json."""
    from .backends import options_for
    from .runner import RunOptions, run_eval
    from .shards import parse_shard

    try:
        k_values = tuple(int(k) for k in _csv(ks))
    except ValueError:
        raise MvlsibError(f"--k must be comma-separated integers, got {ks!r}") from None
    if limit is not None and limit < 1:
        raise MvlsibError(f"--limit must be at least 1, got {limit}")
    shard_obj = parse_shard(shard)
    options = options_for(backend, backend_values)
    if backend == "openai" and not options.get("base_url"):
        raise MvlsibError("the openai backend needs --base-url (e.g. http://127.0.0.1:8000/v1 for vLLM, "
                          "https://api.openai.com/v1 for OpenAI)")
    opts = RunOptions(
        data=data,
        model=model,
        out=out,
        tasks=tuple(_csv(tasks)),
        ks=k_values,
        languages="all" if languages.strip() == "all" else tuple(_csv(languages)),
        backend=backend,
        limit=limit,
        shard=shard_obj,
        parse_mode=parse_mode,
        data_revision=data_revision,
        model_revision=options.pop("revision", None),
        max_new_tokens=max_new_tokens,
        dtype=options.pop("dtype", "auto"),
        backend_options=options,
        groups=_groups(groups_csv),
        progress=progress,
        order=order,
    )
    summary = run_eval(opts)
    click.echo(
        f"{summary['n_new']} new predictions ({summary['n_done_before']} already done) of "
        f"{summary['n_expected']} in {summary['predictions_file']}"
    )
    if "metrics" in summary:
        click.echo(_macro_table(summary["metrics"]))
        click.echo(f"wrote {Path(out) / 'metrics.json'}")
    elif summary["shard"]:
        click.echo(f"shard {summary['shard']} {'complete' if summary['complete'] else 'incomplete'}; "
                   f"combine the shards with `mvlsib-eval merge {out} --out {out}`")


def _macro_table(metrics: dict) -> str:
    lines = [f"{'task':<5} {'k':>2} {'langs':>5} {'acc':>7} {'strict':>7} {'fmt_err':>7} {'valid_acc':>9}"]
    for row in metrics["macro"]:
        va = "-" if row["valid_accuracy"] is None else f"{row['valid_accuracy']:.4f}"
        lines.append(
            f"{row['task']:<5} {row['k']:>2} {row['n_languages']:>5} {row['accuracy']:>7.4f} "
            f"{row['strict_accuracy']:>7.4f} {row['format_error_rate']:>7.4f} {va:>9}"
        )
    return "\n".join(lines)


@click.command("merge")
@click.argument("sources", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Run folder for the merged predictions.jsonl, config.json and metrics.json.")
@click.option("--allow-partial", is_flag=True, default=False,
              help="Merge even when shards are missing or incomplete (metrics then cover less).")
@friendly_errors
def merge_command(sources, out, allow_partial):
    """Combine the shard files (predictions.shard-I-of-N.jsonl) found in SOURCES into one run."""
    from .shards import merge_shards

    metrics = merge_shards(list(sources), out, allow_partial=allow_partial)
    click.echo(f"merged {metrics['n_predictions']} predictions into {Path(out) / 'predictions.jsonl'}")
    click.echo(_macro_table(metrics))


@click.command("report")
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for report.md, the CSV tables and the PNG plots.")
@click.option("--groups", "groups_csv", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="CSV with columns language,group (e.g. resource tiers); repeatable.")
@click.option("--parse-mode", type=click.Choice(["relaxed", "strict", "lenient"]), default="relaxed",
              show_default=True, help="How letters are read from the stored responses.")
@click.option("--name", "names", multiple=True, help="Display name per run, in order (default: folder name).")
@friendly_errors
def report_command(runs, out, groups_csv, parse_mode, names):
    """Tables (Markdown, CSV) and plots (PNG) for one or more runs side by side."""
    from .report import write_report

    written = write_report(list(runs), out, groups=_groups(groups_csv), mode=parse_mode, names=list(names) or None)
    for path in written:
        click.echo(f"wrote {path}")


COMMANDS = (run_command, merge_command, report_command)


def standalone_main(argv=None, prog_name="evaluate.py") -> None:
    """Entry point of a release's evaluate.py: ``run`` is the default command."""
    import sys

    @click.group(context_settings={"help_option_names": ["-h", "--help"]})
    def group():
        """MVL-SIB reference evaluator (bundled). `python evaluate.py --data . --model M --out RUN`
        runs the evaluation; `merge` and `report` as in mvlsib-eval."""

    for cmd in COMMANDS:
        group.add_command(cmd)
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or (args[0] not in {c.name for c in COMMANDS} and args[0] not in ("-h", "--help")):
        args = ["run", *args]
    group.main(args=args, prog_name=prog_name)
