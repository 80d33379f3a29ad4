"""Render the dataset card (``README.md``) of a release from ``templates/README.md.tmpl``.

The YAML header is built with the Hub's own libraries: ``huggingface_hub.DatasetCardData``
dumps it, ``datasets``' ``Features``/``DatasetInfo`` give ``dataset_info``. Its bytes
therefore follow the installed PyYAML/huggingface_hub/datasets (as the parquet files follow
pyarrow); the same versions give the same card.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

import yaml

from mvlsib.escape import md_code, md_link, md_text
from mvlsib.evaluation.run.languages import info
from mvlsib.image_pool.licenses import judge_license, license_url
from mvlsib.release.card.iso639 import hub_language_code
from mvlsib.release.preview import PREVIEW_COLUMNS
from mvlsib.release.stats import LETTERS, ReleaseStats
from mvlsib.release.tables import card_features
from mvlsib.release_format.mvl_sib import (
    DEFAULT_K_VALUES,
    IMAGE_COLUMNS,
    IMAGES_CONFIG,
    LANGUAGE_COLUMNS,
    PREVIEW_CONFIG,
    TASK_BY_NAME,
    TASK_TABLE,
    TASKS,
    TOPICS,
)

TEMPLATE = "README.md.tmpl"

# Hub licence ids (https://huggingface.co/docs/hub/repositories-licenses) for the SPDX ids a pool may use.
_HUB_LICENSES = {
    "cc0-1.0",
    "cc-by-2.0",
    "cc-by-2.5",
    "cc-by-3.0",
    "cc-by-4.0",
    "cc-by-sa-3.0",
    "cc-by-sa-4.0",
    "pddl",
}


@dataclass(frozen=True)
class CardImage:
    image_id: str
    topic: str
    license: str
    author: str
    source_url: str
    title: str = ""
    width: int = 0
    height: int = 0


@dataclass(frozen=True)
class CardContext:
    languages: Sequence[str]
    images: Sequence[CardImage]
    stats: ReleaseStats
    seed: int | None
    instances_sha256: str
    toolkit_version: str
    num_sentences: int
    source_location: str = ""
    source_revision: str = ""
    pool_manifest_sha256: str = ""
    prompts_markdown: str = ""  # the evaluator's prompt templates (card.sections.prompts_markdown)
    sampling_markdown: str = ""
    repo_hint: str = "ORG/mvl-sib"
    # `demo`, `mixed` or `curated` (workdir.provenance.pool_kind) and how many images are drawn pictograms
    pool_kind: str = "curated"
    demo_images: int = 0
    extra_build: dict[str, str] = field(default_factory=dict)
    # config name -> ConfigSize; written as `dataset_info` (the Hub shows it, and the
    # `datasets` cache key of a local release hashes it, so a rebuilt file is noticed).
    config_sizes: dict = field(default_factory=dict)


def _normalized(spdx: str) -> str:
    """The SPDX expression the image-pool tools read from a manifest licence (``CC BY-SA 4.0`` -> ``CC-BY-SA-4.0``)."""
    try:
        return judge_license(spdx).expression or spdx.strip()
    except Exception:  # an unparsable licence is shown as written; `images check` reports it
        return spdx.strip()


def license_link(spdx: str) -> str:
    """The page explaining a licence: the image-pool tools' link (as in `images credits`), else its SPDX page."""
    expr = _normalized(spdx)
    url = license_url(expr)
    if url:
        return url
    return f"https://spdx.org/licenses/{expr}.html"


def hub_license(spdx: str) -> str:
    low = _normalized(spdx).lower()
    if low == "pddl-1.0":
        return "pddl"
    return low if low in _HUB_LICENSES else "other"


def size_category(n: int) -> str:
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < bound:
            return label
    return "1M<n<10M"


def _dataset_infos(ctx: CardContext, configs: Sequence[str]) -> list[dict]:
    """`dataset_info` as `datasets`' ``DatasetInfosDict`` writes it, one entry per config: features
    and file size.

    The features make them known before any download (`load_dataset_builder(...).info.features`);
    they are derived from the column tables (``tables.card_features``, checked against `datasets`).
    All language configs share one features list object, so the YAML dumper writes it once
    under an anchor and every other config refers to it. Of the sizes only `download_size`
    (the parquet file's bytes) is kept: the `datasets` cache key of a local folder hashes the
    card, not the files' contents or times, so it is what makes a release rebuilt in the same
    folder load afresh. The split sizes `datasets` does not need; parsing them once per config
    made the YAML parse the main cost of a `load_dataset` call (docs/performance.md).
    """
    features = {
        "language": card_features(LANGUAGE_COLUMNS),
        IMAGES_CONFIG: card_features(IMAGE_COLUMNS),
        PREVIEW_CONFIG: card_features(PREVIEW_COLUMNS),
    }
    return [
        {
            "config_name": config,
            "features": features[config if config in features else "language"],
            "download_size": ctx.config_sizes[config].download_size,
        }
        for config in sorted(configs)  # DatasetInfosDict's order
        if config in ctx.config_sizes
    ]


