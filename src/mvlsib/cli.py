"""Command-line entry points. Options are parsed here; all work happens in the library.

Library modules are imported inside each command so that ``--help`` stays fast
(torch, transformers, datasets and pandas are never imported just to print help).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

# One error wrapper for both command groups: MvlsibError (bad input the user can fix) becomes a
# one-paragraph message and exit status 2. It lives with the evaluator's commands because each
# release's standalone evaluate.py needs it without this module.
from mvlsib.evaluation.commands import friendly_errors as _friendly_errors

DEFAULT_WORKDIR = "mvlsib-work"
DEFAULT_POOL = "image_pool"


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


def _box(value: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in value.lower().split("x"))
        if w < 1 or h < 1:
            raise ValueError
    except ValueError:
        raise click.BadParameter(f"{value!r}: write WIDTHxHEIGHT, e.g. 640x480") from None
    return w, h


def _check_options(allow_license, allow_list, min_side, max_pixels, expected_per_topic, phash_max, dhash_max):
    from mvlsib.image_pool.check import CheckOptions
    from mvlsib.image_pool.hashes import NearDupPolicy
    from mvlsib.image_pool.licenses import DEFAULT_ALLOWED, read_allow_list

    allowed = read_allow_list(allow_list) if allow_list else DEFAULT_ALLOWED
    return CheckOptions(allowed_licenses=tuple(dict.fromkeys([*allowed, *allow_license])), min_side=min_side,
                        max_pixels=max_pixels, expected_per_topic=expected_per_topic or None,
                        policy=NearDupPolicy(phash_max=phash_max, dhash_max=dhash_max))


def _load_cache(path):
    if not path:
        return {}
    from mvlsib.image_pool.hashes import load_hash_cache

    cache, note = load_hash_cache(path)
    if note:
        click.echo(f"warning: {note}", err=True)
    return cache


def _save_cache(path, cache) -> None:
    if path:
        from mvlsib.image_pool.hashes import save_hash_cache

        save_hash_cache(path, cache)


def check_options(fn):
    """Options shared by `images check` and `images gallery` (the gallery shows check results)."""
    opts = [
        click.option("--allow-license", multiple=True, metavar="SPDX",
                     help="Also accept this licence key (repeatable), on top of the allow-list."),
        click.option("--allow-list", type=click.Path(dir_okay=False, exists=True, path_type=Path),
                     help="File with the allowed licence keys, one per line (replaces the default list)."),
        click.option("--min-side", type=click.IntRange(1), default=224, show_default=True,
                     help="Smallest accepted shorter side in pixels."),
        click.option("--max-pixels", type=click.IntRange(1), default=64_000_000, show_default=True,
                     help="Largest accepted width x height (decompression-bomb guard)."),
        click.option("--expected-per-topic", type=click.IntRange(0), default=10, show_default=True,
                     help="Images each of the 7 topics must have (0: do not check counts)."),
        click.option("--phash-max", type=click.IntRange(0, 64), default=10, show_default=True,
                     help="Near-duplicate when pHash distance <= this (and dHash within --dhash-max)."),
        click.option("--dhash-max", type=click.IntRange(0, 64), default=10, show_default=True,
                     help="Near-duplicate when dHash distance <= this (and pHash within --phash-max)."),
        click.option("--hash-cache", type=click.Path(dir_okay=False, path_type=Path),
                     help="JSON file keeping perceptual hashes by sha256, so re-checks only hash changed files."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


@images_group.command("add")
@click.argument("source")
@pool_option
@click.option("--topic", required=True, help="SIB-200 topic, e.g. sports or science/technology.")
@click.option("--license", "license_", required=True, metavar="SPDX",
              help="Licence as SPDX id (CC-BY-SA-4.0) or Wikimedia short name ('CC BY-SA 4.0', 'Public domain').")
@click.option("--author", default="", help="Who made the image (required for attribution licences).")
@click.option("--source-url", default="", help="Page where the image and its licence are published.")
@click.option("--title", default="", help="Short description used in credits and the gallery.")
@click.option("--image-id", default="", help="Id to use instead of the next free <topic_slug>_<n>.")
@click.option("--box", default="640x480", show_default=True, help="Fit the image into WIDTHxHEIGHT (never enlarged).")
@click.option("--format", "fmt", type=click.Choice(["auto", "jpeg", "png"]), default="auto", show_default=True,
              help="Stored format; auto keeps JPEG for photos and PNG for lossless sources.")
@click.option("--min-side", type=click.IntRange(1), default=224, show_default=True,
              help="Refuse images whose shorter side is smaller after fitting.")
@click.option("--max-pixels", type=click.IntRange(1), default=64_000_000, show_default=True,
              help="Refuse images with more pixels (decompression-bomb guard).")
@click.option("--max-bytes", type=click.IntRange(1), default=25 * 1024 * 1024, show_default=True,
              help="Refuse sources larger than this many bytes.")
@click.option("--timeout", type=click.FloatRange(0.1), default=30.0, show_default=True,
              help="Seconds to wait for a URL to answer.")
@_friendly_errors
def images_add(source, pool, topic, license_, author, source_url, title, image_id, box, fmt, min_side, max_pixels,
               max_bytes, timeout) -> None:
    """Normalise SOURCE (file or http(s) URL) and add it to the pool with a new manifest row."""
    from mvlsib.image_pool.add import AddRequest, add_image

    row = add_image(pool, AddRequest(source, topic, license_, author, source_url, title, image_id, _box(box), fmt,
                                     min_side, max_pixels, max_bytes, timeout))
    click.echo(f"added {row.image_id}: {pool / row.file} (sha256 {row.sha256})")


@images_group.command("check")
@pool_option
@check_options
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON instead of text.")
@click.option("--json-out", type=click.Path(dir_okay=False, path_type=Path), help="Also write the JSON report here.")
@click.option("--closest", type=click.IntRange(0), default=10, show_default=True,
              help="How many closest image pairs to list (even when they pass).")
@_friendly_errors
def images_check(pool, allow_license, allow_list, min_side, max_pixels, expected_per_topic, phash_max, dhash_max,
                 hash_cache, as_json, json_out, closest) -> None:
    """Check licences, attribution, files, hashes, duplicates and topic counts; exit 1 naming every problem."""
    import dataclasses

    from mvlsib.image_pool.check import check_pool, write_report

    opts = _check_options(allow_license, allow_list, min_side, max_pixels, expected_per_topic, phash_max, dhash_max)
    cache = _load_cache(hash_cache)
    report = check_pool(pool, dataclasses.replace(opts, closest=closest), hash_cache=cache, progress=True)
    _save_cache(hash_cache, cache)
    if json_out:
        write_report(report, json_out)
    click.echo(report.to_json() if as_json else report.to_text(), nl=False)
    if not report.ok:
        sys.exit(1)


@images_group.command("gallery")
@pool_option
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for gallery.html and one contact_<topic>.png per topic.")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="JSON report from `verify-images` to show each model's verdict per image.")
@check_options
@_friendly_errors
def images_gallery(pool, out, report_file, allow_license, allow_list, min_side, max_pixels, expected_per_topic,
                   phash_max, dhash_max, hash_cache) -> None:
    """Write a single-file HTML gallery (and contact sheets) for reviewing the pool."""
    from mvlsib.image_pool.gallery import build_gallery

    opts = _check_options(allow_license, allow_list, min_side, max_pixels, expected_per_topic, phash_max, dhash_max)
    cache = _load_cache(hash_cache)
    res = build_gallery(pool, out, verification_report=report_file, options=opts, hash_cache=cache, progress=True)
    _save_cache(hash_cache, cache)
    click.echo(f"wrote {res.html} and {len(res.contact_sheets)} contact sheet(s)")
    if not res.report.ok:
        click.echo(f"note: images check finds {len(res.report.errors)} problem(s); they are marked in the gallery",
                   err=True)


@images_group.command("credits")
@pool_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the Markdown here (default: stdout).")
@_friendly_errors
def images_credits(pool, out) -> None:
    """Print the attribution list in Markdown: one line per image (title, author, licence link, source)."""
    from mvlsib.image_pool.credits import pool_credits

    text = pool_credits(pool)
    if out:
        from mvlsib.atomic import atomic_open

        with atomic_open(out) as fh:
            fh.write(text)
        click.echo(f"wrote {out}")
    else:
        click.echo(text, nl=False)


@images_group.command("import-release")
@click.argument("release", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--licences", "licences_csv", type=click.Path(dir_okay=False, exists=True, path_type=Path), required=True,
              help="CSV with file, license, author, source_url[, title] for every image of the release.")
@click.option("--pool", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="New (or empty) folder to build the pool in.")
@click.option("--box", default="640x480", show_default=True, help="Fit images into WIDTHxHEIGHT (never enlarged).")
@click.option("--format", "fmt", type=click.Choice(["auto", "jpeg", "png"]), default="auto", show_default=True,
              help="Stored format; auto keeps JPEG for photos and PNG for lossless sources.")
@_friendly_errors
def images_import_release(release, licences_csv, pool, box, fmt) -> None:
    """Import RELEASE's data/images/sib200/<category>_<i>.jpg with licence facts into a new pool."""
    from mvlsib.image_pool.import_release import import_release

    rows = import_release(release, licences_csv, pool, box=_box(box), fmt=fmt)
    click.echo(f"imported {len(rows)} images into {pool}; run `mvlsib-build images check --pool {pool}` next")


