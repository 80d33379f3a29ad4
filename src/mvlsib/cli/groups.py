"""The two command groups and the options several commands share."""

from __future__ import annotations

from pathlib import Path

import click

from mvlsib.evaluation.command_options import BoundaryGroup
from mvlsib.workdir import BUNDLED_POOL

DEFAULT_WORKDIR = "mvlsib-work"
DEFAULT_POOL = BUNDLED_POOL
POOL_DEFAULT_HELP = "the bundled demo pool"


workdir_option = click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_WORKDIR,
    show_default=True,
    help="Work folder where stages exchange files (corpus.parquet, instances.jsonl, ...).",
)

pool_option = click.option(
    "--pool",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_POOL,
    show_default=POOL_DEFAULT_HELP,
    help="Image-pool folder holding manifest.csv and the image files.",
)


@click.group(cls=BoundaryGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mvlsib-build")
def build_cli() -> None:
    """Build, validate and publish the MVL-SIB benchmark.

    Typical order: ingest -> sample -> validate -> publish (or `build` for all of them).
    """


@click.group(cls=BoundaryGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mvlsib-build")
def eval_cli() -> None:
    """Evaluate vision-language models on MVL-SIB (the reference evaluator)."""
