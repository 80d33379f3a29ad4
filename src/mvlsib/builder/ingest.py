"""``mvlsib-build ingest``: SIB-200 (local, Hub, or built from Flores) -> ``WORK/corpus.parquet``.

Every language is checked against the English annotation (same ids, splits and topics), texts are parsed
exactly (see :mod:`mvlsib.builder.tsv`), and duplicate translations are listed in
``WORK/ingest_report.json`` because the sampler must keep them apart.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field
from operator import itemgetter
from pathlib import Path

from mvlsib.atomic import atomic_open, atomic_path, sha256_file
from mvlsib.builder.flores import FloresLanguage, find_flores_languages, flores_rows
from mvlsib.builder.sib_sources import (
    DEFAULT_HUB_DATASET,
    REFERENCE_LANGUAGE,
    SibSource,
    hub_source,
    is_hub_id,
    local_source,
)
from mvlsib.builder.tsv import SPLITS, SibRow, read_language_columns, read_language_folder
from mvlsib.errors import MvlsibError
from mvlsib.textnorm import collapse_whitespace, normalize_many
from mvlsib.workdir import CORPUS_COLUMNS, CORPUS_FILE
from mvlsib.workdir import INGEST_REPORT_FILE as REPORT_FILE
from mvlsib.workdir.corpus import Corpus


@dataclass(frozen=True)
class DuplicateGroup:
    """Sentences of one language whose texts are equal after whitespace normalisation."""

    index_ids: list[int]
    topics: list[str]  # topic of each index_id, same order
    cross_topic: bool
    text: str  # the normalised text


@dataclass
class IngestReport:
    corpus: str  # file name inside the work folder
    corpus_sha256: str
    reference: str
    sources: list[dict]
    languages: list[str]
    n_languages: int
    n_rows: int
    sentences_per_language: int
    split_sizes: dict[str, int]  # per language (equal in all languages)
    topic_sizes: dict[str, int]  # per language
    duplicates: dict[str, list[DuplicateGroup]] = field(default_factory=dict)

    @property
    def n_duplicate_groups(self) -> int:
        return sum(len(g) for g in self.duplicates.values())

    def to_dict(self) -> dict:
        d = asdict(self)
        d["n_languages_with_duplicates"] = len(self.duplicates)
        d["n_duplicate_groups"] = self.n_duplicate_groups
        d["n_cross_topic_duplicate_groups"] = sum(g.cross_topic for gs in self.duplicates.values() for g in gs)
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def parse_languages(languages: str | list[str] | tuple[str, ...] | None) -> list[str] | None:
    """``"eng_Latn, fra_Latn"`` or a list -> sorted unique codes; None means all."""
    if languages is None:
        return None
    items = languages.split(",") if isinstance(languages, str) else list(languages)
    codes = sorted({c.strip() for c in items if c.strip()})
    if not codes:
        raise MvlsibError("--languages is empty; give comma-separated codes such as eng_Latn,fra_Latn.")
    return codes


def _select(requested: list[str] | None, available: list[str]) -> list[str]:
    if requested is None:
        return available
    unknown = [c for c in requested if c not in available]
    if unknown:
        hints = []
        for code in unknown:
            close = difflib.get_close_matches(code, available, n=5, cutoff=0.5)
            hints.append(f"{code} (close: {', '.join(close)})" if close else f"{code} (no close match)")
        raise MvlsibError(
            f"--languages: unknown language code(s): {'; '.join(hints)}. "
            f"{len(available)} languages are available in the given source(s)."
        )
    return requested


def _annotation_folder(annotation: str | os.PathLike[str]) -> Path:
    """The folder with the English ``train/dev/test.tsv``: the folder itself, or its ``data/eng``/``eng``."""
    folder = Path(annotation).expanduser().resolve()
    if not folder.is_dir():
        raise MvlsibError(
            f"--annotation {annotation}: not a folder; give the folder with the English train/dev/test.tsv."
        )
    for candidate in (folder, folder / "data" / "eng", folder / "eng"):
        if (candidate / "train.tsv").is_file():
            return candidate
    return folder  # reading it names the missing file


def _reference_map(rows: list[SibRow], name: str) -> dict[int, SibRow]:
    ref: dict[int, SibRow] = {}
    for row in rows:
        if row.index_id in ref:
            first = ref[row.index_id]
            raise MvlsibError(
                f"{row.file}:{row.line}: index_id {row.index_id} appears again (first at {first.file}:{first.line}) "
                f"in the reference annotation {name}; each id must occur once."
            )
        ref[row.index_id] = row
    return ref


def check_against_reference(language: str, rows: list[SibRow], ref: dict[int, SibRow], ref_name: str) -> None:
    """Raise MvlsibError unless ``rows`` have exactly the reference's ids, and per id its split and topic."""
    seen: dict[int, SibRow] = {}
    for row in rows:
        if row.index_id in seen:
            first = seen[row.index_id]
            raise MvlsibError(
                f"{row.file}:{row.line}: index_id {row.index_id} of {language} appears again "
                f"(first at {first.file}:{first.line}); remove the duplicate row."
            )
        seen[row.index_id] = row
        want = ref.get(row.index_id)
        if want is None:
            raise MvlsibError(
                f"{row.file}:{row.line}: index_id {row.index_id} of {language} is not in {ref_name}; "
                "the ids of every language must equal English's. Remove the row or fix its id."
            )
        if row.split != want.split:
            raise MvlsibError(
                f"{row.file}:{row.line}: index_id {row.index_id} of {language} is in the {row.split} split "
                f"but in {want.split} for {ref_name} ({want.file}:{want.line}); move the row to {want.split}.tsv."
            )
        if row.topic != want.topic:
            raise MvlsibError(
                f"{row.file}:{row.line}: index_id {row.index_id} of {language} has topic {row.topic!r} "
                f"but {ref_name} has {want.topic!r} ({want.file}:{want.line}); topics must equal English's."
            )
    missing = sorted(set(ref) - set(seen))
    if missing:
        want = ref[missing[0]]
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        raise MvlsibError(
            f"{language}: {len(missing)} index_id(s) of {ref_name} are missing (e.g. {shown}; "
            f"{missing[0]} belongs in {want.split}.tsv); every language needs all {len(ref)} sentences."
        )