def card_data(ctx: CardContext):
    """The card's metadata as `huggingface_hub.DatasetCardData`."""
    from huggingface_hub import DatasetCardData

    langs = sorted(ctx.languages)
    licenses = ["cc-by-sa-4.0"] + sorted({hub_license(im.license) for im in ctx.images} - {"cc-by-sa-4.0"})
    # the preview config exists when the build wrote it (it needs eng_Latn)
    configs = [*langs, IMAGES_CONFIG, *([PREVIEW_CONFIG] if PREVIEW_CONFIG in ctx.config_sizes else [])]
    default = "eng_Latn" if "eng_Latn" in langs else (langs[0] if langs else None)
    extra = {}
    if "other" in licenses:
        extra["license_details"] = (
            "text CC BY-SA 4.0 (SIB-200/Flores-200); each image its own licence, see the attribution table"
        )
    data = DatasetCardData(
        pretty_name=pretty_name(ctx),
        license=licenses,
        # the Hub filters on these: ISO 639-1 where a language has it, else ISO 639-3
        language=sorted({hub_language_code(code) for code in langs}),
        multilinguality=["multilingual"],
        task_categories=["visual-question-answering", "image-text-to-text", "text-classification"],
        size_categories=[size_category(ctx.stats.num_instances)],
        source_datasets=["Davlan/sib200"],
        **extra,  # type: ignore[arg-type]  # DatasetCardData types its **kwargs by its first keyword
        # every variant exactly as SIB-200 names it (ISO 639-3 + ISO 15924 script), one config each
        language_details=list(langs),
        tags=["multilingual", "vision-language", "topic-classification", "benchmark"],
    )
    if ctx.config_sizes:
        data["dataset_info"] = _dataset_infos(ctx, configs)
    data["configs"] = [
        {
            "config_name": config,
            **({"default": True} if config == default else {}),
            "data_files": [{"split": "test", "path": f"data/{config}/test.parquet"}],
        }
        for config in configs
    ]
    return data


def yaml_header(ctx: CardContext) -> str:
    return card_data(ctx).to_yaml(line_break="\n")


def pretty_name(ctx: CardContext) -> str:
    """Names what this is: the toolkit's own instance set, and a demo when the images are pictograms."""
    seed = "unrecorded seed" if ctx.seed is None else f"seed {ctx.seed}"
    demo = ", demo pictograms" if ctx.pool_kind != "curated" else ""
    return f"MVL-SIB (mvlsib-build instances, {seed}{demo})"


UPSTREAM = "[WueNLP/mvl-sib](https://huggingface.co/datasets/WueNLP/mvl-sib)"


def provenance_markdown(ctx: CardContext) -> str:
    """How this release relates to upstream MVL-SIB, from the build's own facts."""
    seed = "not recorded" if ctx.seed is None else f"**{ctx.seed}**"
    out = [
        f"- **Instances**: sampled by this toolkit's deterministic sampler (mvlsib-build {_cell(ctx.toolkit_version)}, "
        f"seed {seed}; `instances.jsonl` sha256 `{ctx.instances_sha256}`), as documented under *Sampling*. "
        f"They are **not** the instances of the MVL-SIB paper, which the upstream release {UPSTREAM} draws in "
        "its loading script at load time. The task design is the paper's (5 positive images, 3 negative "
        "topics, 4 options); the sampled ids are not.",
    ]
    n = len(ctx.images)
    pool_sha = f" (manifest sha256 `{ctx.pool_manifest_sha256}`)" if ctx.pool_manifest_sha256 else ""
    if ctx.pool_kind == "demo":
        out.append(
            f"- **Images**: all {n} images are the toolkit's **drawn demo pictograms** (CC0){pool_sha}, not "
            "photographs and not the upstream MVL-SIB images. This release exercises the pipeline; it is not "
            "the benchmark."
        )
    elif ctx.pool_kind == "mixed":
        out.append(
            f"- **Images**: {ctx.demo_images} of the {n} images are the toolkit's **drawn demo pictograms** "
            f"(CC0){pool_sha}; the others come from a curated pool (see *Image attribution*)."
        )
    else:
        out.append(
            f"- **Images**: {n} images from a curated pool{pool_sha}, each with its own source, author and licence "
            "(see *Image attribution*)."
        )
    out.append(
        "- **Comparability**: scores on this release are comparable with other runs on a release of the same "
        "instances and images (same `instances.jsonl` and pool manifest hashes), not with the numbers of the "
        "MVL-SIB paper or of MTEB's `MVLSIBSent2Img`, which use the upstream instances and images."
    )
    return "\n".join(out)


