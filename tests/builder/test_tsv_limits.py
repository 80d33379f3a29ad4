"""Streaming limits on the text files we parse: a line over limits.MAX_TEXT_LINE_BYTES is refused while
reading, in bounded memory, naming the file and line; in real SIB-200 and raw Flores files."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mvlsib.builder import tsv
from mvlsib.builder.flores import read_flores_lines
from mvlsib.builder.ingest import ingest
from mvlsib.errors import MvlsibError
from mvlsib.limits import MAX_TEXT_FILE_BYTES, MAX_TEXT_LINE_BYTES

LANG = "eng_Latn"


def test_real_files_are_far_below_the_limits(sib_dir):
    files = sorted((sib_dir / "data" / "annotated").glob("*/*.tsv"))
    longest = max(len(line) for f in files for line in f.read_bytes().split(b"\n"))
    assert longest * 100 < MAX_TEXT_LINE_BYTES
    assert max(f.stat().st_size for f in files) * 10 < MAX_TEXT_FILE_BYTES


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    split=st.sampled_from(tsv.SPLITS),
    where=st.floats(0, 1),
    over=st.integers(1, 5_000),
    filler=st.sampled_from(["x", "é", "\t", '"', "\x00"]),
)
def test_a_long_line_anywhere_is_refused_naming_file_and_line(
    split, where, over, filler, sib_dir, tmp_path_factory, monkeypatch
):
    """Any split, any line, any length over the limit (patched down to keep files small), any filler."""
    limit = 4_096
    monkeypatch.setattr(tsv, "MAX_TEXT_LINE_BYTES", limit)
    folder = tmp_path_factory.mktemp("sib") / LANG
    shutil.copytree(sib_dir / "data" / "annotated" / LANG, folder)
    path = folder / f"{split}.tsv"
    lines = path.read_bytes().split(b"\n")
    at = 1 + int(where * (len(lines) - 2))  # after the header, before the final empty piece
    width = limit + over
    long = filler.encode() * (width // len(filler.encode()) + 1)
    lines.insert(at, long[:width])
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(MvlsibError) as err:
        tsv.read_language_folder(folder)
    message = str(err.value)
    assert message.startswith(f"{path}:{at + 1}: line {at + 1} is longer than {limit:,} bytes"), message
    assert tsv.read_language_columns(folder) is None  # the fast path declines; the slow one names the line


def test_flores_file_with_a_long_line(tmp_path):
    path = tmp_path / "fra_Latn.dev"
    path.write_bytes(b"a sentence\n" * 10 + b"y" * (MAX_TEXT_LINE_BYTES + 1) + b"\n")
    with pytest.raises(MvlsibError, match=rf"^{path}:11: line 11 is longer than"):
        read_flores_lines(path, "text", 997)


def test_a_file_past_the_size_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(tsv, "MAX_TEXT_FILE_BYTES", 10_000)
    path = tmp_path / "train.tsv"
    path.write_bytes(b"index_id\tcategory\ttext\n" + b"1\tsports\tshort text\n" * 1_000)
    with pytest.raises(MvlsibError, match=r"train.tsv:\d+: the file goes on past 10,000 bytes"):
        tsv.read_sib_tsv(path, "train")


def test_ingest_refuses_the_long_line_by_name(sib_dir, tmp_path):
    root = tmp_path / "sib" / "data" / "annotated"
    for lang in ("eng_Latn", "fra_Latn"):
        shutil.copytree(sib_dir / "data" / "annotated" / lang, root / lang)
    bad = root / "fra_Latn" / "dev.tsv"
    with open(bad, "r+b") as fh:  # a 3 MB line inserted as line 3
        lines = fh.read().split(b"\n")
        fh.seek(0)
        fh.write(b"\n".join([*lines[:2], b"7\tsports\t" + b"z" * 3_000_000, *lines[2:]]))
    with pytest.raises(MvlsibError, match=rf"^{bad}:3: line 3 is longer than"):
        ingest(sib=tmp_path / "sib", progress=False)


MEMORY_PROBE = textwrap.dedent(
    """
    import resource, sys
    from pathlib import Path
    from mvlsib.builder.tsv import read_sib_tsv
    from mvlsib.errors import MvlsibError

    def vm_bytes():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

    cap = vm_bytes() + 200 * 1024 * 1024  # what the interpreter holds now, plus 200 MB
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        read_sib_tsv(Path(sys.argv[1]), "train")
    except MvlsibError as exc:
        print(exc)
        sys.exit(2)
    except MemoryError:
        print("MemoryError")
        sys.exit(3)
    """
)


def test_a_700_mb_line_is_refused_under_a_200_mb_memory_cap(tmp_path, repo_root):
    """A sparse file: one 700 MB line of NUL bytes after the header, no disk space used."""
    path = tmp_path / "train.tsv"
    path.write_bytes(b"index_id\tcategory\ttext\n")
    with open(path, "r+b") as fh:
        fh.truncate(700 * 1024 * 1024)
    res = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(path)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(repo_root / "src"), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
        timeout=120,
    )
    assert res.returncode == 2, (res.stdout, res.stderr)
    assert res.stdout.startswith(f"{path}:2: line 2 is longer than {MAX_TEXT_LINE_BYTES:,} bytes"), res.stdout
    assert "Traceback" not in res.stderr
