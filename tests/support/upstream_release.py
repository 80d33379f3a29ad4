"""An upstream MVL-SIB release's image folder of one photo and its licence CSV, for `images import-release`."""

from __future__ import annotations

import csv
from pathlib import Path

from click.testing import CliRunner

from mvlsib.cli import build_cli


def upstream_release(tmp_path: Path, photo: Path, facts: dict[str, str]) -> tuple[Path, Path]:
    """(release folder, licence CSV) holding ``sports_1.jpg`` with the CSV columns ``facts``."""
    up = tmp_path / "up" / "data" / "images" / "sib200"
    up.mkdir(parents=True)
    (up / "sports_1.jpg").write_bytes(photo.read_bytes())
    lic = tmp_path / "lic.csv"
    with open(lic, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=["file", *facts])
        writer.writeheader()
        writer.writerow({"file": "sports_1.jpg", **facts})
    return tmp_path / "up", lic


def import_release(release: Path, lic: Path, pool: Path):
    """`mvlsib-build images import-release` of ``release`` into ``pool``: the click result."""
    args = ["images", "import-release", str(release), "--licences", str(lic), "--pool", str(pool), "--no-progress"]
    return CliRunner().invoke(build_cli, args)
