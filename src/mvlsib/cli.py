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


# ---------------------------------------------------------------- sample


# ---------------------------------------------------------------- validate


# ---------------------------------------------------------------- images


pool_option = click.option(
    "--pool",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_POOL,
    show_default=True,
    help="Image-pool folder holding manifest.csv and the image files.",
)


@build_cli.group("images")
def images_group() -> None:
    """Curate the topic-image pool: draw the demo pool, add, check, gallery, credits, import."""


@images_group.command("demo-pool")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=DEFAULT_POOL, show_default=True,
              help="Folder to write the drawn pictograms and manifest.csv into.")
@_friendly_errors
def images_demo_pool(out: Path) -> None:
    """Draw the bundled demo pool (10 CC0 pictograms per topic) into OUT.

    Deterministic: the same toolkit and Pillow version give byte-identical files.
    """
    from mvlsib.image_pool.demo import write_demo_pool

    path = write_demo_pool(out)
    click.echo(f"wrote {path}")


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
