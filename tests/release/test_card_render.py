"""Card rendering on the real topic photographs' manifest (mixed licences, titles, authors)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from mvlsib.image_pool.credits import title_of
from mvlsib.release.card.render import (
    CardContext,
    CardImage,
    card_metadata,
    hub_license,
    license_link,
    render_card,
    size_category,
)
from mvlsib.release.stats import compute_stats
from mvlsib.release.tables import ConfigSize
from mvlsib.workdir.pool_manifest import read_manifest


@pytest.fixture(scope="module")
def photos(topic_photos_dir):
    return read_manifest(topic_photos_dir)


def _ctx(photos, **kw) -> CardContext:
    images = [CardImage(r.image_id, r.topic, r.license, r.author, r.source_url, title_of(r)) for r in photos]
    # one instance per image as its first reference, so the statistics have something to count
    instances = [
        {
            "topic": r.topic,
            "sentence_label": n % 4,
            "image_label": (n + 1) % 4,
            "ref_image_ids": [r.image_id],
            "image_option_ids": [r.image_id],
        }
        for n, r in enumerate(photos)
    ]
    base = dict(
        languages=["eng_Latn", "fra_Latn", "ace_Arab", "ace_Latn"],
        images=images,
        stats=compute_stats(instances, {r.image_id: r.topic for r in photos}),
        seed=0,
        instances_sha256="ab" * 32,
        toolkit_version="9.9.9",
        num_sentences=1004,
        source_location="/data/sib-200",
        source_revision="none (local folder)",
        pool_manifest_sha256="cd" * 32,
        config_sizes={
            c: ConfigSize(3012, 1000, 500) for c in ["eng_Latn", "fra_Latn", "ace_Arab", "ace_Latn", "images"]
        },
    )
    base.update(kw)
    return CardContext(**base)


def test_yaml_header_parses_and_names_every_config(photos):
    text = render_card(_ctx(photos))
    meta = card_metadata(text)
    assert [c["config_name"] for c in meta["configs"]] == ["ace_Arab", "ace_Latn", "eng_Latn", "fra_Latn", "images"]
    assert [c["config_name"] for c in meta["configs"] if c.get("default")] == ["eng_Latn"]
    assert meta["language"] == ["ace", "en", "fr"]  # ISO 639-1 where it exists: what the Hub filters on
    assert meta["language_details"] == ["ace_Arab", "ace_Latn", "eng_Latn", "fra_Latn"]
    # real photos mix CC0, CC-BY(-SA) and LicenseRef-* licences: the latter make the card say "other"
    assert meta["license"][0] == "cc-by-sa-4.0"
    assert {"cc0-1.0", "cc-by-4.0", "other"} <= set(meta["license"])
    assert "license_details" in meta
    first = dict(meta["dataset_info"][0])
    features = first.pop("features")
    # features and the file's size (the local cache key): split sizes per config are repetition
    # `datasets` does not need
    assert first == {"config_name": "ace_Arab", "download_size": 500}
    assert {"name": "ref_image_ids", "list": "string"} in features
    # labels are ClassLabels named by the option letters (stored as int64 0-3)
    assert {
        "name": "sentence_label",
        "dtype": {"class_label": {"names": {"0": "A", "1": "B", "2": "C", "3": "D"}}},
    } in features
    images = next(i for i in meta["dataset_info"] if i["config_name"] == "images")
    assert {"name": "image", "dtype": "image"} in images["features"]


def test_header_is_the_libraries_card_data(photos):
    """The header round-trips through huggingface_hub's DatasetCard and datasets' DatasetInfosDict:
    every config has its features, and the language features are written once (a YAML alias)."""
    import datasets
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCard

    from mvlsib.release.tables import IMAGE_FEATURES, LANGUAGE_FEATURES

    text = render_card(_ctx(photos))
    card = DatasetCard(text)
    assert card.data.pretty_name == "MVL-SIB (mvlsib-build instances, seed 0)"
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    assert sorted(infos) == ["ace_Arab", "ace_Latn", "eng_Latn", "fra_Latn", "images"]
    assert infos["fra_Latn"].features == datasets.Features.from_dict(LANGUAGE_FEATURES)
    assert infos["images"].features == datasets.Features.from_dict(IMAGE_FEATURES)
    assert infos["eng_Latn"].splits is None
    header = text.split("\n---\n", 1)[0]
    assert header.count("name: ref_sentences") == 1 and header.count("features: *") == 3


def test_attribution_lists_every_photo_with_licence_link(photos):
    text = render_card(_ctx(photos))
    section = text.split("## Image attribution", 1)[1].split("## Build", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert len(rows) == len(photos) == 69
    for r in photos:
        (row,) = [line for line in rows if line.startswith(f"| `{r.image_id}` |")]
        assert f"[{r.license}]({license_link(r.license)})" in row
        # spaces in a source URL are percent-encoded, or the Markdown link would not be one
        assert f"[link]({r.source_url.replace(' ', '%20')})" in row
        assert r.author in row and title_of(r) in row  # no Markdown specials in these; see test_card_escaping
    # the licence summary counts each licence
    n_cc0 = sum(r.license == "CC0-1.0" for r in photos)
    assert f"{n_cc0} × [CC0-1.0](https://creativecommons.org/publicdomain/zero/1.0/)" in text


def test_prompts_go_into_the_card(photos):
    text = render_card(_ctx(photos, prompts_markdown="**`i2s`, k=1**\n\n```text\nPROMPT\n```"))
    assert "```text\nPROMPT\n```" in text


def test_rendering_is_deterministic_and_mentions_build(photos):
    a, b = render_card(_ctx(photos)), render_card(_ctx(photos))
    assert hashlib.sha256(a.encode()).digest() == hashlib.sha256(b.encode()).digest()
    assert "| seed | 0 |" in a and "| toolkit | mvlsib-build 9.9.9 |" in a
    assert "sampled with seed **0**" in a and "ab" * 32 in a
    assert "| seed | not recorded |" in render_card(_ctx(photos, seed=None))
    assert a.endswith("```\n") and "$" not in a.replace("$$", "")


@pytest.mark.parametrize(
    "spdx,hub,link",
    [
        ("CC0-1.0", "cc0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
        ("CC-BY-4.0", "cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/"),
        ("CC-BY-SA-3.0", "cc-by-sa-3.0", "https://creativecommons.org/licenses/by-sa/3.0/"),
        ("LicenseRef-Unsplash", "other", "https://unsplash.com/license"),
        ("LicenseRef-PublicDomain", "other", "https://en.wikipedia.org/wiki/Public_domain"),
        ("PDDL-1.0", "pddl", "https://spdx.org/licenses/PDDL-1.0.html"),
        ("CC BY-SA 4.0", "cc-by-sa-4.0", "https://creativecommons.org/licenses/by-sa/4.0/"),  # Commons spelling
    ],
)
def test_licence_mapping(spdx, hub, link):
    assert hub_license(spdx) == hub and license_link(spdx) == link


def test_size_category():
    assert [size_category(n) for n in (999, 3012, 20_000, 617_460)] == ["n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M"]


GOLDEN_CARD = Path(__file__).parent / "golden" / "README.md"


def test_rendered_card_matches_the_golden_file(photos):
    """The whole card, byte for byte: template, tables, prompts, sampling procedure, attribution.

    A change to the card must be made on purpose: rerun with MVLSIB_UPDATE_GOLDEN=1 to rewrite
    the golden file (the test then fails once, so an update is never silently green), review
    the diff and commit it with the reason.
    """
    from mvlsib.release.card.sections import prompts_markdown, sampling_markdown

    row = {
        "instance_id": "0-0",
        "language": "eng_Latn",
        "topic": "travel",
        "ref_image_ids": [f"travel_{i}" for i in range(5)],
        "ref_sentences": [f"Sentence {i} about travel." for i in range(5)],
        "sentence_options": ["A travel sentence.", "A health sentence.", "A sports sentence.", "A geography one."],
        "sentence_label": 0,
        "image_option_ids": ["health_1", "travel_2", "sports_3", "geography_4"],
        "topic_options": ["health", "travel", "sports", "geography"],
        "image_label": 1,
    }
    text = render_card(_ctx(photos, prompts_markdown=prompts_markdown(row), sampling_markdown=sampling_markdown()))
    if os.environ.get("MVLSIB_UPDATE_GOLDEN"):
        GOLDEN_CARD.write_text(text, encoding="utf-8", newline="\n")
        pytest.fail(f"rewrote {GOLDEN_CARD}; review the diff, commit it, and rerun without MVLSIB_UPDATE_GOLDEN")
    assert GOLDEN_CARD.is_file(), f"{GOLDEN_CARD} is missing: run once with MVLSIB_UPDATE_GOLDEN=1"
    golden = GOLDEN_CARD.read_text(encoding="utf-8")
    if text != golden:
        import difflib

        diff = "".join(list(difflib.unified_diff(golden.splitlines(True), text.splitlines(True), "golden", "now"))[:60])
        pytest.fail(f"the rendered card differs from {GOLDEN_CARD.name} (MVLSIB_UPDATE_GOLDEN=1 rewrites it):\n{diff}")


def test_language_table_names_each_config_from_the_evaluators_language_table():
    """The card's language rows come from the same table the reports group by (languages.csv)."""
    from mvlsib.evaluation.run.languages import table
    from mvlsib.release.card.render import language_table

    codes = sorted(table()) + ["xyz_Zzzz"]  # a code no table knows still gets its row
    text = language_table(codes)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == sorted(codes)
    assert "| `eng_Latn` | English | Latin (`Latn`) | Indo-European | 5 |" in rows
    assert "| `zho_Hans` | Chinese (Simplified) | Han (Simplified) (`Hans`) | Sino-Tibetan | 5 |" in rows
    assert "| `xyz_Zzzz` | unknown | `Zzzz` | unknown | unknown |" in rows
    n_scripts = len({table()[c]["script"] for c in codes[:-1]} | {"Zzzz"})
    assert text.startswith(f"{len(codes)} variants in {n_scripts} scripts from ")


