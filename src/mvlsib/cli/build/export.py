"""`mvlsib-build export`: a release for another harness."""

from __future__ import annotations

from pathlib import Path

import click

from mvlsib import params, terminal
from mvlsib.cli.groups import build_cli, hub_bars
from mvlsib.cli.options import (
    LANGUAGE_CODE,
    apart,
    data_revision_option,
    out_option,
    progress_option,
    release_option,
)
from mvlsib.release.exports import FORMATS

# ---------------------------------------------------------------- export


@build_cli.command("export")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(list(FORMATS)))
@release_option(required=True)
@out_option("Folder to write the export to.", required=True)
@click.option(
    "--languages",
    type=params.CommaList(LANGUAGE_CODE),
    default=None,
    metavar="CODES",
    help="Comma-separated language configs (default: all of the release folder, or of the Hub repo's card).",
)
@click.option(
    "--tasks",
    type=params.CommaList(),
    default=None,
    metavar="NAMES",
    help="Comma-separated tasks (default: all the format holds).",
)
@click.option(
    "--k",
    "ks",
    default=None,
    metavar="KS",
    type=params.CommaList(params.Int(1, params.MAX_K)),
    help="Comma-separated numbers of references (default 1,3,5; mteb: 1).",
)
@data_revision_option("(a --release ORG/NAME).", old=("--revision",))
@click.option(
    "--limit",
    type=params.Int(1, params.MAX_COUNT),
    default=None,
    metavar="N",
    help="inspect only: N instances per language, the ones `mvlsib-eval run --limit N` takes (default: all).",
)
@progress_option
@apart("out", "release")
def export_cmd(fmt, release, out, languages, tasks, ks, data_revision, limit, progress):
    """Export a release for another harness: lmms-eval, mteb, vlmevalkit or inspect (Inspect AI).

    \b
    mvlsib-build export lmms-eval --release release --out exports/lmms-eval
    lmms-eval --include_path exports/lmms-eval --tasks mvl_sib_i2s_k3_eng_Latn ...
    mvlsib-build export inspect --release release --out exports/inspect
    inspect eval exports/inspect/mvl_sib_inspect.py@i2s_k3 --model openai-api/local/MODEL

    Details and the command that runs each format: docs/exports.md.
    """
    from mvlsib.release.exports import export

    # A Hub --release is downloaded by datasets and huggingface_hub, with their own bars.
    with hub_bars(progress, datasets=not Path(release).is_dir()):
        info = export(fmt, release, out, languages=languages, tasks=tasks, ks=ks, revision=data_revision, limit=limit)
    terminal.echo(
        "wrote {}: {} export of {} language(s), tasks {}", out, fmt, len(info["languages"]), ", ".join(info["tasks"])
    )
