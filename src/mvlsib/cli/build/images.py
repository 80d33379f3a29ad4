"""`mvlsib-build images`: curate the topic-image pool."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mvlsib import limits, params, terminal
from mvlsib.atomic import output_file, owned_folder
from mvlsib.cli.groups import build_cli, pool_option
from mvlsib.cli.options import apart, json_out_option, out_option, progress_option
from mvlsib.cli.options import pool_option as required_pool_option

_BOX = "x".join(map(str, limits.IMAGE_BOX))


def _box_option(help_text: str):
    """``--box``: the box a normalised pool image fits into (``add``, ``import-release``)."""
    return click.option("--box", type=params.Box(params.MAX_SIDE), default=_BOX, show_default=True, help=help_text)


@build_cli.group("images")
def images_group() -> None:
    """Curate the topic-image pool: add, check, gallery, credits, import."""


def _warn(note: str) -> None:
    terminal.warn("{}", note)


def check_options(fn):
    """Options shared by `images check` and `images gallery` (the gallery shows check results)."""
    opts = [
        click.option(
            "--allow-license",
            type=params.TEXT,
            multiple=True,
            callback=params.distinct(drop=True),
            metavar="SPDX",
            help="Also accept this licence key (repeatable), on top of the allow-list.",
        ),
        click.option(
            "--allow-list",
            type=click.Path(dir_okay=False, exists=True, path_type=Path),
            help="File with the allowed licence keys, one per line (replaces the default list).",
        ),
        click.option(
            "--min-side",
            type=params.Int(1, params.MAX_SIDE),
            default=limits.MIN_SIDE,
            show_default=True,
            help="Smallest accepted shorter side in pixels.",
        ),
        click.option(
            "--max-pixels",
            type=params.Int(1, params.MAX_PIXELS),
            default=limits.MAX_PIXELS,
            show_default=True,
            help="Largest accepted width x height (decompression-bomb guard).",
        ),
        click.option(
            "--expected-per-topic",
            type=params.Int(0, params.MAX_COUNT),
            default=limits.IMAGES_PER_TOPIC,
            show_default=True,
            help="Images each of the 7 topics must have (0: do not check counts).",
        ),
        click.option(
            "--phash-max",
            type=params.Int(0, 64),
            default=10,
            show_default=True,
            help="Near-duplicate when pHash distance <= this (and dHash within --dhash-max).",
        ),
        click.option(
            "--dhash-max",
            type=params.Int(0, 64),
            default=10,
            show_default=True,
            help="Near-duplicate when dHash distance <= this (and pHash within --phash-max).",
        ),
        click.option(
            "--hash-cache",
            type=click.Path(dir_okay=False, path_type=Path),
            help="JSON file keeping perceptual hashes by sha256, so re-checks only hash changed files.",
        ),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


@images_group.command("add")
@click.argument("source", type=params.TEXT)
# No default: the bundled pool is package data, and adding to it would change the installed package.
@required_pool_option("The one to add to (created if missing).", required=True, folder_only=True)
@click.option("--topic", type=params.TEXT, required=True, help="SIB-200 topic, e.g. sports or science/technology.")
@click.option(
    "--license",
    "license_",
    type=params.TEXT,
    required=True,
    metavar="SPDX",
    help="Licence as SPDX id (CC-BY-SA-4.0) or Wikimedia short name ('CC BY-SA 4.0', 'Public domain').",
)
@click.option(
    "--author", type=params.TEXT, default=None, help="Who made the image (required for attribution licences)."
)
@click.option(
    "--source-url", type=params.TEXT, default=None, help="Page where the image and its licence are published."
)
@click.option("--title", type=params.TEXT, default=None, help="Short description used in credits and the gallery.")
@click.option("--image-id", type=params.TEXT, default=None, help="Id to use instead of the next free <topic_slug>_<n>.")
@_box_option("Fit the image into WIDTHxHEIGHT (never enlarged).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "jpeg", "png"]),
    default="auto",
    show_default=True,
    help="Stored format; auto keeps JPEG for photos and PNG for lossless sources.",
)
@click.option(
    "--min-side",
    type=params.Int(1, params.MAX_SIDE),
    default=limits.MIN_SIDE,
    show_default=True,
    help="Refuse images whose shorter side is smaller after fitting.",
)
@click.option(
    "--max-pixels",
    type=params.Int(1, params.MAX_PIXELS),
    default=limits.MAX_PIXELS,
    show_default=True,
    help="Refuse images with more pixels (decompression-bomb guard).",
)
@click.option(
    "--max-bytes",
    type=params.Int(1, params.MAX_BYTES),
    default=limits.MAX_DOWNLOAD_BYTES,
    show_default=True,
    help="Refuse sources larger than this many bytes.",
)
@click.option(
    "--timeout",
    type=params.Finite(0.1, params.MAX_SECONDS),
    default=limits.DOWNLOAD_TIMEOUT_S,
    show_default=True,
    help="Seconds to wait for a URL to answer.",
)
def images_add(
    source,
    pool,
    topic,
    license_,
    author,
    source_url,
    title,
    image_id,
    box,
    fmt,
    min_side,
    max_pixels,
    max_bytes,
    timeout,
) -> None:
    """Normalise SOURCE (file or http(s) URL) and add it to the pool with a new manifest row."""
    from mvlsib.image_pool.add import AddRequest, add_image

    row = add_image(
        pool,
        AddRequest(
            source,
            topic,
            license_,
            author or "",  # absent: the pool's rules say what a licence needs
            source_url or "",
            title or "",
            image_id or "",
            box,
            fmt,
            min_side,
            max_pixels,
            max_bytes,
            timeout,
        ),
    )
    terminal.echo("added {}: {} (sha256 {})", row.image_id, pool / row.file, row.sha256)


@images_group.command("check")
@pool_option()
@check_options
@json_out_option("'-' (or --json alone): print it instead of the text.", stdout=True, old=("--json-out",))
@click.option(
    "--closest",
    type=params.Int(0, params.MAX_COUNT),
    default=10,
    show_default=True,
    help="How many closest image pairs to list (even when they pass).",
)
@progress_option
def images_check(
    pool,
    allow_license,
    allow_list,
    min_side,
    max_pixels,
    expected_per_topic,
    phash_max,
    dhash_max,
    hash_cache,
    json_out,
    closest,
    progress,
) -> None:
    """Check licences, attribution, files, hashes, duplicates and topic counts; exit 1 naming every problem."""
    from mvlsib.image_pool.check import check_pool, options_from, write_report
    from mvlsib.image_pool.hashes import hash_cache_file

    opts = options_from(
        allow_license, allow_list, min_side, max_pixels, expected_per_topic, phash_max, dhash_max, closest=closest
    )
    with hash_cache_file(hash_cache, warn=_warn) as cache:
        report = check_pool(pool, opts, hash_cache=cache, progress=progress)
    as_json = json_out is not None and str(json_out) == "-"
    if json_out is not None and not as_json:
        write_report(report, json_out)
    terminal.echo_block(report.to_json(ascii_only=True) if as_json else report.to_text(), nl=False)
    if not report.ok:
        sys.exit(1)


@images_group.command("gallery")
@pool_option()
@out_option("Folder for gallery.html and one contact_<topic>.png per topic.", required=True)
@click.option(
    "--report",
    "report_file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="JSON report from `verify-images` to show each model's verdict per image.",
)
@check_options
@progress_option
@apart("out", "pool", "report_file", "allow_list", "hash_cache")
def images_gallery(
    pool,
    out,
    report_file,
    allow_license,
    allow_list,
    min_side,
    max_pixels,
    expected_per_topic,
    phash_max,
    dhash_max,
    hash_cache,
    progress,
) -> None:
    """Write a single-file HTML gallery (and contact sheets) for reviewing the pool."""
    from mvlsib.image_pool.check import options_from
    from mvlsib.image_pool.gallery import build_gallery
    from mvlsib.image_pool.hashes import hash_cache_file

    opts = options_from(allow_license, allow_list, min_side, max_pixels, expected_per_topic, phash_max, dhash_max)
    with hash_cache_file(hash_cache, warn=_warn) as cache, owned_folder(out, "mvlsib-build images gallery"):
        res = build_gallery(
            pool, out, verification_report=report_file, options=opts, hash_cache=cache, progress=progress
        )
    terminal.echo("wrote {} and {} contact sheet(s)", res.html, len(res.contact_sheets))
    if not res.report.ok:
        terminal.echo(
            "note: images check finds {} problem(s); they are marked in the gallery", len(res.report.errors), err=True
        )


@images_group.command("credits")
@pool_option()
@out_option("Write the Markdown to this file (default: stdout).", file=True)
def images_credits(pool, out) -> None:
    """Print the attribution list in Markdown: one line per image (title, author, licence link, source)."""
    from mvlsib.image_pool.credits import pool_credits

    text = pool_credits(pool)
    if out:
        with output_file(out, "mvlsib-build images credits") as fh:
            fh.write(text)
        terminal.echo("wrote {}", out)
    else:
        terminal.echo_block(text, nl=False)


@images_group.command("import-release")
@click.argument("release", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option(
    "--licences",
    "licences_csv",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    required=True,
    help="CSV with file, license, author, source_url[, title] for every image of the release.",
)
@required_pool_option("A new (or empty) folder to build the pool in.", required=True, folder_only=True)
@_box_option("Fit images into WIDTHxHEIGHT (never enlarged).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "jpeg", "png"]),
    default="auto",
    show_default=True,
    help="Stored format; auto keeps JPEG for photos and PNG for lossless sources.",
)
@progress_option
def images_import_release(release, licences_csv, pool, box, fmt, progress) -> None:
    """Import RELEASE's data/images/sib200/<category>_<i>.jpg with licence facts into a new pool."""
    from mvlsib.image_pool.import_release import import_release

    rows = import_release(release, licences_csv, pool, box=box, fmt=fmt, progress=progress)
    terminal.echo("imported {} images into {}; run `mvlsib-build images check --pool {}` next", len(rows), pool, pool)
