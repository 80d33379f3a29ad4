"""Every reader of a user's CSV file, fed generated faults: each is one ``MvlsibError`` line naming
the file (never a UnicodeDecodeError or csv.Error traceback, never a hang on a FIFO or /dev/zero)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.planted import planted_records, write_run

from mvlsib.cli import eval_cli
from mvlsib.errors import MvlsibError
from mvlsib.evaluation.analysis.correlate import read_scores
from mvlsib.evaluation.run.languages import read_overrides
from mvlsib.evaluation.run.scoring import read_groups_csv
from mvlsib.image_pool.import_release import read_licence_facts
from mvlsib.verify_images.inputs import read_topic_names
from mvlsib.workdir.pool_manifest import read_manifest

READERS = {
    "groups": read_groups_csv,
    "language-metadata": read_overrides,
    "scores": read_scores,
    "licences": read_licence_facts,
    "topic-names": read_topic_names,
    "pool-manifest": lambda path: read_manifest(path.parent),
}
HEADER = b"language,group,model,benchmark,score,file,license,author,source_url,image_id\n"
FAULTS = {
    "invalid-utf8": HEADER + b"\xff\xfe\xfd,x\n",
    "lone-surrogate-bytes": HEADER + b"\xed\xa0\x80,x\n",
    "field-over-the-csv-limit": HEADER + b"a" * 200_000 + b",x\n",
    "unclosed-quote-over-the-limit": HEADER + b'"' + b"a,b\n" * 50_000,
    "utf16": "language,group\neng_Latn,x\n".encode("utf-16"),
    # every column of the header given twice: the reader would keep one silently
    **{
        f"column-{name}-twice": HEADER.rstrip(b"\n") + b"," + name.encode() + b"\n" + b"x," * 10 + b"y\n"
        for name in HEADER.decode().strip().split(",")
    },
}


def _file(tmp_path: Path, name: str, data: bytes) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    path = folder / "manifest.csv"  # the pool manifest's name; any name does for the others
    path.write_bytes(data)
    return path


def _one_line(exc: MvlsibError, path: Path) -> None:
    message = str(exc)
    assert "\n" not in message and str(path) in message, message


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_bad_csv_is_one_line_naming_the_file(reader, fault, tmp_path):
    path = _file(tmp_path, "f", FAULTS[fault])
    with pytest.raises(MvlsibError) as err:
        READERS[reader](path)
    _one_line(err.value, path)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_fifo_is_refused_without_waiting_for_a_writer(reader, tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    path = folder / "manifest.csv"
    os.mkfifo(path)
    done = threading.Event()
    errors: list[BaseException] = []

    def call():
        try:
            READERS[reader](path)
        except BaseException as exc:
            errors.append(exc)
        done.set()

    threading.Thread(target=call, daemon=True).start()
    assert done.wait(10), "reading a FIFO blocked"
    assert len(errors) == 1 and isinstance(errors[0], MvlsibError), errors
    _one_line(errors[0], path)


@pytest.mark.parametrize("reader", sorted(set(READERS) - {"pool-manifest"}))
def test_a_csv_larger_than_the_bound_is_refused(reader, tmp_path, monkeypatch):
    from mvlsib import csvio

    monkeypatch.setattr(csvio.read_dicts, "__kwdefaults__", {"max_bytes": 1000, "fix": ""})
    path = _file(tmp_path, "f", HEADER + b"eng_Latn,x,m,b,1,a.jpg,cc0,a,https://x,i\n" * 100)
    with pytest.raises(MvlsibError, match="over 1,000 bytes") as err:
        READERS[reader](path)
    _one_line(err.value, path)


def test_scores_that_are_not_finite_are_refused(tmp_path):
    path = _file(tmp_path, "f", b"model,benchmark,score\nm,b,nan\n")
    with pytest.raises(MvlsibError, match="line 2: score 'nan' is not a finite number"):
        read_scores(path)


def test_report_with_a_bad_groups_csv_is_exit_2(tmp_path):
    run = write_run(tmp_path / "run", planted_records(0.5, n=8))
    groups = _file(tmp_path, "g", FAULTS["field-over-the-csv-limit"])
    result = CliRunner().invoke(eval_cli, ["report", str(run), "--out", str(tmp_path / "r"), "--groups", str(groups)])
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert "Traceback" not in result.output and "malformed CSV" in result.output and str(groups) in result.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("bad_line", [2, 3, 5])
@pytest.mark.parametrize("reader", sorted(set(READERS) - {"pool-manifest"}))
def test_malformed_csv_names_the_line_it_is_on(reader, bad_line, tmp_path):
    """csv's line_num counts the lines read whole: the bad one is the next, and that is the one named."""
    good = b"eng_Latn,a,m,X,1,f.png,CC-BY-4.0,me,https://e.org/x,1\n"
    bad = b"eng_Latn," + b"a" * 200_000 + b"\n"  # a field over the csv module's limit
    path = tmp_path / "table.csv"
    path.write_bytes(HEADER + good * (bad_line - 2) + bad + good)
    with pytest.raises(MvlsibError, match=f"line {bad_line}: .*malformed CSV"):
        READERS[reader](path)
