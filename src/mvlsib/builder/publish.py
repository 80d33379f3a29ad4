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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from mvlsib.errors import MvlsibError

CORPUS_NAME = "corpus.parquet"
INSTANCES_NAME = "instances.jsonl"
INGEST_REPORT_NAME = "ingest_report.json"
LOADER_NAME = "mvl_sib.py"
EVALUATE_NAME = "evaluate.py"
README_NAME = "README.md"

PLACEHOLDER_EVALUATE = '''"""MVL-SIB reference evaluator: not bundled in this release.

This release was built before the reference evaluator was part of mvlsib-build.
Rebuild the release with a toolkit version that bundles it, or install the toolkit
(`pip install mvlsib-build`) and run `mvlsib-eval run --data . ...`.
"""

import sys

sys.stderr.write(
    "evaluate.py: the reference evaluator is not bundled in this release yet; "
    "use `mvlsib-eval run --data .` from mvlsib-build instead\\n"
)
sys.exit(2)
'''


@dataclass(frozen=True)
class ReleaseSummary:
    out: Path
    languages: list[str]
    num_instances: int
    num_images: int
    size_bytes: int
    instances_sha256: str
    files: int
    evaluator_bundled: bool
    prompts_in_card: bool
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
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, unit="lang", file=sys.stderr, disable=not enabled, leave=False)


def _require(path: Path, how: str) -> Path:
    if not path.is_file():
        raise MvlsibError(f"{path}: missing; {how}")
    return path


def read_instances_file(workdir: Path) -> list[dict]:
    from mvlsib.builder.sample import read_instances

    _require(Path(workdir) / INSTANCES_NAME, "run `mvlsib-build sample --workdir W` first")
    return read_instances(workdir)


def read_corpus_texts(workdir: Path) -> tuple[list[int], dict[str, object]]:
    """Sorted sentence ids and, per language, its texts as an arrow array in that id order."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = _require(Path(workdir) / CORPUS_NAME, "run `mvlsib-build ingest --workdir W` first")
    try:
        table = pq.read_table(path, columns=["language", "index_id", "text"])
    except Exception as exc:
        raise MvlsibError(f"{path}: cannot be read as the corpus (columns language, index_id, text): {exc}") from exc
    table = table.sort_by([("language", "ascending"), ("index_id", "ascending")])
    langs = table.column("language").to_pylist()
    if not langs:
        raise MvlsibError(f"{path}: the corpus is empty; re-run `mvlsib-build ingest`")
    bounds: list[tuple[str, int, int]] = []
    start = 0
    for i in range(1, len(langs) + 1):
        if i == len(langs) or langs[i] != langs[start]:
            bounds.append((langs[start], start, i))
            start = i
    ids = table.column("index_id")
    texts = table.column("text")
    first_lang, s0, e0 = bounds[0]
    ref_ids = ids.slice(s0, e0 - s0).combine_chunks()
    out: dict[str, object] = {}
    for lang, s, e in bounds:
        lang_ids = ids.slice(s, e - s).combine_chunks()
        if not lang_ids.equals(ref_ids):
            raise MvlsibError(
                f"{path}: language {lang} has different sentence ids than {first_lang}; "
                "re-run `mvlsib-build ingest` (it checks every language against English)"
            )
        lang_texts = texts.slice(s, e - s).combine_chunks()
        if pc.any(pc.is_null(lang_texts)).as_py():
            raise MvlsibError(f"{path}: language {lang} has missing texts; re-run `mvlsib-build ingest`")
        out[lang] = lang_texts
    return [int(x) for x in ref_ids.to_pylist()], out


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
    """The sampling procedure for the card: docs/sampling.md of the toolkit when it is at hand."""
    import mvlsib

    doc = Path(mvlsib.__file__).resolve().parents[2] / "docs" / "sampling.md"
    intro = (
        "The sampler does not depend on any library's random-number generator stream, dict or set order or "
        "`PYTHONHASHSEED`, so the instances can be re-implemented and re-derived exactly from the description "
        "in the toolkit's `docs/sampling.md`"
    )
    if doc.is_file():
        body = doc.read_text("utf-8").strip()
        return intro + ", reproduced here:\n\n<details><summary>Sampling procedure</summary>\n\n" + _demote_headings(body) + "\n\n</details>"
    return intro + "."


def prompts_markdown(example_row: dict | None) -> str | None:
    """The evaluator's exact prompt templates (and one filled-in example), when its prompt module exists."""
    try:
        from mvlsib.evaluation import prompts as ev
    except ImportError:
        return None
    from mvlsib.builder import mvl_sib

    parts = [
        "These are the exact prompts of the reference evaluator (`evaluate.py`). `<image>` marks where an image "
        "goes; `{...}` marks where the references and options of an instance go, sentences in the target language. "
        "k=2, 4 and 5 follow the same pattern with that many references."
    ]
    for task in mvl_sib.TASKS:
        for k in (1,) if task == "t2s" else (1, 3):
            parts.append(f"**`{task}`, k={k}**\n\n```text\n{ev.render_prompt_text(task, k)}\n```")
    if example_row is not None:
        ex = mvl_sib.build_examples([example_row], _ImageIds(), "s2i", 3)[0]
        text = ev.render_prompt_text("s2i", 3, ex["references"], ex["options"])
        parts.append(
            f"Filled in for instance `{ex['instance_id']}` in `eng_Latn` (`s2i`, k=3; the option images are "
            f"{', '.join(f'`{i}`' for i in ex['image_ids'])}):\n\n```text\n{text}\n```"
        )
    if hasattr(ev, "prompts_hash"):
        parts.append(f"Prompt templates sha256 (recorded in every evaluation run): `{ev.prompts_hash()}`.")
    return "\n\n".join(parts)


