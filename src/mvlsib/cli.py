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


class InputError(click.ClickException):
    """Bad input the user can fix: message on stderr, exit status 2 (1 is kept for failed checks)."""

    exit_code = 2


def _friendly_errors(fn):
    """Turn MvlsibError (bad input the user can fix) into a one-paragraph message, exit 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        from mvlsib.errors import MvlsibError

        try:
            return fn(*args, **kwargs)
        except MvlsibError as exc:
            raise InputError(str(exc)) from exc

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


@build_cli.command()
@workdir_option
@click.option("--seed", type=int, default=0, show_default=True,
              help="Sampling seed. The published benchmark uses 0; any other value gives a different, equally valid sample.")
@click.option("--pool", type=click.Path(path_type=Path), default=DEFAULT_POOL, show_default=True,
              help="Image-pool folder (with manifest.csv) whose image ids are sampled.")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar on stderr.")
@_friendly_errors
def sample(workdir: Path, seed: int, pool: Path, progress: bool) -> None:
    """Sample the 3 x 1,004 MVL-SIB instances (ids only, the same in every language).

    Reads WORKDIR/corpus.parquet and the pool manifest; writes WORKDIR/instances.jsonl
    and WORKDIR/sample_report.json, then prints the sha256 of instances.jsonl. The
    algorithm is documented in docs/sampling.md and depends only on inputs and seed.
    """
    from mvlsib.builder.sample import sample as run_sample

    report = run_sample(workdir, seed=seed, pool=pool, progress=progress)
    spread = ", ".join(f"{t} {s}" for t, s in report.positive_image_spread.items())
    click.echo(f"{report.n_instances} instances from {report.n_sentences} sentences "
               f"({report.n_languages} languages), seed {report.seed}")
    click.echo(f"labels A-D: sentence {list(report.sentence_label_counts.values())}, "
               f"image {list(report.image_label_counts.values())}; positive-image use spread per topic: {spread}")
    click.echo(f"wrote {report.output}")
    click.echo(f"sha256 {report.instances_sha256}")


# ---------------------------------------------------------------- validate


@build_cli.command()
@workdir_option
@click.option("--pool", type=click.Path(path_type=Path), default=DEFAULT_POOL, show_default=True,
              help="Image-pool folder whose manifest gives each image's topic.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write every violation and the summary to this JSON file.")
@click.option("--max-show", type=int, default=50, show_default=True, help="Print at most this many violations.")
@_friendly_errors
def validate(workdir: Path, pool: Path, json_out: Path | None, max_show: int) -> None:
    """Check corpus and instances against the JSON Schemas and every dataset invariant.

    Exits 0 with a one-line summary when all holds, 1 with a list of violations
    (instance id, rule, detail) otherwise. Rules are listed in docs/validation.md.
    """
    from mvlsib.atomic import atomic_open
    from mvlsib.validation.invariants import validate_workdir

    result = validate_workdir(workdir, pool=pool)
    if json_out is not None:
        with atomic_open(json_out) as fh:
            fh.write(result.to_json())
    s = result.summary
    if result.ok:
        click.echo(f"OK: {s['instances']} instances, {s['sentences']} sentences, {s['languages']} languages, "
                   f"{s['images']} images; all schemas and invariants hold")
        return
    click.echo(f"{len(result.violations)} violation(s): " + ", ".join(f"{r} {n}" for r, n in result.counts().items()), err=True)
    click.echo(f"{'instance':>8}  {'rule':<17} detail", err=True)
    for v in result.violations[:max_show]:
        click.echo(str(v), err=True)
    if len(result.violations) > max_show:
        click.echo(f"... {len(result.violations) - max_show} more (use --json FILE for all)", err=True)
    sys.exit(1)


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

# The commands live in mvlsib.evaluation.commands so that each release's standalone
# evaluate.py runs the very same code; that module imports only click at load time.
from mvlsib.evaluation.commands import COMMANDS as _EVAL_COMMANDS  # noqa: E402

for _cmd in _EVAL_COMMANDS:
    eval_cli.add_command(_cmd)


def main() -> None:  # pragma: no cover - convenience for `python -m mvlsib.cli`
    build_cli()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(build_cli())