# ---------------------------------------------------------------- verify-images


@build_cli.command("verify-images")
@click.option("--model", "models", multiple=True, required=True, metavar="M",
              help="Model to check with (repeatable): a local folder or Hub id (hf backend: image-text-to-text "
              "models are asked, CLIP/SigLIP-style dual encoders classify zero-shot; detected from the config), "
              "or a served model name (openai backend). Prefix hf: or openai: to pick the backend per model.")
@pool_option
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=str(Path(DEFAULT_WORKDIR) / "verify-images"), show_default=True,
              help="Folder for report.json and report.md.")
@click.option("--backend", type=click.Choice(["hf", "openai"]), default="hf", show_default=True,
              help="Backend for models without a prefix: hf (transformers, local) or openai (HTTP server).")
@click.option("--base-url", default=None, help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 "
              "(openai backend; the key is read from OPENAI_API_KEY).")
@click.option("--concurrency", type=int, default=8, show_default=True, help="Parallel requests (openai backend).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True,
              help="Where hf models run; auto picks CUDA when torch sees a GPU.")
@click.option("--dtype", type=click.Choice(["auto", "bfloat16", "float16", "float32"]), default="auto",
              show_default=True, help="Weights dtype for hf models; auto is bfloat16 on CUDA, float32 on the CPU.")