_cell = md_text  # text from a pool manifest or the build, shown literally in a Markdown table cell
_link = md_link  # an http(s) link that cannot leave its cell; any other scheme shown as text


def statistics_markdown(stats: ReleaseStats) -> str:
    out = [
        f"Instances per topic (of {stats.num_instances:,}):",
        "",
        "| topic | instances |",
        "|---|---|",
    ]
    out += [f"| {_cell(t)} | {n:,} |" for t, n in stats.per_topic.items()]
    out += [
        "",
        "Correct-option positions (the answer letter of each instance):",
        "",
        "| label column | " + " | ".join(LETTERS) + " |",
        "|---|" + "---|" * len(LETTERS),
        *(
            f"| `{column}` ({', '.join(t.name for t in TASK_TABLE if t.label == column)}) | "
            + " | ".join(f"{counts[c]:,}" for c in LETTERS)
            + " |"
            for column, counts in (("sentence_label", stats.sentence_labels), ("image_label", stats.image_labels))
        ),
        "",
        "Image use: how often each image is one of the 5 positive references (`ref_image_ids`) and one of the 4",
        "image options (`image_option_ids`), with the spread of the reference counts within each topic:",
        "",
        "| topic | references per image (min-max) |",
        "|---|---|",
    ]
    out += [f"| {_cell(t)} | {lo:,}-{hi:,} |" for t, (lo, hi) in stats.reference_spread().items()]
    out += [
        "",
        "<details><summary>Per image</summary>",
        "",
        "| image | topic | as reference | as option |",
        "|---|---|---|---|",
    ]
    out += [
        f"| {md_code(u.image_id)} | {_cell(u.topic)} | {u.as_reference:,} | {u.as_option:,} |" for u in stats.images
    ]
    out += ["", "</details>"]
    return "\n".join(out)


def attribution_markdown(images: Sequence[CardImage]) -> str:
    out = ["| image | topic | title | author | licence | source | size |", "|---|---|---|---|---|---|---|"]
    for im in images:
        lic = _link(license_link(im.license), _cell(im.license)) if im.license else "unknown"
        src = _link(im.source_url, "link") if im.source_url else ""
        size = f"{im.width}×{im.height}" if im.width else ""
        out.append(
            f"| {md_code(im.image_id)} | {_cell(im.topic)} | {_cell(im.title)} | {_cell(im.author)} | {lic} | {src} | {size} |"
        )
    return "\n".join(out)


def language_table(languages: Sequence[str]) -> str:
    """One row per config: code, English name, script and family from the evaluator's language
    table (``evaluation/run/data/languages.csv``, sources in ``evaluation/run/languages.py``), so the card and
    the reports' groupings say the same; a code outside that table still shows its code and script."""
    rows = [info(code) for code in sorted(languages)]
    scripts = sorted({r["script"] for r in rows})
    families = sorted({r["family"] for r in rows} - {"unknown"})
    out = [
        f"{len(rows)} variants in {len(scripts)} scripts from {len(families)} language families (Glottolog top level; "
        "creoles grouped as `Creole`); `resource` is the class 0-5 of Joshi et al. (2020), `unknown` where no source gives one.",
        "",
        "| config | language | script | family | resource |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        script = f"{_cell(r['script_name'])} (`{r['script']}`)" if r["script_name"] != "unknown" else f"`{r['script']}`"
        out.append(
            f"| `{r['language']}` | {_cell(r['name'])} | {script} | {_cell(r['family'])} | {_cell(r['joshi_class'])} |"
        )
    return "\n".join(out)


def image_licence_summary(images: Sequence[CardImage]) -> str:
    counts: dict[str, int] = {}
    for im in images:
        counts[im.license] = counts.get(im.license, 0) + 1
    parts = [f"{n} × {_link(license_link(lic), _cell(lic))}" for lic, n in sorted(counts.items())]
    return (" In this release: " + ", ".join(parts) + ".") if parts else ""


def build_table(ctx: CardContext) -> str:
    rows = [
        ("seed", "not recorded" if ctx.seed is None else str(ctx.seed)),
        ("toolkit", f"mvlsib-build {ctx.toolkit_version}"),
        ("SIB-200 source", ctx.source_location),
        ("source revision", ctx.source_revision or "not recorded"),
        ("image pool manifest sha256", f"`{ctx.pool_manifest_sha256}`" if ctx.pool_manifest_sha256 else ""),
        ("instances.jsonl sha256", f"`{ctx.instances_sha256}`"),
        ("languages", str(len(ctx.languages))),
        ("instances per language", f"{ctx.stats.num_instances:,}"),
    ]
    rows += sorted(ctx.extra_build.items())

    def value(v: str) -> str:
        # hashes come already set as code; everything else (paths, revisions) is shown literally
        return v if re.fullmatch(r"`[0-9a-f]+`", v) else _cell(v)

    return "\n".join(f"| {k} | {value(v)} |" for k, v in rows)


def tasks_markdown() -> str:
    """The card's task section, from the task table."""

    def code(names):
        names = [f"`{n}`" for n in names]
        return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]

    text_only = [t for t in TASK_TABLE if not t.cross_modal]
    cross = [t for t in TASK_TABLE if t.cross_modal]
    lines = [
        f"Every task has {len(LETTERS)} options lettered {LETTERS[0]}-{LETTERS[-1]}. "
        f"{code(t.name for t in text_only)} are the text-only mirrors of {code(t.mirror for t in text_only)}: comparing",
        "them separates language understanding from vision-language matching.",
        "",
        "| task | references | options | label column | k |",
        "|---|---|---|---|---|",
    ]
    for t in TASK_TABLE:
        refs = f"`{t.references}`" if t.references == "topic" else f"the first k of `{t.references}`"
        ks = ", ".join(str(k) for k in t.k_values if k in DEFAULT_K_VALUES)
        lines.append(f"| `{t.name}` {t.title} | {refs} | `{t.options}` | `{t.label}` | {ks} |")
    lines += [
        "",
        f"The upstream task names {code(t.upstream for t in cross)} are accepted by the loader as aliases of "
        f"{code(t.name for t in cross)}.",
    ]
    assert all(TASK_BY_NAME[t.mirror].mirror == t.name for t in TASK_TABLE)
    return "\n".join(lines)


