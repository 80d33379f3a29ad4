"""`mvlsib-build verify-images`: every pool image classified as its topic by every model."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mvlsib import params, terminal
from mvlsib.cli.groups import DEFAULT_WORKDIR, build_cli, pool_option
from mvlsib.cli.options import (
    apart,
    out_option,
    progress_option,
    with_backend_options,
)

# ---------------------------------------------------------------- verify-images


@build_cli.command("verify-images")
@click.option(
    "--model",
    "models",
    type=params.TEXT,
    multiple=True,
    callback=params.distinct(),
    required=True,
    metavar="M",
    help="Model to check with (repeatable): a local folder or Hub id (hf backend: image-text-to-text "
    "models are asked, CLIP/SigLIP-style dual encoders classify zero-shot; detected from the config), "
    "or a served model name (openai backend). Prefix hf: or openai: to pick the backend per model.",
)
@pool_option()
@out_option(
    "Folder for report.json and report.md.", default=str(Path(DEFAULT_WORKDIR) / "verify-images"), show_default=True
)
@with_backend_options
@click.option(
    "--rotations",
    type=params.Int(1, 7),
    default=7,
    show_default=True,
    help="Option orders per image (cyclic rotations of the 7 topics, spread evenly); 7 puts every "
    "topic once at every letter A-G.",
)
@click.option(
    "--threshold",
    type=params.Finite(0.0, 1.0),
    default=0.5,
    show_default=True,
    help="A generative model passes an image when more than this share of the orders pick its "
    "topic (0.5: majority; 1: every order).",
)
@click.option(
    "--parse-mode",
    type=click.Choice(["strict", "relaxed", "lenient"]),
    default="relaxed",
    show_default=True,
    help="How answer letters are read (as in mvlsib-eval).",
)
@click.option(
    "--topic-names",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="CSV with a 'language' column and one column per topic: ask with these names, once per "
    "language (replaces the English names; include an eng_Latn row to keep them).",
)
@click.option(
    "--max-new-tokens",
    type=params.Int(1, params.MAX_TOKENS),
    default=8,
    show_default=True,
    help="Tokens generated per answer.",
)
@click.option(
    "--allow-fail",
    is_flag=True,
    default=False,
    help="Exit 0 even when some image fails some model (the report still lists them).",
)
@progress_option
@apart("out", "pool", "topic_names")
def verify_images_cmd(models, out, allow_fail, **options):
    """Check that every pool image is classified as its topic by every model.

    Generative models see each image with the 7 topics as options A-G, in several option
    orders; dual encoders classify zero-shot over the topic names. Writes OUT/report.json and
    OUT/report.md (failures first). Exits 1 when any image fails any model, unless --allow-fail.
    The backend options are the evaluator's (`mvlsib-eval run`); a model prefixed hf: or openai:
    uses that backend whatever --backend says.
    """
    from mvlsib.atomic import owned_folder
    from mvlsib.verify_images.verify import VerifyOptions, verify_images

    with owned_folder(out, "mvlsib-build verify-images"):
        report = verify_images(VerifyOptions(models=list(models), out=out, **options))
    n_images = len(report["images"])
    for name in report["models"]:
        e = report["summary"][name]
        terminal.echo("{} ({}): {}/{} images pass", name, e["kind"], e["passed"], n_images)
    terminal.echo("wrote {} and {}", Path(out) / "report.json", Path(out) / "report.md")
    if report["failures"]:
        failed = sorted({image_id for image_id, _ in report["failures"]})
        shown = ", ".join(failed[:10]) + (f", ... ({len(failed) - 10} more)" if len(failed) > 10 else "")
        terminal.echo("{} image(s) fail at least one model: {}", len(failed), shown, err=True)
        if not allow_fail:
            sys.exit(1)