@click.option("--batch-size", type=int, default=8, show_default=True,
              help="Prompts (generative) or images (dual encoder) per forward pass.")
@click.option("--rotations", type=click.IntRange(1, 7), default=7, show_default=True,
              help="Option orders per image (cyclic rotations of the 7 topics, spread evenly); 7 puts every "
              "topic once at every letter A-G.")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=0.5, show_default=True,
              help="A generative model passes an image when more than this share of the orders pick its "
              "topic (0.5: majority; 1: every order).")
@click.option("--parse-mode", type=click.Choice(["strict", "relaxed", "lenient"]), default="relaxed",
              show_default=True, help="How answer letters are read (as in mvlsib-eval).")
@click.option("--topic-names", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="CSV with a 'language' column and one column per topic: ask with these names, once per "
              "language (replaces the English names; include an eng_Latn row to keep them).")
@click.option("--max-new-tokens", type=int, default=8, show_default=True, help="Tokens generated per answer.")
@click.option("--revision", default=None, help="Branch, tag or commit of Hub models (all hf models).")
@click.option("--trust-remote-code", is_flag=True, default=False,
              help="Allow models whose code lives in their repository (runs that code: only for models you trust).")
@click.option("--allow-fail", is_flag=True, default=False,
              help="Exit 0 even when some image fails some model (the report still lists them).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar on stderr.")
@_friendly_errors
def verify_images_cmd(models, pool, out, backend, base_url, concurrency, device, dtype, batch_size, rotations,
                      threshold, parse_mode, topic_names, max_new_tokens, revision, trust_remote_code, allow_fail,
                      progress):
    """Check that every pool image is classified as its topic by every model.

    Generative models see each image with the 7 topics as options A-G, in several option
    orders; dual encoders classify zero-shot over the topic names. Writes OUT/report.json and
    OUT/report.md (failures first). Exits 1 when any image fails any model, unless --allow-fail.
    """
    from mvlsib.validation.verify_images import VerifyOptions, verify_images

    opts = VerifyOptions(
        pool=pool, models=list(models), out=out, backend=backend, base_url=base_url, concurrency=concurrency,
        device=device, dtype=dtype, batch_size=batch_size, rotations=rotations, threshold=threshold,
        parse_mode=parse_mode, topic_names=topic_names, max_new_tokens=max_new_tokens, revision=revision,
        trust_remote_code=trust_remote_code, progress=progress,
    )
    report = verify_images(opts)
    n_images = len(report["images"])
    for name in report["models"]:
        e = report["summary"][name]
        click.echo(f"{name} ({e['kind']}): {e['passed']}/{n_images} images pass")
    click.echo(f"wrote {Path(out) / 'report.json'} and {Path(out) / 'report.md'}")
    if report["failures"]:
        failed = sorted({image_id for image_id, _ in report["failures"]})
        shown = ", ".join(failed[:10]) + (f", ... ({len(failed) - 10} more)" if len(failed) > 10 else "")
        click.echo(f"{len(failed)} image(s) fail at least one model: {shown}", err=True)
        if not allow_fail:
            sys.exit(1)