def find_duplicates(rows: list[SibRow]) -> list[DuplicateGroup]:
    """Groups of ids with the same whitespace-normalised text, ordered by their smallest id."""
    rows = sorted(rows, key=lambda r: r.index_id)
    return duplicate_groups([r.index_id for r in rows], [r.topic for r in rows], [r.text for r in rows])


def duplicate_groups(
    ids: list[int], topics: list[str], texts: list[str], normalized: list[str] | None = None
) -> list[DuplicateGroup]:
    """:func:`find_duplicates` of one language's columns, given in index_id order.

    ``normalized`` (``textnorm.normalize_many`` of ``texts``, which the build needs anyway) narrows
    the search: NFC never merges or splits whitespace runs, so two texts equal after whitespace
    collapsing are equal after NFC + collapsing too; only texts that repeat there are compared.
    """
    keys = normalized if normalized is not None else texts
    if normalized is not None and len(set(keys)) == len(keys):
        return []
    if normalized is not None:
        counts = Counter(keys)
        candidates = [n for n, key in enumerate(keys) if counts[key] > 1]
    else:
        candidates = range(len(texts))
    by_text: dict[str, list[int]] = {}
    for n in candidates:
        by_text.setdefault(collapse_whitespace(texts[n]), []).append(n)
    groups = [
        DuplicateGroup(
            index_ids=[ids[n] for n in group],
            topics=[topics[n] for n in group],
            cross_topic=len({topics[n] for n in group}) > 1,
            text=text,
        )
        for text, group in by_text.items()
        if len(group) > 1
    ]
    return sorted(groups, key=lambda g: g.index_ids)


