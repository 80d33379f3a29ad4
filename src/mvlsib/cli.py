"""Command-line entry points. Options are parsed here; all work happens in the library.

Library modules are imported inside each command so that ``--help`` stays fast
(torch, transformers, datasets and pandas are never imported just to print help).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import click

DEFAULT_WORKDIR = "mvlsib-work"
DEFAULT_POOL = "image_pool"


def _friendly_errors(fn):
    """Turn MvlsibError (bad input the user can fix) into a one-paragraph message, exit 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from mvlsib.errors import MvlsibError

        try:
            return fn(*args, **kwargs)
        except MvlsibError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


workdir_option = click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_WORKDIR,
    show_default=True,
    help="Work folder where stages exchange files (corpus.parquet, instances.jsonl, ...).",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mvlsib-build")
def build_cli() -> None:
    """Build, validate and publish the MVL-SIB benchmark.

    Typical order: ingest -> sample -> validate -> publish (or `build` for all of them).
    """


# ---------------------------------------------------------------- ingest


@build_cli.command("ingest")
@click.option(
    "--sib",
    metavar="DIR|ORG/NAME",
    default=None,
    help="SIB-200 source: a local folder (SIB-200 checkout with data/annotated/<lang>/, its 'annotated' "
    "folder, or the Hub layout data/<lang>/) or a Hub dataset id. "
    "Default when --flores is not given: Davlan/sib200.",
)
@click.option("--revision", default=None, help="Branch, tag or commit of the Hub dataset (--sib ORG/NAME only).")
@click.option(
    "--flores",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Folder with raw Flores files <lang>.dev + <lang>.devtest, or Flores+ dev/<lang>.parquet + "
    "devtest/<lang>.parquet; builds SIB-200 for those languages (needs --annotation).",
)
@click.option(
    "--annotation",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="English SIB-200 annotation folder (train/dev/test.tsv) giving each Flores sentence its split and "
    "topic; with --sib it replaces eng_Latn as the reference.",
)
@click.option(
    "--languages",
    default=None,
    metavar="CODES",
    help="Comma-separated language codes to keep (e.g. eng_Latn,fra_Latn); default: all.",
)
@click.option(
    "--hub-endpoint",
    default=None,
    envvar="HF_ENDPOINT",
    show_envvar=True,
    help="Hub server to download from (default https://huggingface.co).",
)
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar on stderr.")
@workdir_option
@_friendly_errors
def ingest_cmd(sib, revision, flores, annotation, languages, hub_endpoint, progress, workdir):
    """Read SIB-200 (or build it from Flores), check it and write WORKDIR/corpus.parquet.

    Every language must have English's ids, splits and topics; texts are parsed exactly and
    right-stripped. Duplicate translations are listed in WORKDIR/ingest_report.json.
    """
    from mvlsib.builder.ingest import ingest

    report = ingest(
        workdir,
        sib=sib,
        revision=revision,
        flores=flores,
        annotation=annotation,
        languages=languages,
        progress=progress,
        endpoint=hub_endpoint,
    )
    n_cross = sum(g.cross_topic for groups in report.duplicates.values() for g in groups)
    click.echo(f"languages: {report.n_languages}  rows: {report.n_rows:,}  "
               f"({report.sentences_per_language} sentences per language)")
    click.echo(
        f"duplicate texts: {report.n_duplicate_groups} group(s) in {len(report.duplicates)} language(s), "
        f"{n_cross} across topics (see {Path(workdir) / 'ingest_report.json'})"
    )
    click.echo(f"wrote {Path(workdir) / report.corpus}  sha256 {report.corpus_sha256}")



# ---------------------------------------------------------------- sample


# ---------------------------------------------------------------- validate


# ---------------------------------------------------------------- images


# ---------------------------------------------------------------- verify-images


# ---------------------------------------------------------------- publish / build


# ================================================================ mvlsib-eval


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mvlsib-build")
def eval_cli() -> None:
    """Evaluate vision-language models on MVL-SIB (the reference evaluator)."""


# ---------------------------------------------------------------- eval commands


def main() -> None:  # pragma: no cover - convenience for `python -m mvlsib.cli`
    build_cli()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(build_cli())
