"""``readers.read_lines``: complete lines read in pieces, against the whole-file split it replaces,
over generated files (lines of every length around the piece size, torn tails short and long)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from mvlsib import readers

PIECE = 1 << 20


@pytest.fixture()
def small_lines(monkeypatch):
    """prediction_line bounded at 3 pieces, so long tails and lines are cheap to make."""
    kinds = dict(readers.KINDS)
    kinds["prediction_line"] = dataclasses.replace(kinds["prediction_line"], max_bytes=3 * PIECE)
    monkeypatch.setattr(readers, "KINDS", kinds)
    return 3 * PIECE


def _expected(data: bytes) -> tuple[list[bytes], int]:
    good = data.rfind(b"\n") + 1
    return (data[:good].split(b"\n")[:-1] if good else []), good


@pytest.mark.parametrize("seed", range(12))
def test_the_lines_are_those_of_a_whole_file_split(tmp_path, small_lines, seed):
    rng = random.Random(seed)
    sizes = [
        rng.choice([0, 1, PIECE - 1, PIECE, PIECE + 1, rng.randrange(2 * PIECE)]) for _ in range(rng.randrange(1, 6))
    ]
    data = b"".join(bytes([97 + i % 26]) * n + b"\n" for i, n in enumerate(sizes))
    data += rng.choice([b"", b"torn", b"\0" * (small_lines + PIECE)])  # no tail, a short one, one over the bound
    path = tmp_path / "p.jsonl"
    path.write_bytes(data)
    assert readers.read_lines(path, "predictions_file", "prediction_line") == _expected(data)


def test_a_line_over_its_bound_is_one_error_naming_it(tmp_path, small_lines):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"{}\n" + b"x" * (small_lines + 1) + b"\n{}\n")
    with pytest.raises(readers.ReadError, match=r"p\.jsonl, line 2: over 3,145,728 bytes"):
        readers.read_lines(path, "predictions_file", "prediction_line")


def test_a_fifo_is_refused_without_waiting(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(readers.ReadError, match="not a regular file"):
        readers.read_lines(tmp_path / "fifo", "predictions_file", "prediction_line")
