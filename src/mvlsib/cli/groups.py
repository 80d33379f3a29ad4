"""The two command groups, and what only mvlsib-build's commands share: their options (the options
both CLIs share are in ``mvlsib.cli.options``) and the switch for the Hub libraries' own bars."""

from __future__ import annotations

import contextlib
from pathlib import Path

import click

from mvlsib.boundary import BoundaryGroup
from mvlsib.cli.options import pool_option as shared_pool_option
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


def pool_option(note: str | None = None):
    """``--pool`` as every stage reads it: defaults to the bundled demo pool."""
    return shared_pool_option(note, default=DEFAULT_POOL, show_default=POOL_DEFAULT_HELP)


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


@contextlib.contextmanager
def hub_bars(enabled: bool, *, datasets: bool = False):
    """The Hub libraries' own download and upload bars (huggingface_hub's; ``datasets``: also the
    datasets library's), off for --no-progress and restored afterwards."""
    if enabled:
        yield
        return
    import huggingface_hub.utils as hub_utils

    switches = [(hub_utils.are_progress_bars_disabled, hub_utils.disable_progress_bars, hub_utils.enable_progress_bars)]
    if datasets:
        import datasets as ds

        switches.append((ds.are_progress_bars_disabled, ds.disable_progress_bars, ds.enable_progress_bars))
    restore = [enable for is_disabled, _, enable in switches if not is_disabled()]
    for _, disable, _ in switches:
        disable()
    try:
        yield
    finally:
        for enable in restore:
            enable()
