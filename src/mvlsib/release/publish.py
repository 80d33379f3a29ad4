"""Write the release folder from a work folder: parquet configs, card, loader, evaluator, manifest.

The folder is written into a staging folder beside ``out`` and moved into place
only when complete, so a failure never leaves a half-written release.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mvlsib.atomic import staged_folder
from mvlsib.errors import MvlsibError
from mvlsib.workdir import (
    BUNDLED_POOL,
)
from mvlsib.workdir import (
    CORPUS_FILE as CORPUS_NAME,
)
from mvlsib.workdir import (
    INGEST_REPORT_FILE as INGEST_REPORT_NAME,
)
from mvlsib.workdir import (
    INSTANCES_FILE as INSTANCES_NAME,
)
from mvlsib.workdir.corpus import read_corpus_texts
from mvlsib.workdir.instances import read_instances

LOADER_NAME = "mvl_sib.py"
EVALUATE_NAME = "evaluate.py"
README_NAME = "README.md"


@dataclass(frozen=True)
class ReleaseSummary:
    out: Path
    languages: list[str]
    num_instances: int
    num_images: int
    size_bytes: int
    instances_sha256: str
    files: int
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"release: {self.out}",
            f"languages: {len(self.languages)}",
            f"instances per language: {self.num_instances:,}",
            f"images: {self.num_images}",
            f"files: {self.files}, size: {self.size_bytes / 1e6:.1f} MB",
            f"instances.jsonl sha256: {self.instances_sha256}",
        ]


def _progress(iterable, *, desc: str, total: int | None = None, enabled: bool = True):
    from mvlsib.progress import tqdm_class

    tqdm = tqdm_class()

    return tqdm(iterable, desc=desc, total=total, unit="lang", file=sys.stderr, disable=not enabled, leave=False)


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MvlsibError(f"{path}: not valid JSON ({exc}); re-run the stage that wrote it") from exc
    return data if isinstance(data, dict) else {}


def source_info(workdir: Path) -> dict:
    """SIB-200 source location(s), revision(s) and corpus hash as the ingest report records them."""
    report = _read_json(Path(workdir) / INGEST_REPORT_NAME)
    sources = [s for s in report.get("sources") or [] if isinstance(s, dict)]
    locations = [str(s["location"]) for s in sources if s.get("location")]
    revisions = [str(s["revision"]) for s in sources if s.get("revision")]
    return {
        "location": ", ".join(locations),
        "revision": ", ".join(revisions),
        "kind": ", ".join(str(s.get("kind")) for s in sources if s.get("kind")),
        "corpus_sha256": str(report.get("corpus_sha256") or ""),
    }


def recorded_seed(workdir: Path) -> int | None:
    """The seed ``mvlsib-build sample`` recorded in ``sample_report.json``, if any."""
    seed = _read_json(Path(workdir) / "sample_report.json").get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def _demote_headings(markdown: str, levels: int = 2) -> str:
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and re.match(r"#{1,6} ", line):
            line = "#" * levels + line
        out.append(line)
    return "\n".join(out)


def sampling_markdown() -> str:
    """The sampling procedure for the card, from the card templates (also the toolkit's documentation of it)."""
    from importlib import resources

    intro = (
        "The sampler does not depend on any library's random-number generator stream, dict or set order or "
        "`PYTHONHASHSEED`, so the instances can be re-implemented and re-derived exactly from the description "
        "in the toolkit's `docs/sampling.md`"
    )
    body = resources.files("mvlsib.release.card").joinpath("templates", "sampling.md").read_text("utf-8").strip()
    return (
        intro
        + ", reproduced here:\n\n<details><summary>Sampling procedure</summary>\n\n"
        + _demote_headings(body)
        + "\n\n</details>"
    )


def prompts_markdown(example_row: dict | None) -> str:
    """The evaluator's exact prompt templates, and one filled-in example."""
    from mvlsib.evaluation import prompts as ev
    from mvlsib.release_format import mvl_sib

    parts = [
        "These are the exact prompts of the reference evaluator (`evaluate.py`). `<image>` marks where an image "
        "goes; `{...}` marks where the references and options of an instance go, sentences in the target language. "
        "k=2, 4 and 5 follow the same pattern with that many references."
    ]
    for spec in mvl_sib.TASK_TABLE:
        for k in [k for k in spec.k_values if k in (1, 3)]:
            task = spec.name
            parts.append(f"**`{task}`, k={k}**\n\n```text\n{ev.render_prompt_text(task, k)}\n```")
    if example_row is not None:
        # The example shows the first task whose options are images: where image placement matters most.
        task = next(t.name for t in mvl_sib.TASK_TABLE if t.options in mvl_sib.IMAGE_COLUMNS_OF_ROWS)
        ex = mvl_sib.build_examples([example_row], _ImageIds(), task, 3)[0]
        text = ev.render_prompt_text(task, 3, ex["references"], ex["options"])
        parts.append(
            f"Filled in for instance `{ex['instance_id']}` in `eng_Latn` (`{task}`, k=3; the option images are "
            f"{', '.join(f'`{i}`' for i in ex['image_ids'])}):\n\n```text\n{text}\n```"
        )
    parts.append(f"Prompt templates sha256 (recorded in every evaluation run): `{ev.prompts_hash()}`.")
    return "\n\n".join(parts)


class _ImageIds(dict):
    """Stands in for decoded images where only the ids are needed."""

    def __missing__(self, key):
        return key


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def _validate_or_refuse(workdir: Path, pool: Path) -> None:
    from mvlsib.validation.invariants import validate_workdir

    violations = list(validate_workdir(workdir, pool).violations)
    if violations:
        shown = "\n  - ".join(str(v).strip() for v in violations[:10])
        more = f"\n  ... and {len(violations) - 10} more" if len(violations) > 10 else ""
        raise MvlsibError(
            f"{workdir}: validation found {len(violations)} violation(s); no release was written "
            f"(`mvlsib-build validate` lists them all):\n  - {shown}{more}"
        )


@contextlib.contextmanager
def _staging(out: Path):
    """A fresh folder beside ``out`` that replaces ``out`` only when the block succeeds."""
    out = Path(out).resolve()
    if out.exists() and not out.is_dir():
        raise MvlsibError(f"{out}: exists and is not a folder; choose another --out")
    if out.is_dir() and any(out.iterdir()) and not (out / "manifest.json").is_file():
        raise MvlsibError(
            f"{out}: exists, is not empty and holds no release (no manifest.json); "
            "refusing to replace it, choose another --out or remove it"
        )
    if (out / "manifest.json").is_file():
        # Replacing a release must not delete what the user put into it (the card's own
        # `python evaluate.py --data . --out RUN` writes RUN/ there).
        from mvlsib.release.manifest import read_release_manifest, unlisted_files

        try:
            listed = read_release_manifest(out)["files"]
        except MvlsibError:
            raise MvlsibError(
                f"{out}: its manifest.json is unreadable, so which files are the user's cannot be told; "
                "choose another --out, or move your files out and remove the folder"
            ) from None
        extra = unlisted_files(out, listed)
        if extra:
            raise MvlsibError(
                f"{out}: holds files that are not part of the old release (not in its manifest.json): "
                + ", ".join(extra[:10])
                + (f" and {len(extra) - 10} more" if len(extra) > 10 else "")
                + "; publishing would delete them. Move them out of the folder, or choose another --out"
            )
    with staged_folder(out) as stage:
        yield stage


def publish(
    workdir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    pool: str | os.PathLike[str] = BUNDLED_POOL,
    *,
    seed: int | None = None,
    languages: Sequence[str] | None = None,
    repo_hint: str = "ORG/mvl-sib",
    versions: dict[str, str] | None = None,
    progress: bool = True,
    validate: bool = True,
    corpus=None,
    instances: list[dict] | None = None,
) -> ReleaseSummary:
    """Write the release folder ``out`` from ``workdir`` (corpus, instances) and the image pool.

    ``seed`` is the sampling seed to record (default: what the sampler recorded in
    the work folder); ``versions`` overrides the library versions written to
    manifest.json (tests pin them to compare manifests across machines).
    ``validate`` runs every schema and invariant first (``build`` has just done so).
    ``corpus`` (a ``workdir.corpus.Corpus``) and ``instances`` (the records of ``instances.jsonl``)
    stand for the work folder's files when the caller holds what it has just written.
    """
    import mvlsib
    from mvlsib.atomic import sha256_file
    from mvlsib.image_pool.credits import title_of
    from mvlsib.release import tables as rt
    from mvlsib.release.bundle import write_evaluate_script
    from mvlsib.release.card.render import CardContext, CardImage, render_card
    from mvlsib.release.manifest import write_release_manifest
    from mvlsib.release.preview import PER_TASK, PREVIEW_LANGUAGE, write_preview
    from mvlsib.release.stats import compute_stats
    from mvlsib.release_format import mvl_sib
    from mvlsib.release_format.mvl_sib import PREVIEW_CONFIG
    from mvlsib.workdir.pool_manifest import manifest_path, read_manifest
    from mvlsib.workdir.provenance import demo_image_count, pool_kind

    workdir, pool = Path(workdir), Path(pool)
    instances = read_instances(workdir) if instances is None else instances
    if not instances:
        raise MvlsibError(f"{workdir / INSTANCES_NAME}: no instances; re-run `mvlsib-build sample`")
    instances_sha = sha256_file(workdir / INSTANCES_NAME)
    index_ids, texts = read_corpus_texts(workdir, None if corpus is None else corpus.table)
    langs = sorted(texts)
    bad = [lang for lang in langs if not mvl_sib.is_language_code(lang)]
    if bad:
        raise MvlsibError(
            f"{workdir / CORPUS_NAME}: {', '.join(map(repr, bad))} is not a language code of the form "
            "xxx_Xxxx (e.g. fra_Latn); re-run `mvlsib-build ingest` on a clean SIB-200 folder"
        )
    if languages:
        unknown = sorted(set(languages) - set(langs))
        if unknown:
            raise MvlsibError(f"{workdir / CORPUS_NAME}: no language(s) {', '.join(unknown)} in the corpus")
        langs = sorted(set(languages))

    rows = read_manifest(pool)
    by_id = {r.image_id: r for r in rows}
    used = sorted({i for inst in instances for i in (*inst["ref_image_ids"], *inst["image_option_ids"])})
    missing = [i for i in used if i not in by_id]
    if missing:
        raise MvlsibError(
            f"{manifest_path(pool)}: image id(s) {', '.join(missing[:5])} used by instances.jsonl are not in this pool; "
            "pass the --pool the instances were sampled with, or re-run `mvlsib-build sample`"
        )
    if validate:  # after the quick checks above, whose messages are more precise
        # A wrong answer key or a pool changed after sampling must never reach a release (#11).
        _validate_or_refuse(workdir, pool)
    records = [rt.read_image_record(pool, r) for r in rows]
    seed = seed if seed is not None else recorded_seed(workdir)
    source = source_info(workdir)
    pool_sha = sha256_file(manifest_path(pool))
    demo_images = demo_image_count(r.source_url for r in rows)
    version = mvlsib.__version__

    plan = rt.plan_instances(instances, index_ids)
    with _staging(Path(out)) as stage:
        sizes = {}
        writer = rt.LanguageWriter(stage, plan)
        for n, lang in enumerate(_progress(langs, desc="write languages", enabled=progress)):
            # The release row schema applies to every table: in full to the first, and to the
            # language-dependent columns of all (tables.check_language_table).
            sizes[lang] = writer.write(lang, texts[lang], check_full=n == 0)
        sizes["images"] = rt.write_images(stage, records)
        if PREVIEW_LANGUAGE in langs:  # the Viewer's look at the benchmark (release/preview.py)
            preview_rows = rt.language_table(plan, PREVIEW_LANGUAGE, texts[PREVIEW_LANGUAGE]).slice(0, PER_TASK)
            sizes[PREVIEW_CONFIG] = write_preview(
                stage, preview_rows.to_pylist(), {r.image_id: (r.data, r.filename) for r in records}
            )
        shutil.copyfile(mvl_sib.__file__, stage / LOADER_NAME)
        write_evaluate_script(stage / EVALUATE_NAME)

        first_row = None
        if "eng_Latn" in texts:
            first_row = rt.language_table(plan, "eng_Latn", texts["eng_Latn"]).slice(0, 1).to_pylist()[0]
        prompts = prompts_markdown(first_row)
        stats = compute_stats(instances, {r.image_id: r.topic for r in rows})
        ctx = CardContext(
            languages=langs,
            images=[
                CardImage(
                    image_id=rec.image_id,
                    topic=rec.topic,
                    license=rec.license,
                    author=rec.author,
                    source_url=rec.source_url,
                    title=title_of(by_id[rec.image_id]),
                    width=rec.width,
                    height=rec.height,
                )
                for rec in sorted(records, key=rt.image_sort_key)
            ],
            stats=stats,
            seed=seed,
            instances_sha256=instances_sha,
            toolkit_version=version,
            num_sentences=len(index_ids),
            source_location=source["location"],
            source_revision=source["revision"] or ("none (local folder)" if source["kind"] == "local" else ""),
            extra_build={"corpus.parquet sha256": f"`{source['corpus_sha256']}`"} if source["corpus_sha256"] else {},
            pool_manifest_sha256=pool_sha,
            prompts_markdown=prompts,
            sampling_markdown=sampling_markdown(),
            repo_hint=repo_hint,
            pool_kind=pool_kind(r.source_url for r in rows),
            demo_images=demo_images,
            config_sizes=sizes,
        )
        (stage / README_NAME).write_text(render_card(ctx), encoding="utf-8", newline="\n")
        build = {
            "seed": seed,
            "toolkit": "mvlsib-build",
            "toolkit_version": version,
            "source": source,
            "languages": langs,
            "num_instances": len(instances),
            "num_images": len(records),
            "instances_sha256": instances_sha,
            "pool_manifest_sha256": pool_sha,
            "image_pool": pool_kind(r.source_url for r in rows),
            "demo_images": demo_images,
            # the Hub repo id the card's snippets name; `publish --repo-id` re-targets them (hub.retarget_card)
            "repo_hint": repo_hint,
        }
        write_release_manifest(stage, build, versions)
        size = _dir_size(stage)
        nfiles = sum(1 for p in stage.rglob("*") if p.is_file())
    warnings: list[str] = []
    return ReleaseSummary(
        out=Path(out),
        languages=langs,
        num_instances=len(instances),
        num_images=len(records),
        size_bytes=size,
        instances_sha256=instances_sha,
        files=nfiles,
        warnings=warnings,
    )
