"""Build SIB-200 rows for any Flores language from raw Flores files and the English annotation.

SIB-200's ``index_id`` is the 0-based position in Flores dev (997 sentences) followed by devtest
(1,012 sentences); the annotation gives each id its split and topic, Flores gives the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mvlsib import readers
from mvlsib.builder.tsv import SibRow, control_problem, read_utf8
from mvlsib.errors import MvlsibError
from mvlsib.limits import MAX_TEXT_LINE_BYTES
from mvlsib.release_format.mvl_sib import is_language_code

DEV_SIZE = 997
DEVTEST_SIZE = 1012


@dataclass(frozen=True)
class FloresLanguage:
    language: str
    dev: Path
    devtest: Path
    fmt: str  # "text" | "parquet"


def find_flores_languages(folder: Path) -> dict[str, FloresLanguage]:
    """Languages in ``folder``: ``<lang>.dev``/``<lang>.devtest`` (also under dev/ and devtest/, the
    Flores-200 release layout) or Flores+ ``dev/<lang>.parquet``/``devtest/<lang>.parquet``."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MvlsibError(f"--flores {folder}: not a folder with Flores files (<lang>.dev and <lang>.devtest).")
    found: dict[str, FloresLanguage] = {}

    def add(lang: str, dev: Path, devtest: Path, fmt: str) -> None:
        if not is_language_code(lang):  # "fra_Latn copy.dev" is a backup, not a language
            return
        if not devtest.is_file():
            raise MvlsibError(
                f"{dev}: found the dev file but not its devtest partner {devtest}; "
                "SIB-200 needs both (index_id counts through dev then devtest)."
            )
        if lang in found:
            raise MvlsibError(
                f"--flores {folder}: language {lang} appears twice ({found[lang].dev} and {dev}); keep one."
            )
        found[lang] = FloresLanguage(lang, dev, devtest, fmt)

    for base in (folder, folder / "dev"):
        test_base = folder if base == folder else folder / "devtest"
        if not base.is_dir():
            continue
        for dev in sorted(base.glob("*.dev")):
            add(dev.stem, dev, test_base / f"{dev.stem}.devtest", "text")
    if (folder / "dev").is_dir():
        for dev in sorted((folder / "dev").glob("*.parquet")):
            add(dev.stem, dev, folder / "devtest" / dev.name, "parquet")
    # a devtest file without its dev file is as incomplete as the reverse
    for base, pattern in ((folder, "*.devtest"), (folder / "devtest", "*.devtest"), (folder / "devtest", "*.parquet")):
        if base.is_dir():
            for devtest in sorted(base.glob(pattern)):
                name = devtest.stem
                if name not in found and is_language_code(name):
                    raise MvlsibError(
                        f"{devtest}: found the devtest file but not the dev file of {name}; SIB-200 needs both."
                    )
    if not found:
        raise MvlsibError(
            f"--flores {folder}: no Flores files found; expected <lang>.dev + <lang>.devtest "
            "or Flores+ dev/<lang>.parquet + devtest/<lang>.parquet."
        )
    return dict(sorted(found.items()))


def read_flores_lines(path: Path, fmt: str, expected: int) -> list[str]:
    if fmt == "parquet":
        table = readers.read_parquet("flores_parquet", path, columns=["text"], types=(("text", "string"),))
        lines = table.column("text").to_pylist()
        lines = ["" if t is None else str(t) for t in lines]
    else:
        # bytes, not read_text: universal newlines would also split at a lone "\r" inside a sentence;
        # a BOM is dropped as the TSV reader drops it, so both paths give the same sentence 0.
        data = read_utf8(path, missing=f"{path}: no such file")
        # split on "\n" only: str.splitlines would also break at U+2028, U+0085 and other characters
        # that can occur inside a sentence.
        lines = data.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
    if len(lines) != expected:
        raise MvlsibError(
            f"{path}: has {len(lines)} sentences, expected {expected} as in every Flores-200/Flores+ "
            f"{'dev' if expected == DEV_SIZE else 'devtest'} file, or the index_ids would not line up. "
            "Use the complete file (one sentence per line, no extra blank lines)."
        )
    return lines


def flores_rows(lang: FloresLanguage, annotation: list[SibRow]) -> list[SibRow]:
    """Rows of ``lang`` with the ids, splits and topics of ``annotation`` and the Flores texts."""
    dev = read_flores_lines(lang.dev, lang.fmt, DEV_SIZE)
    devtest = read_flores_lines(lang.devtest, lang.fmt, DEVTEST_SIZE)
    rows: list[SibRow] = []
    for ref in annotation:
        if ref.index_id < DEV_SIZE:
            path, pos, text = lang.dev, ref.index_id, dev[ref.index_id]
        elif ref.index_id < DEV_SIZE + DEVTEST_SIZE:
            pos = ref.index_id - DEV_SIZE
            path, text = lang.devtest, devtest[pos]
        else:
            raise MvlsibError(
                f"{ref.file}:{ref.line}: index_id {ref.index_id} is beyond Flores dev+devtest "
                f"({DEV_SIZE + DEVTEST_SIZE} sentences); the annotation does not belong to Flores-200."
            )
        text = text.rstrip()
        if not text:
            where = f"line {pos + 1}" if lang.fmt == "text" else f"row {pos}"
            raise MvlsibError(
                f"{path}: {where} (index_id {ref.index_id}) is empty; every annotated sentence needs its "
                "translation. Restore the line."
            )
        # one rule for a sentence, whichever format holds it (a text file's lines are bounded as read)
        if (problem := control_problem(text)) is None and "\n" in text:
            problem = "holds a line break; a sentence is one line: remove it from the file."
        if problem is None and len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_LINE_BYTES:
            problem = f"is longer than {MAX_TEXT_LINE_BYTES:,} bytes, which no sentence is; use the real file."
        if problem is not None:
            where = f"line {pos + 1}" if lang.fmt == "text" else f"row {pos}"
            raise MvlsibError(f"{path}: {where} (index_id {ref.index_id}) {problem}")
        rows.append(SibRow(ref.index_id, ref.topic, text, ref.split, path, pos + 1))
    return rows
