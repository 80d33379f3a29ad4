"""Session fixtures for the image-pool tests: the expensive parts (normalising 69 real photos,
hashing ~140 images) happen once per session and are shared through a sha256-keyed hash cache."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from mvlsib.image_pool.add import AddRequest, add_image
from mvlsib.image_pool.check import check_pool


@pytest.fixture(scope="session")
def hash_cache() -> dict:
    """sha256 of file bytes -> ImageHashes, shared by every check in the session."""
    return {}


@pytest.fixture(scope="session")
def photo_rows(topic_photos_dir: Path) -> list[dict]:
    with open(topic_photos_dir / "manifest.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="session")
def photo_pool(tmp_path_factory, topic_photos_dir: Path, photo_rows) -> Path:
    """The 69 real photographs added one by one with `images add` (normalised) into a new pool."""
    pool = tmp_path_factory.mktemp("photo_pool")
    for r in photo_rows:
        add_image(
            pool,
            AddRequest(
                source=str(topic_photos_dir / r["file"]),
                topic=r["topic"],
                license=r["license"],
                author=r["author"],
                source_url=r["source_url"],
                title=Path(r["file"]).stem.replace("_", " "),
                image_id=r["image_id"],
            ),
        )
    return pool


@pytest.fixture(scope="session")
def photo_report(photo_pool: Path, hash_cache):
    return check_pool(photo_pool, hash_cache=hash_cache)


@pytest.fixture(scope="session")
def demo_report(pool_dir: Path, hash_cache):
    return check_pool(pool_dir, hash_cache=hash_cache)


@pytest.fixture()
def pool_copy(tmp_path: Path, pool_dir: Path) -> Path:
    """A writable copy of the bundled pool."""
    dst = tmp_path / "pool"
    shutil.copytree(pool_dir, dst)
    return dst


@pytest.fixture(scope="session")
def hash_cache_file(tmp_path_factory, demo_report, hash_cache) -> Path:  # noqa: ARG001 - demo_report fills hash_cache
    """The session's hashes (bundled pool included) as an on-disk cache for CLI runs."""
    from mvlsib.image_pool.hashes import save_hash_cache

    path = tmp_path_factory.mktemp("hashcache") / "hashes.json"
    save_hash_cache(path, hash_cache)
    return path
