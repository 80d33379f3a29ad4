"""What ``publish`` reports about the release it wrote."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ReleaseSummary:
    out: Path
    languages: list[str]
    num_instances: int
    num_images: int
    size_bytes: int
    instances_sha256: str
    files: int

    def lines(self) -> list[str]:
        return [
            f"release: {self.out}",
            f"languages: {len(self.languages)}",
            f"instances per language: {self.num_instances:,}",
            f"images: {self.num_images}",
            f"files: {self.files}, size: {self.size_bytes / 1e6:.1f} MB",
            f"instances.jsonl sha256: {self.instances_sha256}",
        ]
