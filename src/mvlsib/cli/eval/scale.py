"""`mvlsib-eval batch prepare|collect` and `mvlsib-eval plan`: a run scaled out (option parsing only;
the work is in ``evaluation/scale/``: ``prepare``, ``collect`` and ``plan``). They take ``run``'s
selection options (``selection_options``), so a batch or a plan covers exactly the prompts ``run``
would send."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ... import params, terminal
from ...evaluation.backends.openai import OpenAIBackend
from ...evaluation.run.schedule import MAX_PROMPTS
from ..options import (
    apart,
    backend_option,
    groups_option,
    max_new_tokens_option,
    out_option,
    parse_mode_option,
    progress_option,
    read_groups,
    run_options,
    selection_options,
)
from .boundary import friendly_errors

# The openai backend's options that shape a request body (the rest are about the connection).
BODY_OPTIONS = ("request-style", "chat-template-kwargs", "image-encoding")


def _body_options(fn):
    for opt in reversed([o for o in OpenAIBackend.OPTIONS if o.flag in BODY_OPTIONS]):
        fn = backend_option(opt)(fn)
    return fn


@click.group("batch")
def batch_group():
    """OpenAI-format batch files: `prepare` writes a run's prompts as request files for a hosted batch
    API or `vllm run-batch`; `collect` turns their result files into a normal run folder."""


@batch_group.command("prepare")
@selection_options
@click.option(
    "--model",
    type=params.TEXT,
    required=True,
    metavar="NAME",
    help="The model name the requests name (as for the openai backend).",
)
@out_option("Folder for requests-NNNNN.jsonl and manifest.json (new, empty, or a previous prepare's).", required=True)
@max_new_tokens_option
@_body_options
@click.option(
    "--max-requests",
    type=params.Int(1, params.MAX_COUNT),
    default=None,
    help="Requests per file (default: the hosted batch API's limit, 50,000; batch.FILE_LIMITS).",
)
@click.option(
    "--max-bytes",
    type=params.Int(1, params.MAX_BYTES),
    default=None,
    help="Bytes per file (default: the hosted batch API's limit, 200 MB; raise it for vllm run-batch).",
)
@click.option(
    "--image-refs",
    type=click.Choice(["inline", "files"]),
    default="inline",
    show_default=True,
    help="inline: each image as a base64 data URL in every request (hosted batch APIs); files: each image once "
    "under OUT/images/, referenced as a file:// URL (vllm run-batch --allowed-local-media-path OUT/images).",
)
@progress_option
@friendly_errors
@apart("out", "release")
def prepare_command(
    out, model, max_requests, max_bytes, request_style, chat_template_kwargs, image_encoding, image_refs, progress,
    **selection,
):  # fmt: skip
    """Write the run's prompts as OpenAI batch request files (one line per prompt, the body the openai
    backend would send) and a manifest."""
    from ...evaluation.run.runner import RunOptions
    from ...evaluation.scale.prepare import DEFAULT_LIMITS, prepare

    opts = RunOptions(
        **run_options(selection),
        model=model,
        out=out,
        backend="openai",
        backend_options={
            "request_style": request_style,
            "chat_template_kwargs": chat_template_kwargs,
            "image_encoding": image_encoding,
        },
        progress=progress,
    )
    manifest = prepare(
        opts,
        out,
        max_requests=max_requests or DEFAULT_LIMITS.max_requests,
        max_bytes=max_bytes or DEFAULT_LIMITS.max_bytes,
        image_refs=image_refs,
    )
    size = sum(f["bytes"] for f in manifest["files"])
    terminal.echo(
        "wrote {} requests in {} files ({:,} bytes) and {}",
        manifest["n_requests"],
        len(manifest["files"]),
        size,
        Path(out) / "manifest.json",
    )


def _names(label: str, items, limit: int = 10) -> str:
    items = list(items)
    shown = ", ".join(items[:limit]) + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")
    return f"{label} {len(items)}: {shown}"


@batch_group.command("collect")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument(
    "results",
    nargs=-1,
    required=True,
    callback=params.distinct(drop=True),
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@out_option("Run folder (predictions.jsonl, metrics.json, config.json); collecting again adds to it.", required=True)
@parse_mode_option("How letters are read for 'letter'/'correct' (as for run).")
@groups_option("CSV with columns language,group to average over; repeatable (as for run).")
@progress_option
@friendly_errors
@apart("out", "folder", "results", "groups_csv")
def collect_command(folder, results, out, parse_mode, groups_csv, progress):
    """Read the batch's RESULTS files (OpenAI batch output format, or vllm run-batch's) into the run folder
    OUT, naming every missing, failed, duplicated and foreign custom_id; the prompts without an answer
    go into FOLDER/retry/ as a new request file."""
    from ...atomic import owned_folder
    from ...evaluation.scale.collect import collect
    from .run import RUN_FILES

    # a run folder, as run and merge write it: never a folder of another command's (the batch's own)
    with owned_folder(out, "mvlsib-eval batch collect", RUN_FILES):
        summary = collect(
            folder, list(results), out, parse_mode=parse_mode, groups=read_groups(groups_csv), progress=progress
        )
    report = summary["report"]
    terminal.echo(
        "{} new predictions ({} already done) of {}", summary["n_new"], summary["n_done_before"], summary["n_expected"]
    )
    for label in ("missing", "failed", "duplicated", "foreign"):
        if report[label]:
            terminal.echo("{}", _names(label, report[label]), err=True)
    if summary["retry"]:
        terminal.echo("retry: {} (submit it, then collect its results into {})", summary["retry"], out, err=True)
    if summary["complete"]:
        terminal.echo("complete")
        from ...evaluation.analysis.report_format import macro_table

        terminal.echo_block(macro_table(summary["metrics"]))
    else:
        terminal.echo(
            "INCOMPLETE: {} prompts to go",
            summary["n_expected"] - summary["n_done_before"] - summary["n_new"],
            err=True,
        )
        # 0 only when the job is done: a script that chains collect into report must not go on
        sys.exit(1)


@click.command("plan")
@selection_options
@click.option(
    "--gpus", type=params.Int(1, params.MAX_GPUS), required=True, help="Shards to deal the run to (one per GPU)."
)
@click.option("--model", type=params.TEXT, default="MODEL", show_default=True, help="The model the array script runs.")
@out_option("The run folder the array script writes.", default="RUN", show_default=True)
@click.option(
    "--prompts-per-second",
    type=params.Finite(1e-3, 1e9),
    default=None,
    help="Your measured throughput per GPU: gives hours per shard and the script's time limit.",
)
@click.option(
    "--script",
    type=params.OutputFile(),
    default=None,
    help="Write the SLURM array script here (default: print it).",
)
@progress_option
@friendly_errors
@apart("out", "release", inside_ok=("release",))
def plan_command(gpus, model, out, prompts_per_second, script, progress, **selection):
    """Prompt counts per task × k and per shard for --gpus shards, and a SLURM array script that runs
    one shard per GPU (then `mvlsib-eval merge`)."""
    from ...evaluation.run.runner import RunOptions
    from ...evaluation.scale.plan import count, describe, run_args, save_script, slurm_script

    opts = RunOptions(**run_options(selection), model=model, out=out, progress=progress)
    plan = count(opts, gpus)
    terminal.echo_block(describe(plan, prompts_per_second))
    text = slurm_script(plan, run_args(opts, _given(selection)), str(out), prompts_per_second=prompts_per_second)
    if script is None:
        terminal.echo("")
        terminal.echo_block(text, nl=False)
        return
    save_script(script, text)
    terminal.echo("wrote {}", script)


def _given(selection: dict) -> dict[str, object]:
    """The selection options as `mvlsib-eval run` flags, defaults left out."""
    flags = {
        "tasks": "--tasks",
        "ks": "--k",
        "languages": "--languages",
        "limit": "--limit",
        "limit_mode": "--limit-mode",
        "order": "--order",
        "data_revision": "--data-revision",
        "max_prompts": "--max-prompts",
    }
    defaults = {"limit_mode": "stratified", "order": "prefix", "languages": "all", "max_prompts": MAX_PROMPTS}
    # comma lists (params.CommaList) as the user writes them
    shown = {k: ",".join(map(str, v)) if isinstance(v, tuple) else v for k, v in selection.items()}
    return {flags[k]: v for k, v in shown.items() if k in flags and v is not None and defaults.get(k) != v}
