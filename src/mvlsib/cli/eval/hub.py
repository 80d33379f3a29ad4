"""`mvlsib-eval hub-results`: a finished run as the Hub's ``.eval_results`` entries, optionally as a PR.

Option parsing only; the work is ``evaluation/hub/results.py``. See docs/evaluation/hub.md, "From a run
to a leaderboard entry".
"""

from __future__ import annotations

from pathlib import Path

import click

from ... import httpio, terminal
from ..options import HUB_REPO_ID, URL, data_revision_option, out_option, release_option
from .boundary import friendly_errors


@click.command("hub-results")
@click.argument("run", type=click.Path(exists=True, file_okay=False, path_type=Path))
@release_option(
    "The one you ran: the Benchmark dataset whose eval.yaml names the leaderboards.",
    kind="hub",
    old=("--dataset",),
    required=True,
)
@data_revision_option(
    "you evaluated (a commit): recorded in every entry, and where eval.yaml is read.", old=("--revision",)
)
@out_option("Folder to write OUT/.eval_results/ into (entries of the same tasks there are replaced).", required=True)
@click.option(
    "--model-repo",
    default=None,
    type=HUB_REPO_ID,
    metavar="ORG/MODEL",
    help="The evaluated model's repo: source.url then points at the run config's place in it.",
)
@click.option(
    "--create-pr",
    is_flag=True,
    default=False,
    help="Open a pull request with the files on --model-repo (or update the one opened before).",
)
@click.option(
    "--source-url",
    type=URL,
    default=None,
    metavar="URL",
    help="Where the run folder is published (predictions, config): the entries' source.url.",
)
@click.option(
    "--force",
    is_flag=True,
    default=False,
    help="Write entries for an incomplete, --limit, fewer-language or strict-parse run (their notes say so).",
)
@click.option(
    "--other-release",
    is_flag=True,
    default=False,
    help="Write entries although the run was not made on --release (at --data-revision); their notes say so.",
)
@click.option(
    "--hub-endpoint",
    type=URL,
    default=None,
    envvar="HF_ENDPOINT",
    metavar="URL",
    help="Hub endpoint (default: HF_ENDPOINT or https://huggingface.co).",
)
@friendly_errors
def hub_results_command(
    run, release, data_revision, out, model_repo, create_pr, source_url, force, other_release, hub_endpoint
):
    """Write the Hub's .eval_results/*.yaml entries for the finished run RUN, one per eval.yaml task it covers.

    \b
    mvlsib-eval hub-results runs/my-vlm --release my-org/mvl-sib --data-revision SHA --out results/my-vlm \\
        --model-repo some-org/my-vlm
    mvlsib-eval hub-results runs/my-vlm --release my-org/mvl-sib --data-revision SHA --out results/my-vlm \\
        --model-repo some-org/my-vlm --create-pr

    The token for --create-pr comes from HF_TOKEN or `hf auth login`; it is never printed.
    """
    from ...evaluation.hub import results as hub_results

    dataset, revision = release, data_revision
    if create_pr and model_repo is None:
        raise click.UsageError("--create-pr needs --model-repo ORG/MODEL")
    token = hub_results.resolve_token() if create_pr else None
    if source_url is None:
        if model_repo is None:
            raise click.UsageError(
                "the entries' source must point at the run's config: give --model-repo (it goes beside the "
                "entries there) or --source-url URL (where you published the run folder)"
            )
        source_url = hub_results.config_url(model_repo, dataset, hub_endpoint)

    def task_ids(data: str) -> list[str]:
        return hub_results.release_task_ids(data, dataset, revision, token=token, endpoint=hub_endpoint)

    files = hub_results.entries(
        run,
        dataset=dataset,
        revision=revision,
        task_ids=task_ids,
        source_url=source_url,
        force=force,
        other_release=other_release,
    )
    written = hub_results.write(out, run, files, dataset)
    for path in written:
        terminal.echo("wrote {}", path)
    if create_pr:
        url = hub_results.open_pr(model_repo, written, dataset, token=token, endpoint=hub_endpoint)
        terminal.echo("pull request: {}", httpio.public_url(url))