# ---------------------------------------------------------------- publish / build
@build_cli.command("publish")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_WORKDIR,
    show_default=True,
    help="Work folder with corpus.parquet and instances.jsonl (used with --out).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write the release folder here from --workdir and --pool.",
)
@click.option(
    "--pool",
    type=click.Path(path_type=Path),
    default=DEFAULT_POOL,
    show_default=True,
    help="Image pool folder (with manifest.csv) the instances were sampled with.",
)
@click.option("--seed", type=int, default=None, help="Sampling seed to record in the card (default: as the sampler recorded it).")
@click.option(
    "--release",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Upload this existing release folder (checked against its manifest.json first).",
)
@click.option("--repo-id", default=None, help="Hub dataset repository ORG/NAME to upload to.")
@click.option("--revision", default=None, help="Hub branch to commit to (default: main; created if missing).")
@click.option("--private", is_flag=True, help="Create the Hub repository as private (if it does not exist yet).")
@click.option("--tag", default=None, help="Tag the uploaded revision, e.g. v1.0.")
@click.option("--dry-run", is_flag=True, help="List what would be added, changed and deleted on the Hub; write nothing.")
@_friendly_errors
def publish_cmd(workdir, out, pool, seed, release, repo_id, revision, private, tag, dry_run):
    """Write a release folder (--out) and/or upload one to the Hub (--repo-id).

    \b
    mvlsib-build publish --workdir W --out DIR
    mvlsib-build publish --release DIR --repo-id ORG/NAME [--tag v1.0] [--dry-run]

    The Hub token comes from HF_TOKEN or the stored login (`hf auth login`).
    """
    from mvlsib.errors import MvlsibError

    if out is None and release is None:
        raise MvlsibError("nothing to do: pass --out DIR to write a release, or --release DIR --repo-id ORG/NAME to upload one")
    if out is not None and release is not None:
        raise MvlsibError("--out writes a new release and --release uploads an existing one; pass only one of them")
    if release is not None and repo_id is None:
        raise MvlsibError("--release needs --repo-id ORG/NAME (the Hub dataset repository to upload to)")
    if out is not None:
        from mvlsib.builder.publish import publish

        summary = publish(workdir, out, pool, seed=seed, repo_hint=repo_id or "ORG/mvl-sib")
        for line in summary.lines():
            click.echo(line)
        for warning in summary.warnings:
            click.echo(f"warning: {warning}", err=True)
        release = out
    if repo_id is not None:
        from mvlsib.builder.hub import publish_to_hub

        result = publish_to_hub(release, repo_id, revision=revision, private=private, tag=tag, dry_run=dry_run)
        for line in result.lines():
            click.echo(line)


@build_cli.command("build")
@click.option("--sib", required=True, help="SIB-200: a local folder in the repository layout, or a Hub dataset id.")
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True, help="Release folder to write.")
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the intermediate files here (default: a temporary folder, removed afterwards).",
)
@click.option(
    "--pool",
    type=click.Path(path_type=Path),
    default=DEFAULT_POOL,
    show_default=True,
    help="Image pool folder with manifest.csv.",
)
@click.option("--languages", default=None, help="Comma-separated languages to include (default: all).")
@click.option("--revision", default=None, help="Revision of a Hub --sib dataset.")
@click.option(
    "--flores",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Also add the languages of these raw Flores files (e.g. N'Ko); needs --annotation.",
)
@click.option(
    "--annotation",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="English SIB-200 annotation (train/dev/test.tsv) for --flores.",
)
@_friendly_errors
def build_cmd(sib, seed, out, workdir, pool, languages, revision, flores, annotation):
    """Run ingest -> sample -> validate -> publish-to-folder and print a summary."""
    from mvlsib.builder.pipeline import build

    langs = [x.strip() for x in languages.split(",") if x.strip()] if languages else None
    summary = build(
        sib, out, seed=seed, workdir=workdir, pool=pool, languages=langs, revision=revision,
        flores=flores, annotation=annotation,
    )
    for line in summary.lines():
        click.echo(line)
    for warning in summary.release.warnings:
        click.echo(f"warning: {warning}", err=True)



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
