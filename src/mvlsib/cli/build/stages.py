"""`mvlsib-build` ingest, sample, validate, publish and build: the pipeline, a stage a command."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mvlsib import params, terminal
from mvlsib.cli.groups import DEFAULT_WORKDIR, build_cli, hub_bars, pool_option, workdir_option
from mvlsib.cli.options import (
    HUB_REPO_ID,
    LANGUAGE_CODE,
    URL,
    apart,
    data_revision_option,
    json_out_option,
    option,
    out_option,
    progress_option,
    release_option,
)
from mvlsib.cli.options import (
    pool_option as sampled_pool_option,
)
from mvlsib.limits import HUB_TIMEOUT_S
from mvlsib.workdir import INSTANCES_FILE

# ---------------------------------------------------------------- ingest


@build_cli.command("ingest")
@click.option(
    "--sib",
    type=params.TEXT,
    metavar="DIR|ORG/NAME",
    default=None,
    help="SIB-200 source: a local folder (SIB-200 checkout with data/annotated/<lang>/, its 'annotated' "
    "folder, or the Hub layout data/<lang>/) or a Hub dataset id. "
    "Default when --flores is not given: Davlan/sib200.",
)
@data_revision_option("(--sib ORG/NAME only).", old=("--revision",))
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
    type=params.CommaList(LANGUAGE_CODE),
    default=None,
    metavar="CODES",
    help="Comma-separated language codes to keep (e.g. eng_Latn,fra_Latn); default: all.",
)
@click.option(
    "--hub-endpoint",
    type=URL,
    default=None,
    envvar="HF_ENDPOINT",
    show_envvar=True,
    help="Hub server to download from (default https://huggingface.co).",
)
@progress_option
@workdir_option
def ingest_cmd(sib, data_revision, flores, annotation, languages, hub_endpoint, progress, workdir):
    """Read SIB-200 (or build it from Flores), check it and write WORKDIR/corpus.parquet.

    Every language must have English's ids, splits and topics; texts are parsed exactly and
    right-stripped. Duplicate translations are listed in WORKDIR/ingest_report.json.
    """
    from mvlsib.builder.ingest import ingest
    from mvlsib.workdir.corpus import save_corpus
    from mvlsib.workdir.folder import in_use

    with in_use(workdir):  # from the first read to the last line: one command at a time in a work folder
        corpus = ingest(
            sib,
            revision=data_revision,
            flores=flores,
            annotation=annotation,
            languages=languages,
            progress=progress,
            endpoint=hub_endpoint,
        )
        save_corpus(workdir, corpus)
        report = corpus.report
        n_cross = report["n_cross_topic_duplicate_groups"]
        terminal.echo(
            "languages: {}  rows: {:,}  ({} sentences per language)",
            report["n_languages"],
            report["n_rows"],
            report["sentences_per_language"],
        )
        terminal.echo(
            "duplicate texts: {} group(s) in {} language(s), {} across topics (see {})",
            report["n_duplicate_groups"],
            report["n_languages_with_duplicates"],
            n_cross,
            Path(workdir) / "ingest_report.json",
        )
        terminal.echo("wrote {}  sha256 {}", Path(workdir) / report["corpus"], report["corpus_sha256"])


# ---------------------------------------------------------------- sample


@build_cli.command()
@workdir_option
@click.option(
    "--seed",
    type=params.Int(0, params.MAX_SEED),
    default=0,
    show_default=True,
    help="Sampling seed. The published benchmark uses 0; any other value gives a different, equally valid sample.",
)
@pool_option("Its image ids are sampled.")
@progress_option
def sample(workdir: Path, seed: int, pool: Path, progress: bool) -> None:
    """Sample the 3 x 1,004 MVL-SIB instances (ids only, the same in every language).

    Reads WORKDIR/corpus.parquet and the pool manifest; writes WORKDIR/instances.jsonl
    and WORKDIR/sample_report.json, then prints the sha256 of instances.jsonl. The
    algorithm is documented in docs/sampling.md and depends only on inputs and seed.
    """
    from mvlsib.builder.sample import duplicate_partners, sample_report
    from mvlsib.builder.sample import sample as sample_stage
    from mvlsib.workdir.corpus import load_corpus
    from mvlsib.workdir.folder import in_use
    from mvlsib.workdir.instances import save_instances, save_sample_report
    from mvlsib.workdir.pool_manifest import load_pool

    with in_use(workdir):
        corpus, pool_value = load_corpus(workdir), load_pool(pool)
        partners = duplicate_partners(corpus)
        instances = sample_stage(corpus, pool_value, seed, partners=partners, progress=progress)
        digest = save_instances(workdir, instances)
        report = sample_report(corpus, pool_value, instances, seed, partners=partners, digest=digest)
        save_sample_report(workdir, report.to_dict())
        spread = ", ".join(f"{t} {s}" for t, s in report.positive_image_spread.items())
        terminal.echo(
            "{} instances from {} sentences ({} languages), seed {}",
            report.n_instances,
            report.n_sentences,
            report.n_languages,
            report.seed,
        )
        terminal.echo(
            "labels A-D: sentence {}, image {}; positive-image use spread per topic: {}",
            list(report.sentence_label_counts.values()),
            list(report.image_label_counts.values()),
            spread,
        )
        terminal.echo("wrote {}", Path(workdir) / INSTANCES_FILE)
        terminal.echo("sha256 {}", report.instances_sha256)


# ---------------------------------------------------------------- validate


@build_cli.command()
@workdir_option
@pool_option("Its manifest gives each image's topic.")
@json_out_option("It lists every violation and the summary.")
@click.option(
    "--max-show",
    type=params.Int(0, params.MAX_COUNT),
    default=50,
    show_default=True,
    help="Print at most this many violations.",
)
@progress_option
def validate(workdir: Path, pool: Path, json_out: Path | None, max_show: int, progress: bool) -> None:
    """Check corpus and instances against the JSON Schemas and every dataset invariant.

    Exits 0 with a one-line summary when all holds, 1 with a list of violations
    (instance id, rule, detail) otherwise. Rules are listed in docs/validation.md.
    """
    from mvlsib.atomic import output_file
    from mvlsib.validation.invariants import validate as validate_stage
    from mvlsib.workdir.corpus import load_corpus
    from mvlsib.workdir.folder import in_use
    from mvlsib.workdir.instances import load_instances
    from mvlsib.workdir.pool_manifest import load_pool
    from mvlsib.workdir.release_inputs import SAMPLED_FROM, check_described

    with in_use(workdir, write=False):  # its --json may go into the work folder too
        corpus = load_corpus(workdir)
        # instances drawn from another corpus can pass every invariant (ids are shared by all languages)
        check_described(workdir, SAMPLED_FROM, corpus_sha256=corpus.sha256())
        result = validate_stage(corpus, load_instances(workdir), load_pool(pool), progress=progress)
        if json_out is not None:
            with output_file(json_out, "mvlsib-build validate", option="--json") as fh:
                fh.write(result.to_json())
    s = result.summary
    if result.ok:
        terminal.echo(
            "OK: {} instances, {} sentences, {} languages, {} images; all schemas and invariants hold",
            s["instances"],
            s["sentences"],
            s["languages"],
            s["images"],
        )
        return
    terminal.echo(
        "{} violation(s): {}",
        len(result.violations),
        ", ".join(f"{r} {n}" for r, n in result.counts().items()),
        err=True,
    )
    terminal.echo("{:>8}  {:<17} detail", "instance", "rule", err=True)
    for v in result.violations[:max_show]:
        terminal.echo("{}", v, err=True)
    if len(result.violations) > max_show:
        terminal.echo("... {} more (use --json FILE for all)", len(result.violations) - max_show, err=True)
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
@out_option("Write the release folder here from --workdir and --pool.")
@sampled_pool_option("Default: the one `sample` used (recorded in the work folder); another is refused.")
@click.option(
    "--seed",
    type=params.Int(0, params.MAX_SEED),
    default=None,
    help="The seed instances.jsonl was sampled with, as a check: another than the one sample recorded is "
    "refused (the card and manifest record the recorded seed).",
)
@release_option(
    "Upload this existing one (checked against its manifest.json first).", kind="folder", path=True, default=None
)
@click.option("--repo-id", default=None, type=HUB_REPO_ID, help="Hub dataset repository ORG/NAME to upload to.")
@option(
    "--branch",
    "revision",
    type=params.TEXT,
    default=None,
    old=("--revision",),
    help="Hub branch to commit to (default: main; created if missing).",
)
@click.option("--private", is_flag=True, help="Create the Hub repository as private (if it does not exist yet).")
@click.option("--tag", type=params.TEXT, default=None, help="Tag the uploaded revision, e.g. v1.0.")
@click.option(
    "--dry-run", is_flag=True, help="List what would be added, changed and deleted on the Hub; write nothing."
)
@click.option(
    "--timeout",
    "hub_timeout",
    type=params.Finite(0.1, params.MAX_SECONDS),
    default=HUB_TIMEOUT_S,
    show_default=True,
    help="Seconds any one request to the Hub may wait for the server.",
)
@click.option(
    "--no-validate",
    is_flag=True,
    help="With --out: skip the schema and invariant checks that otherwise run first (seconds).",
)
@click.option(
    "--allow-demo-pool",
    is_flag=True,
    help="Upload even when the release's images are the drawn demo pictograms (refused otherwise: a "
    "demo build is not the benchmark; its card says so).",
)
@progress_option
@apart("out", "workdir", "pool", "release")
def publish_cmd(workdir, out, pool, seed, release, repo_id, no_validate, hub_timeout, progress, **hub_options):
    """Write a release folder (--out) and/or upload one to the Hub (--repo-id).

    \b
    mvlsib-build publish --workdir W --out DIR
    mvlsib-build publish --release DIR --repo-id ORG/NAME [--branch B] [--tag v1.0] [--dry-run]

    The Hub token comes from HF_TOKEN or the stored login (`hf auth login`). Uploading makes the
    card's code snippets name ORG/NAME (README.md and manifest.json of DIR are updated to match once the
    upload has succeeded; a failed upload leaves DIR as it was).
    A release built on the demo pictogram pool is refused unless --allow-demo-pool.
    """
    from mvlsib.errors import MvlsibError

    if out is None and release is None:
        raise MvlsibError(
            "nothing to do: pass --out DIR to write a release, or --release DIR --repo-id ORG/NAME to upload one"
        )
    if out is not None and release is not None:
        raise MvlsibError("--out writes a new release and --release uploads an existing one; pass only one of them")
    if release is not None and repo_id is None:
        raise MvlsibError("--release needs --repo-id ORG/NAME (the Hub dataset repository to upload to)")
    if out is not None:
        _publish_folder(workdir, out, pool, seed, repo_id or "ORG/mvl-sib", validate=not no_validate, progress=progress)
        release = out
    if repo_id is not None:
        from mvlsib.release.hub import publish_to_hub

        # hub_options: revision (--branch), private, tag, dry_run, allow_demo_pool
        with hub_bars(progress):
            result = publish_to_hub(release, repo_id, timeout=hub_timeout, **hub_options)
        for line in result.lines():
            terminal.echo("{}", line)


def _publish_folder(
    workdir: Path, out: Path, pool: Path | None, seed: int | None, repo_hint: str, *, validate: bool, progress: bool
):
    """publish --out: load the work folder, check it (unless told not to), write the release."""
    from mvlsib.image_pool.rows import refuse_unshippable
    from mvlsib.release.publish import publish
    from mvlsib.validation.invariants import refuse_if_invalid
    from mvlsib.validation.invariants import validate as validate_stage
    from mvlsib.workdir.folder import in_use
    from mvlsib.workdir.release_inputs import load_release_inputs

    with in_use(workdir, write=False):  # no stage rewrites the folder while it is read
        # every file checked against the folder's ledger and each report against the file it describes
        work = load_release_inputs(workdir, pool, seed)
        refuse_unshippable(work.pool)  # the pool's own rules first: its rows are the release's credits
        if validate:  # a wrong answer key or a pool changed after sampling must never reach a release
            refuse_if_invalid(validate_stage(work.corpus, work.instances, work.pool), workdir)
        summary = publish(
            work.corpus, work.instances, work.pool, out, seed=work.seed, repo_hint=repo_hint, progress=progress
        )
    for line in summary.lines():
        terminal.echo("{}", line)


@build_cli.command("build")
@click.option(
    "--sib",
    type=params.TEXT,
    required=True,
    help="SIB-200: a local folder in the repository layout, or a Hub dataset id.",
)
@click.option("--seed", type=params.Int(0, params.MAX_SEED), default=0, show_default=True, help="Sampling seed.")
@out_option("Release folder to write.", required=True)
@click.option(
    "--workdir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the intermediate files here (default: a temporary folder, removed afterwards).",
)
@pool_option()
@click.option(
    "--languages",
    type=params.CommaList(LANGUAGE_CODE),
    default=None,
    help="Comma-separated languages to include (default: all).",
)
@data_revision_option("(--sib ORG/NAME only).", old=("--revision",))
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
@progress_option
@apart("out", "workdir", "pool", "sib", "flores", "annotation")
def build_cmd(sib, seed, out, workdir, pool, languages, data_revision, flores, annotation, progress):
    """Run ingest -> sample -> validate -> publish-to-folder and print a summary."""
    from mvlsib.atomic import probe_writable
    from mvlsib.pipeline import build
    from mvlsib.workdir.pool_manifest import load_pool

    # What would fail at the end fails first, before any stage writes: the pool, the output folders.
    # The pool is read here once and handed to every stage as a value.
    pool_value = load_pool(pool)
    for folder in (out, workdir):
        if folder is not None:
            probe_writable(folder)

    langs = list(languages) if languages else None
    summary = build(
        sib,
        out,
        seed=seed,
        workdir=workdir,
        pool=pool_value,
        languages=langs,
        revision=data_revision,
        flores=flores,
        annotation=annotation,
        progress=progress,
    )
    for line in summary.lines():
        terminal.echo("{}", line)