class _ImageIds(dict):
    """Stands in for decoded images where only the ids are needed."""

    def __missing__(self, key):
        return key


def write_evaluate(path: Path) -> bool:
    """Write the bundled evaluator; return False when only the placeholder could be written."""
    try:
        from mvlsib.evaluation.bundle import write_evaluate_script
    except ImportError:
        path.write_text(PLACEHOLDER_EVALUATE, encoding="utf-8", newline="\n")
        return False
    write_evaluate_script(path)
    return True


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


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
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    try:
        yield stage
        old = out.parent / f".{out.name}.old-{os.getpid()}"
        if out.exists():
            os.replace(out, old)
        os.replace(stage, out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise


def publish(
    workdir: str | os.PathLike[str],
    out: str | os.PathLike[str],
    pool: str | os.PathLike[str] = "image_pool",
    *,
    seed: int | None = None,
    languages: Sequence[str] | None = None,
    repo_hint: str = "ORG/mvl-sib",
    versions: dict[str, str] | None = None,
    progress: bool = True,
) -> ReleaseSummary:
    """Write the release folder ``out`` from ``workdir`` (corpus, instances) and the image pool.

    ``seed`` is the sampling seed to record (default: what the sampler recorded in
    the work folder); ``versions`` overrides the library versions written to
    manifest.json (tests pin them to compare manifests across machines).
    """
    import mvlsib
    from mvlsib.atomic import sha256_file
    from mvlsib.builder import mvl_sib
    from mvlsib.builder import release_tables as rt
    from mvlsib.builder.release_manifest import write_release_manifest
    from mvlsib.builder.release_stats import compute_stats
    from mvlsib.cards.render import CardContext, CardImage, render_card
    from mvlsib.image_pool.credits import title_of
    from mvlsib.image_pool.manifest import manifest_path, read_manifest

    workdir, pool = Path(workdir), Path(pool)
    instances = read_instances_file(workdir)
    if not instances:
        raise MvlsibError(f"{workdir / INSTANCES_NAME}: no instances; re-run `mvlsib-build sample`")
    instances_sha = sha256_file(workdir / INSTANCES_NAME)
    index_ids, texts = read_corpus_texts(workdir)
    langs = sorted(texts)
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
    records = [rt.read_image_record(pool, r) for r in rows]
    seed = seed if seed is not None else recorded_seed(workdir)
    source = source_info(workdir)
    pool_sha = sha256_file(manifest_path(pool))
    version = mvlsib.__version__

    plan = rt.plan_instances(instances, index_ids)
    with _staging(Path(out)) as stage:
        sizes = {}
        for lang in _progress(langs, desc="write languages", enabled=progress):
            sizes[lang] = rt.write_language(stage, plan, lang, texts[lang])
        sizes["images"] = rt.write_images(stage, records)
        shutil.copyfile(mvl_sib.__file__, stage / LOADER_NAME)
        bundled = write_evaluate(stage / EVALUATE_NAME)

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
            "evaluator_bundled": bundled,
        }
        write_release_manifest(stage, build, versions)
        size = _dir_size(stage)
        nfiles = sum(1 for p in stage.rglob("*") if p.is_file())
    warnings = []
    if not bundled:
        warnings.append("evaluate.py is a placeholder: mvlsib.evaluation.bundle is not available in this toolkit")
    if prompts is None:
        warnings.append("the card's prompt section is a placeholder: mvlsib.evaluation.prompts is not available")
    return ReleaseSummary(
        out=Path(out),
        languages=langs,
        num_instances=len(instances),
        num_images=len(records),
        size_bytes=size,
        instances_sha256=instances_sha,
        files=nfiles,
        evaluator_bundled=bundled,
        prompts_in_card=prompts is not None,
        warnings=warnings,
    )
