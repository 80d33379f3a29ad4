"""Exact reader for SIB-200's annotated TSV files.

SIB-200 writes its files with pandas' ``to_csv(sep="\\t")``: QUOTE_MINIMAL quoting, quotes inside a
quoted field doubled. Reading them with pandas' defaults silently turns texts such as ``NA`` or ``null``
into missing values, so this module parses with the ``csv`` module in strict mode and keeps every field a
string. Re-writing the parsed rows with ``csv.writer`` reproduces the real files byte for byte, which is
what the tests check.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from mvlsib import readers
from mvlsib.errors import MvlsibError
from mvlsib.limits import MAX_INDEX_ID, MAX_TEXT_FILE_BYTES, MAX_TEXT_LINE_BYTES
from mvlsib.release_format.mvl_sib import TOPICS
from mvlsib.textnorm import CONTROL_IN_TEXT, control_problem

HEADER = ("index_id", "category", "text")
MAX_ID_DIGITS = len(str(MAX_INDEX_ID))  # an index_id is a Flores-200 sentence number (0..2008); longer is not one
SPLITS = ("train", "dev", "test")
_TOPIC_SET = frozenset(TOPICS)


@dataclass(frozen=True)
class SibRow:
    index_id: int
    topic: str
    text: str
    split: str
    file: Path
    line: int  # 1-based line on which the record starts


def read_sib_tsv(path: Path, split: str, *, need_text: bool = True) -> list[SibRow]:
    """Parse one ``{train,dev,test}.tsv`` file; raise MvlsibError at the first malformed record.

    ``need_text=False`` is for the English annotation of the Flores path, whose texts are not used.
    """
    text = read_utf8(
        path,
        missing=(
            f"{path}: missing split file. Every language folder needs train.tsv, dev.tsv and test.tsv; "
            "restore the file or leave the language out with --languages."
        ),
    )
    if text and not text.endswith("\n"):
        # Every real SIB-200 file ends with a newline: a missing one means the file was cut off,
        # most likely inside its last sentence, which would then go into every release.
        last = text.rsplit("\n", 1)[-1]
        raise MvlsibError(
            f"{path}:{text.count(chr(10)) + 1}: the file does not end with a newline, so it was probably cut off "
            f"inside its last line ({last[:80]!r}); restore the complete file from SIB-200."
        )
    rows: list[SibRow] = []
    with io.StringIO(text, newline="") as fh:
        reader = csv.reader(fh, delimiter="\t", quotechar='"', doublequote=True, strict=True)
        start = 1
        try:
            header = next(reader, None)
            if header is None:
                raise MvlsibError(
                    f"{path}: the file is empty; expected the header 'index_id<TAB>category<TAB>text' "
                    "and one row per sentence. Restore the file from SIB-200."
                )
            if tuple(header) != HEADER:
                raise MvlsibError(
                    f"{path}:1: header is {header!r}, expected {list(HEADER)!r} (tab-separated). "
                    "Is this a SIB-200 annotated file?"
                )
            start = reader.line_num + 1
            for record in reader:
                line = start
                start = reader.line_num + 1
                if not record:  # a blank line carries no record
                    continue
                rows.append(_parse_record(record, path, line, split, need_text))
        except csv.Error as exc:
            raise MvlsibError(
                f"{path}:{start}: malformed TSV ({exc}); fields with quotes must be wrapped in quotes "
                'with inner quotes doubled (""), as pandas/csv write them.'
            ) from None
    return rows


def read_utf8(path: Path, *, missing: str) -> str:
    """The text of a UTF-8 file (a leading BOM dropped); errors name the line and byte of bad bytes.

    Read line by line within ``limits.MAX_TEXT_LINE_BYTES`` per line and ``MAX_TEXT_FILE_BYTES`` in
    all, so a file with a 700 MB line is refused after reading one limit's worth of it.
    """
    try:
        data = _read_bounded(Path(path))
    except FileNotFoundError:
        raise MvlsibError(missing) from None
    except IsADirectoryError:
        raise MvlsibError(f"{path}: is a folder, expected a file") from None
    except OSError as exc:  # a symlink loop, a dangling link, no permission, an I/O error
        raise MvlsibError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if data.startswith(b"\xef\xbb\xbf") else 0)
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise MvlsibError(
            f"{path}:{line}: not valid UTF-8 at byte {start} (line {line}, byte {column} of the line: "
            f"{data[start : start + 4]!r}); re-save the file as UTF-8."
        ) from None


def _read_bounded(path: Path) -> bytes:
    """The bytes of ``path``; MvlsibError at the first line or the total over its limit.

    Read in blocks of the line limit: a line inside one block is shorter than the limit, so only a
    line that runs across block boundaries needs measuring (``run``: its bytes so far).
    """
    limit = MAX_TEXT_LINE_BYTES
    chunks: list[bytes] = []
    total = run = lines_before = 0
    with readers.open_input(path, fix="restore the SIB-200 file") as fh:
        while block := fh.read(limit):
            first = block.find(b"\n")
            if (run + len(block) if first == -1 else run + first) > limit:
                raise MvlsibError(
                    f"{path}:{lines_before + 1}: line {lines_before + 1} is longer than {limit:,} bytes "
                    "(limits.MAX_TEXT_LINE_BYTES; real sentences are under 2 KB), so this is not a SIB-200/Flores "
                    "text file or it is damaged (a missing line break or a runaway quote). Restore the file."
                )
            total += len(block)
            if total > MAX_TEXT_FILE_BYTES:
                line = lines_before + block.count(b"\n", 0, MAX_TEXT_FILE_BYTES - (total - len(block))) + 1
                raise MvlsibError(
                    f"{path}:{line}: "
                    f"the file goes on past {MAX_TEXT_FILE_BYTES:,} bytes (limits.MAX_TEXT_FILE_BYTES; real SIB-200 "
                    "and Flores files are under 1 MB); restore the right file."
                )
            if first == -1:
                run += len(block)
            else:
                lines_before += block.count(b"\n")
                run = len(block) - block.rindex(b"\n") - 1
            chunks.append(block)
    return b"".join(chunks)


def _parse_record(record: list[str], path: Path, line: int, split: str, need_text: bool) -> SibRow:
    if len(record) != 3:
        raise MvlsibError(
            f"{path}:{line}: malformed row with {len(record)} field(s), expected 3 "
            "(index_id, category, text separated by tabs); a tab inside a text must be in a quoted field."
        )
    raw_id, topic, text = record
    if not (raw_id.isascii() and raw_id.isdigit()) or len(raw_id) > MAX_ID_DIGITS:
        shown = raw_id if len(raw_id) <= 40 else f"{raw_id[:20]}... ({len(raw_id):,} characters)"
        raise MvlsibError(
            f"{path}:{line}: index_id {shown!r} is not a non-negative integer of at most {MAX_ID_DIGITS} digits "
            "(Flores-200 has 2,009 sentences); fix the row."
        )
    if topic not in _TOPIC_SET:
        raise MvlsibError(f"{path}:{line}: unknown topic {topic!r}; the category must be one of {', '.join(TOPICS)}.")
    text = text.rstrip()
    if need_text:
        if not text:
            raise MvlsibError(
                f"{path}:{line}: empty text for index_id {raw_id}; every sentence needs its translation. "
                "Fill it in or leave the language out with --languages."
            )
        if "\n" in text or "\r" in text:
            raise MvlsibError(
                f"{path}:{line}: the text of index_id {raw_id} spans several lines, most likely an "
                "unbalanced quote; double the quotes inside the text or wrap the whole field in quotes."
            )
        if (problem := control_problem(text)) is not None:
            raise MvlsibError(f"{path}:{line}: the text of index_id {raw_id} {problem}")
    return SibRow(int(raw_id), topic, text, split, path, line)


def read_language_folder(folder: Path, *, need_text: bool = True) -> list[SibRow]:
    """All rows of one language folder, in split order train, dev, test."""
    if not any(p.is_file() for p in folder.iterdir()):
        raise MvlsibError(
            f"{folder}: language folder has no files; expected train.tsv, dev.tsv and test.tsv. "
            "Remove the empty folder or restore its files."
        )
    rows: list[SibRow] = []
    for split in SPLITS:
        rows.extend(read_sib_tsv(folder / f"{split}.tsv", split, need_text=need_text))
    return rows


def read_language_columns(folder: Path) -> tuple[list[int], list[str], list[str], list[str]] | None:
    """``(index_ids, topics, texts, splits)`` of one language folder, in the order of
    :func:`read_language_folder`, or None when any file needs a closer look.

    The checks of :func:`read_sib_tsv` run on whole columns at once (no record objects). They
    only ever accept what it accepts; anything else (a malformed row, an empty text, a missing
    file) gives None, and the caller reads the folder with :func:`read_language_folder`, whose
    messages name the file and line.
    """
    ids: list[str] = []
    topics: list[str] = []
    texts: list[str] = []
    splits: list[str] = []
    for split in SPLITS:
        try:
            data = _read_bounded(folder / f"{split}.tsv").decode("utf-8-sig")
        except (OSError, UnicodeDecodeError, MvlsibError):
            return None
        if not data.endswith("\n"):
            return None
        try:
            records = list(
                csv.reader(io.StringIO(data, newline=""), delimiter="\t", quotechar='"', doublequote=True, strict=True)
            )
        except csv.Error:
            return None
        if not records or tuple(records[0]) != HEADER or not all(records) or set(map(len, records)) != {3}:
            return None
        body = records[1:]
        if not body:
            return None
        file_ids, file_topics, file_texts = zip(*body)
        ids += file_ids
        topics += file_topics
        texts += file_texts
        splits += [split] * len(body)
    joined = "".join(ids)
    if (
        not (all(ids) and joined.isascii() and joined.isdigit())
        or max(map(len, ids), default=0) > MAX_ID_DIGITS
        or not set(topics) <= _TOPIC_SET
    ):
        return None
    texts = list(map(str.rstrip, texts))
    if not all(texts):
        return None
    joined = "\t".join(texts)
    if "\n" in joined or "\r" in joined or CONTROL_IN_TEXT.search(joined):
        return None
    return list(map(int, ids)), topics, texts, splits