def _prompts(ctx: CardContext) -> str:
    return ctx.prompts_markdown


def images_per_topic(images) -> str:
    """How many images each topic has, as the card's first paragraph says it: "10 per topic" when all
    topics have as many, else the range and each topic's count (a pool of 8 to 12 is no "9 per topic")."""
    counts: dict[str, int] = {}
    for im in images:
        counts[im.topic] = counts.get(im.topic, 0) + 1
    if len(set(counts.values())) <= 1:
        return f"{next(iter(counts.values()), 0)} per topic"
    shown = [*TOPICS, *sorted(set(counts) - set(TOPICS))]  # md_code: a topic read from a pool is data
    each = ", ".join(f"{md_code(t, in_table=False) or '(no topic)'} {counts[t]}" for t in shown if t in counts)
    return f"{min(counts.values())} to {max(counts.values())} per topic: {each}"


def render_card(ctx: CardContext) -> str:
    template = string.Template(
        resources.files("mvlsib.release.card").joinpath("templates").joinpath(TEMPLATE).read_text("utf-8")
    )
    per_topic = images_per_topic(ctx.images)
    text = template.substitute(
        yaml_header=yaml_header(ctx),
        num_languages=len(ctx.languages),
        num_images=len(ctx.images),
        images_per_topic=per_topic,
        num_sentences=f"{ctx.num_sentences:,}",
        num_instances=f"{ctx.stats.num_instances:,}",
        topic_list=", ".join(f"`{t}`" for t in TOPICS),
        prompts=_prompts(ctx),
        tasks_table=tasks_markdown(),
        example_task=TASKS[0],
        all_tasks=",".join(TASKS),
        default_ks=",".join(str(k) for k in DEFAULT_K_VALUES),
        repo_hint=ctx.repo_hint,
        seed="not recorded" if ctx.seed is None else ctx.seed,
        toolkit_version=ctx.toolkit_version,
        instances_sha256=ctx.instances_sha256,
        sampling=ctx.sampling_markdown.strip(),
        statistics=statistics_markdown(ctx.stats),
        language_table=language_table(ctx.languages),
        image_licence_summary=image_licence_summary(ctx.images),
        attribution=attribution_markdown(ctx.images),
        build_table=build_table(ctx),
        provenance=provenance_markdown(ctx),
        demo_notice=(
            "\n> **Demo build**: the images of this release are drawn pictograms, not photographs. See *Provenance*.\n"
            if ctx.pool_kind != "curated"
            else ""
        ),
    )
    return text.rstrip("\n") + "\n"


def card_metadata(readme_text: str) -> dict:
    """Parse a card's YAML header (for tests and checks)."""
    if not readme_text.startswith("---\n"):
        raise ValueError("card does not start with a YAML header")
    end = readme_text.index("\n---\n", 4)
    return yaml.safe_load(readme_text[4:end])
