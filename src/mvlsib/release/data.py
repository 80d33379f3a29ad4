"""The release's data files: one parquet file per language, the images once, the Viewer's preview."""

from __future__ import annotations

from pathlib import Path

from mvlsib.progress import bar
from mvlsib.release.inputs import ReleaseInputs
from mvlsib.release.preview import PER_TASK, PREVIEW_LANGUAGE, write_preview
from mvlsib.release.tables import ConfigSize, language_table, write_images, write_language
from mvlsib.release_format.mvl_sib import PREVIEW_CONFIG


def write_data(stage: Path, inputs: ReleaseInputs, *, progress: bool = True) -> dict[str, ConfigSize]:
    """Write every config of the release into ``stage``; return each config's sizes for the card."""
    sizes: dict[str, ConfigSize] = {}
    langs = bar(inputs.languages, desc="write languages", unit="lang", enabled=progress, leave=False)
    for n, lang in enumerate(langs):
        # The release row schema applies to every table: in full to the first, and to the
        # language-dependent columns of all (tables.check_language_table).
        sizes[lang] = write_language(stage, inputs.plan, lang, inputs.texts[lang], check_full=n == 0)
    sizes["images"] = write_images(stage, inputs.images)
    if PREVIEW_LANGUAGE in inputs.languages:  # the Viewer's look at the benchmark (release/preview.py)
        rows = language_table(inputs.plan, PREVIEW_LANGUAGE, inputs.texts[PREVIEW_LANGUAGE]).slice(0, PER_TASK)
        files = {r.image_id: (r.data, r.filename) for r in inputs.images}
        sizes[PREVIEW_CONFIG] = write_preview(stage, rows.to_pylist(), files)
    return sizes