def ingest(
    workdir: str | os.PathLike[str],
    sib: str | os.PathLike[str] | None = None,
    revision: str | None = None,
    flores: str | os.PathLike[str] | None = None,
    annotation: str | os.PathLike[str] | None = None,
    languages: str | list[str] | None = None,
    progress: bool = True,
    *,
    endpoint: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> IngestReport:
    """:func:`ingest_corpus` without the in-memory corpus."""
    return ingest_corpus(
        workdir, sib, revision, flores, annotation, languages, progress, endpoint=endpoint, cache_dir=cache_dir
    )[0]


def ingest_corpus(
    workdir: str | os.PathLike[str],
    sib: str | os.PathLike[str] | None = None,
    revision: str | None = None,
    flores: str | os.PathLike[str] | None = None,
    annotation: str | os.PathLike[str] | None = None,
    languages: str | list[str] | None = None,
    progress: bool = True,
    *,
    endpoint: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> tuple[IngestReport, Corpus]:
    """Read SIB-200 and/or Flores, check every language, write ``corpus.parquet`` and ``ingest_report.json``;
    return the report and the corpus as written (``mvlsib-build build`` hands it to the next stages).

    ``sib``: a local folder (SIB-200 checkout, its ``data/annotated`` folder, or the Hub layout
    ``data/<lang>/``) or a Hub dataset id (default ``Davlan/sib200`` when neither ``sib`` nor ``flores`` is
    given). ``flores`` needs ``annotation`` (the English ``train/dev/test.tsv``); ``annotation`` given with
    ``sib`` replaces ``eng_Latn`` as the reference. ``endpoint``/``cache_dir`` go to huggingface_hub.
    """
    from mvlsib.progress import tqdm_class

    tqdm = tqdm_class()

    workdir = Path(workdir)
    requested = parse_languages(languages)
    if sib is None and flores is None:
        sib = DEFAULT_HUB_DATASET
    if flores is not None and annotation is None:
        raise MvlsibError(
            "--flores needs --annotation DIR: the English SIB-200 annotation (train/dev/test.tsv) that gives "
            "each Flores sentence its split and topic, e.g. --annotation sib-200/data/eng."
        )
    # a Path object always means a local folder; only a string can name a Hub dataset
    hub = isinstance(sib, str) and is_hub_id(sib)
    if revision is not None and not hub:
        raise MvlsibError("--revision applies only to a Hub dataset given with --sib ORG/NAME.")

    sources: list[dict] = []
    sib_src: SibSource | None = None
    if sib is not None:
        if hub:
            sib_src = hub_source(
                str(sib), revision, languages=requested, endpoint=endpoint, cache_dir=cache_dir, progress=progress
            )
        else:
            sib_src = local_source(sib)
        sources.append({"kind": sib_src.kind, "location": sib_src.location, "revision": sib_src.revision})
    flores_langs: dict[str, FloresLanguage] = {}
    if flores is not None:
        flores_langs = find_flores_languages(Path(flores).expanduser().resolve())
        sources.append({"kind": "flores", "location": str(Path(flores).expanduser().resolve()), "revision": None})

    sib_langs = sib_src.languages if sib_src else {}
    available = sorted(set(sib_langs) | set(flores_langs))
    selected = _select(requested, available)
    both = [lang for lang in selected if lang in sib_langs and lang in flores_langs]
    if both:
        raise MvlsibError(
            f"language(s) {', '.join(both)} are both in --sib and in --flores; keep one source, "
            "or leave them out with --languages."
        )

    # The reference: the given annotation, else eng_Latn of the SIB source (read even when not selected).
    ref_rows: list[SibRow]
    if annotation is not None:
        folder = _annotation_folder(annotation)
        ref_rows = read_language_folder(folder, need_text=False)
        ref_name = f"the annotation {folder}"
        sources.append({"kind": "annotation", "location": str(folder), "revision": None})
    else:
        assert sib_src is not None
        if REFERENCE_LANGUAGE not in sib_langs:
            raise MvlsibError(
                f"{sib_src.root}: no {REFERENCE_LANGUAGE} folder to check ids and topics against; "
                "add it, or pass the English annotation with --annotation DIR."
            )
        ref_rows = read_language_folder(sib_langs[REFERENCE_LANGUAGE])
        ref_name = f"English ({REFERENCE_LANGUAGE})"
    ref = _reference_map(ref_rows, ref_name)
    ordered_ref = sorted(ref.values(), key=lambda r: r.index_id)

    # The reference's columns in file order, and the order that sorts them by index_id: a language
    # whose files list the same ids, splits and topics in the same order passes
    # check_against_reference as it is, without record objects.
    ref_key = ([r.index_id for r in ref_rows], [r.topic for r in ref_rows], [r.split for r in ref_rows])
    by_id = sorted(range(len(ref_rows)), key=lambda n: ref_rows[n].index_id)
    sort = (lambda values: list(itemgetter(*by_id)(values))) if len(by_id) > 1 else list
    sorted_ids = sort(ref_key[0])
    sorted_topics, sorted_splits = sort(ref_key[1]), sort(ref_key[2])

    col_lang: list[str] = []
    col_id: list[int] = []
    col_split: list[str] = []
    col_topic: list[str] = []
    col_text: list[str] = []
    spans: list[tuple[str, int, int]] = []  # each language's rows
    duplicates: dict[str, list[DuplicateGroup]] = {}
    for lang in tqdm(selected, desc="ingest", unit="lang", disable=not progress, file=sys.stderr):
        columns = None
        if lang in flores_langs:
            rows = flores_rows(flores_langs[lang], ordered_ref)
        elif annotation is None and lang == REFERENCE_LANGUAGE:
            rows = ref_rows
        else:
            columns = read_language_columns(sib_langs[lang])
            if columns is None or columns[:2] != ref_key[:2] or columns[3] != ref_key[2]:
                columns = None
                rows = read_language_folder(sib_langs[lang])  # names the file and line of what is wrong
        if columns is not None:
            ids, topics, texts, splits = sorted_ids, sorted_topics, sort(columns[2]), sorted_splits
        else:
            check_against_reference(lang, rows, ref, ref_name)
            rows = sorted(rows, key=lambda r: r.index_id)
            ids, topics = [r.index_id for r in rows], [r.topic for r in rows]
            texts, splits = [r.text for r in rows], [r.split for r in rows]
        spans.append((lang, len(col_id), len(col_id) + len(ids)))
        col_lang += [lang] * len(ids)
        col_id += ids
        col_split += splits
        col_topic += topics
        col_text += texts

    corpus = workdir / CORPUS_FILE
    table = write_corpus(corpus, col_lang, col_id, col_split, col_topic, col_text)
    # Normalised once for all languages, with the texts' arrow column at hand (textnorm).
    col_norm = normalize_many(col_text, table.column("text"))
    for lang, start, end in spans:
        dups = duplicate_groups(col_id[start:end], col_topic[start:end], col_text[start:end], col_norm[start:end])
        if dups:
            duplicates[lang] = dups
    in_memory = Corpus(
        table, dict(zip(CORPUS_COLUMNS, (col_lang, col_id, col_split, col_topic, col_text))), normalized=col_norm
    )
    split_sizes = {s: 0 for s in SPLITS}
    topic_sizes: dict[str, int] = {}
    for r in ordered_ref:
        split_sizes[r.split] += 1
        topic_sizes[r.topic] = topic_sizes.get(r.topic, 0) + 1
    report = IngestReport(
        corpus=CORPUS_FILE,
        corpus_sha256=sha256_file(corpus),
        reference=ref_name,
        sources=sources,
        languages=list(selected),
        n_languages=len(selected),
        n_rows=len(col_id),
        sentences_per_language=len(ref),
        split_sizes=split_sizes,
        topic_sizes=dict(sorted(topic_sizes.items())),
        duplicates=duplicates,
    )
    with atomic_open(workdir / REPORT_FILE) as fh:
        fh.write(report.to_json())
    return report, in_memory


def write_corpus(path: Path, language, index_id, split, topic, text) -> None:
    """Write the corpus with fixed settings so that the same rows give the same bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mvlsib.arrowcols import column

    table = pa.table(
        {
            "language": column(language, pa.string()),
            "index_id": column(index_id, pa.int64()),
            "split": column(split, pa.string()),
            "topic": column(topic, pa.string()),
            "text": column(text, pa.string()),
        }
    )
    with atomic_path(path) as tmp:
        pq.write_table(
            table,
            tmp,
            compression="zstd",
            compression_level=3,
            use_dictionary=["language", "split", "topic"],
            write_statistics=True,
            version="2.6",
            data_page_version="1.0",
            row_group_size=1 << 20,
        )
    return table
