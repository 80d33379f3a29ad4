"""The card's sections that come from outside the card: the sampling procedure (from the card
templates) and the evaluator's prompts; and the card's context from a release's inputs."""

from __future__ import annotations

import re
from importlib import resources

import mvlsib
from mvlsib.escape import md_code_block
from mvlsib.evaluation.run import prompts as ev
from mvlsib.image_pool.credits import title_of
from mvlsib.release.card.render import CardContext, CardImage, render_card
from mvlsib.release.inputs import ReleaseInputs
from mvlsib.release.stats import compute_stats
from mvlsib.release.tables import ConfigSize, image_sort_key, language_table
from mvlsib.release_format import mvl_sib

EXAMPLE_LANGUAGE = "eng_Latn"  # the language of the card's filled-in prompt


def release_card(inputs: ReleaseInputs, sizes: dict[str, ConfigSize], *, seed: int | None, repo_hint: str) -> str:
    """The release's README.md."""
    return render_card(card_context(inputs, sizes, seed=seed, repo_hint=repo_hint))


def card_context(
    inputs: ReleaseInputs, sizes: dict[str, ConfigSize], *, seed: int | None, repo_hint: str
) -> CardContext:
    by_id = {r.image_id: r for r in inputs.manifest}
    source = inputs.source
    first_row = None
    if EXAMPLE_LANGUAGE in inputs.texts:
        table = language_table(inputs.plan, EXAMPLE_LANGUAGE, inputs.texts[EXAMPLE_LANGUAGE])
        first_row = table.slice(0, 1).to_pylist()[0]
    return CardContext(
        languages=inputs.languages,
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
            for rec in sorted(inputs.images, key=image_sort_key)
        ],
        stats=compute_stats(list(inputs.instances), {r.image_id: r.topic for r in inputs.manifest}),
        seed=seed,
        instances_sha256=inputs.instances_sha256,
        toolkit_version=mvlsib.__version__,
        num_sentences=len(inputs.index_ids),
        source_location=source["location"],
        source_revision=source["revision"] or ("none (local folder)" if source["kind"] == "local" else ""),
        extra_build={"corpus.parquet sha256": f"`{source['corpus_sha256']}`"} if source["corpus_sha256"] else {},
        pool_manifest_sha256=inputs.pool_manifest_sha256,
        prompts_markdown=prompts_markdown(first_row),
        sampling_markdown=sampling_markdown(),
        repo_hint=repo_hint,
        pool_kind=inputs.pool_kind,
        demo_images=inputs.demo_images,
        config_sizes=sizes,
    )


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
    intro = (
        "The sampler does not depend on any library's random-number generator stream, dict or set order or "
        "`PYTHONHASHSEED`, so the instances can be re-implemented and re-derived exactly from the description "
        "in the toolkit's `docs/sampling.md`"
    )
    body = (
        resources.files("mvlsib.release.card").joinpath("templates").joinpath("sampling.md").read_text("utf-8").strip()
    )
    return (
        intro
        + ", reproduced here:\n\n<details><summary>Sampling procedure</summary>\n\n"
        + _demote_headings(body)
        + "\n\n</details>"
    )


def prompts_markdown(example_row: dict | None) -> str:
    """The evaluator's exact prompt templates, and one filled-in example."""
    parts = [
        "These are the exact prompts of the reference evaluator (`evaluate.py`). `<image>` marks where an image "
        "goes; `{...}` marks where the references and options of an instance go, sentences in the target language. "
        "k=2, 4 and 5 follow the same pattern with that many references."
    ]
    for spec in mvl_sib.TASK_TABLE:
        for k in [k for k in spec.k_values if k in (1, 3)]:
            task = spec.name
            parts.append(f"**`{task}`, k={k}**\n\n{md_code_block(ev.render_prompt_text(task, k))}")
    if example_row is not None:
        # The example shows the first task whose options are images: where image placement matters most.
        task = next(t.name for t in mvl_sib.TASK_TABLE if t.options in mvl_sib.IMAGE_COLUMNS_OF_ROWS)
        ex = mvl_sib.build_examples([example_row], _ImageIds(), task, 3)[0]
        text = ev.render_prompt_text(task, 3, ex["references"], ex["options"])
        parts.append(
            f"Filled in for instance `{ex['instance_id']}` in `eng_Latn` (`{task}`, k=3; the option images are "
            f"{', '.join(f'`{i}`' for i in ex['image_ids'])}):\n\n{md_code_block(text)}"
        )
    parts.append(f"Prompt templates sha256 (recorded in every evaluation run): `{ev.prompts_hash()}`.")
    return "\n\n".join(parts)


class _ImageIds(dict):
    """Stands in for decoded images where only the ids are needed."""

    def __missing__(self, key):
        return key