def test_card_features_are_the_yaml_datasets_writes():
    """The card's features come from the column tables without importing `datasets` during a build;
    they must be exactly what `datasets` writes for the same features (and read back equal)."""
    import datasets

    from mvlsib.release import tables as rt
    from mvlsib.release.preview import PREVIEW_COLUMNS
    from mvlsib.release_format.mvl_sib import IMAGE_COLUMNS, LANGUAGE_COLUMNS

    for columns in (LANGUAGE_COLUMNS, IMAGE_COLUMNS, PREVIEW_COLUMNS):
        ours = rt.card_features(columns)
        theirs = datasets.Features.from_dict({name: rt._feature(kind) for name, kind in columns})
        assert ours == theirs._to_yaml_list()
        assert datasets.Features._from_yaml_list(ours) == theirs


def _first_paragraph(text: str) -> str:
    return text.split("MVL-SIB pairs sentences", 1)[1].split("\n\n", 1)[0].replace("\n", " ")


def test_the_card_states_the_real_images_per_topic(photos):
    """The 69 photographs hold 8 to 12 per topic: no "9 per topic" (69 // 7), but the range and each count."""
    counts = {t: sum(r.topic == t for r in photos) for t in {r.topic for r in photos}}
    assert min(counts.values()) == 8 and max(counts.values()) == 12 and len(photos) == 69
    paragraph = _first_paragraph(render_card(_ctx(photos)))
    assert "(8 to 12 per topic: " in paragraph and "9 per topic" not in paragraph
    for topic, n in counts.items():
        assert f"`{topic}` {n}" in paragraph, (topic, paragraph)


def test_a_uniform_pool_keeps_the_short_wording(photos):
    """Ten per topic (the standard pool's shape) reads "(10 per topic)", as every earlier card did."""
    by_topic: dict[str, list] = {}
    for r in photos:
        by_topic.setdefault(r.topic, []).append(r)
    even = [r for rows in by_topic.values() for r in rows[:8]]
    paragraph = _first_paragraph(render_card(_ctx(even)))
    assert "and 56 topic images (8 per topic)." in paragraph, paragraph
