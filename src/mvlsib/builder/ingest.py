"""``mvlsib-build ingest``: SIB-200 (local, Hub, or built from Flores) -> a checked corpus.

Every language is checked against the English annotation (same ids, splits and topics), texts are parsed
exactly (see :mod:`mvlsib.builder.tsv`), and duplicate translations are listed in the ingest
report (``WORK/ingest_report.json``) because the sampler must keep them apart.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from operator import itemgetter
from pathlib import Path

from mvlsib import jsonio
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
from mvlsib.progress import bar
from mvlsib.textnorm import collapse_whitespace, normalize_many
from mvlsib.workdir import CORPUS_COLUMNS, CORPUS_FILE
from mvlsib.workdir.corpus import Corpus, corpus_table


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
        return jsonio.dumps(self.to_dict(), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


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
        candidates = list(range(len(texts)))
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


@dataclass
class _Sources:
    """The opened sources: the SIB-200 folder (local or downloaded) and the Flores languages."""

    sib: SibSource | None
    flores: dict[str, FloresLanguage]
    records: list[dict]  # what the ingest report lists under "sources"

    @property
    def sib_languages(self) -> dict[str, Path]:
        return self.sib.languages if self.sib else {}


@dataclass
class _Reference:
    """The annotation every language is checked against, and its columns sorted by index_id."""

    rows: list[SibRow]  # in file order
    name: str
    by_id: dict[int, SibRow]
    ordered: list[SibRow]  # sorted by index_id
    key: tuple[list[int], list[str], list[str]]  # ids, topics, splits in file order
    order: list[int]  # the positions that sort file order by index_id

    def sort(self, values: list) -> list:
        return list(itemgetter(*self.order)(values)) if len(self.order) > 1 else list(values)


def ingest(
    sib: str | os.PathLike[str] | None = None,
    *,
    revision: str | None = None,
    flores: str | os.PathLike[str] | None = None,
    annotation: str | os.PathLike[str] | None = None,
    languages: str | list[str] | None = None,
    progress: bool = True,
    endpoint: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Corpus:
    """Read SIB-200 and/or Flores and check every language against the reference annotation;
    return the corpus, its ingest report as ``corpus.report`` (``workdir.corpus.save_corpus`` writes both).

    ``sib``: a local folder (SIB-200 checkout, its ``data/annotated`` folder, or the Hub layout
    ``data/<lang>/``) or a Hub dataset id (default ``Davlan/sib200`` when neither ``sib`` nor ``flores`` is
    given). ``flores`` needs ``annotation`` (the English ``train/dev/test.tsv``); ``annotation`` given with
    ``sib`` replaces ``eng_Latn`` as the reference. ``endpoint``/``cache_dir`` go to huggingface_hub.
    """
    requested = parse_languages(languages)
    sib, hub = _check_arguments(sib, revision, flores, annotation)
    sources = _open_sources(sib, hub, revision, flores, requested, endpoint, cache_dir, progress)
    selected = _select(requested, sorted(set(sources.sib_languages) | set(sources.flores)))
    both = [lang for lang in selected if lang in sources.sib_languages and lang in sources.flores]
    if both:
        raise MvlsibError(
            f"language(s) {', '.join(both)} are both in --sib and in --flores; keep one source, "
            "or leave them out with --languages."
        )
    reference = _read_reference(sources, annotation)
    columns, spans = _read_languages(selected, sources, reference, own_reference=annotation is None, progress=progress)
    table = corpus_table(*(columns[name] for name in CORPUS_COLUMNS))
    # Normalised once for all languages, with the texts' arrow column at hand (textnorm).
    normalized = normalize_many(columns["text"], table.column("text"))
    corpus = Corpus(table, columns, normalized=normalized, table_of_columns=True)
    duplicates = _duplicates(columns, spans, normalized)
    corpus.report = _report(corpus, reference, sources.records, selected, duplicates).to_dict()
    return corpus


def _check_arguments(sib, revision, flores, annotation) -> tuple[str | os.PathLike[str] | None, bool]:
    """The SIB source to read (the Hub default when none is given) and whether it names a Hub dataset."""
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
        raise MvlsibError("--data-revision applies only to a Hub dataset given with --sib ORG/NAME.")
    return sib, hub


def _open_sources(sib, hub: bool, revision, flores, requested, endpoint, cache_dir, progress: bool) -> _Sources:
    records: list[dict] = []
    sib_src: SibSource | None = None
    if sib is not None:
        if hub:
            sib_src = hub_source(
                str(sib), revision, languages=requested, endpoint=endpoint, cache_dir=cache_dir, progress=progress
            )
        else:
            sib_src = local_source(sib)
        records.append({"kind": sib_src.kind, "location": sib_src.location, "revision": sib_src.revision})
    flores_langs: dict[str, FloresLanguage] = {}
    if flores is not None:
        folder = Path(flores).expanduser().resolve()
        flores_langs = find_flores_languages(folder)
        records.append({"kind": "flores", "location": str(folder), "revision": None})
    return _Sources(sib_src, flores_langs, records)


def _read_reference(sources: _Sources, annotation: str | os.PathLike[str] | None) -> _Reference:
    """The given annotation, else eng_Latn of the SIB source (read even when not selected)."""
    if annotation is not None:
        folder = _annotation_folder(annotation)
        rows = read_language_folder(folder, need_text=False)
        name = f"the annotation {folder}"
        sources.records.append({"kind": "annotation", "location": str(folder), "revision": None})
    else:
        assert sources.sib is not None
        if REFERENCE_LANGUAGE not in sources.sib_languages:
            raise MvlsibError(
                f"{sources.sib.root}: no {REFERENCE_LANGUAGE} folder to check ids and topics against; "
                "add it, or pass the English annotation with --annotation DIR."
            )
        rows = read_language_folder(sources.sib_languages[REFERENCE_LANGUAGE])
        name = f"English ({REFERENCE_LANGUAGE})"
    by_id = _reference_map(rows, name)
    return _Reference(
        rows=rows,
        name=name,
        by_id=by_id,
        ordered=sorted(by_id.values(), key=lambda r: r.index_id),
        key=([r.index_id for r in rows], [r.topic for r in rows], [r.split for r in rows]),
        order=sorted(range(len(rows)), key=lambda n: rows[n].index_id),
    )


def _read_languages(
    selected: list[str], sources: _Sources, ref: _Reference, *, own_reference: bool, progress: bool
) -> tuple[dict[str, list], list[tuple[str, int, int]]]:
    """The corpus columns of every selected language (rows by language, then index_id), and each
    language's ``(language, start, end)`` rows."""
    columns: dict[str, list] = {name: [] for name in CORPUS_COLUMNS}
    spans: list[tuple[str, int, int]] = []
    for lang in bar(selected, desc="ingest", unit="lang", enabled=progress):
        ids, topics, texts, splits = _language_columns(lang, sources, ref, own_reference)
        n = len(columns["index_id"])
        spans.append((lang, n, n + len(ids)))
        columns["language"] += [lang] * len(ids)
        columns["index_id"] += ids
        columns["split"] += splits
        columns["topic"] += topics
        columns["text"] += texts
    return columns, spans


def _language_columns(lang: str, sources: _Sources, ref: _Reference, own_reference: bool) -> tuple[list, ...]:
    """One language's ids, topics, texts and splits, sorted by index_id and checked against ``ref``.

    A language whose files list the reference's ids, topics and splits in the same order passes
    :func:`check_against_reference` as it is, without record objects.
    """
    if lang in sources.flores:
        rows = flores_rows(sources.flores[lang], ref.ordered)
    elif own_reference and lang == REFERENCE_LANGUAGE:
        rows = ref.rows
    else:
        columns = read_language_columns(sources.sib_languages[lang])
        if columns is not None and columns[:2] == ref.key[:2] and columns[3] == ref.key[2]:
            ids, topics, splits = (ref.sort(values) for values in ref.key)
            return ids, topics, ref.sort(columns[2]), splits
        rows = read_language_folder(sources.sib_languages[lang])  # names the file and line of what is wrong
    check_against_reference(lang, rows, ref.by_id, ref.name)
    rows = sorted(rows, key=lambda r: r.index_id)
    return [r.index_id for r in rows], [r.topic for r in rows], [r.text for r in rows], [r.split for r in rows]


def _duplicates(
    columns: dict[str, list], spans: list[tuple[str, int, int]], normalized: list[str]
) -> dict[str, list[DuplicateGroup]]:
    ids, topics, texts = columns["index_id"], columns["topic"], columns["text"]
    out = {}
    for lang, start, end in spans:
        groups = duplicate_groups(ids[start:end], topics[start:end], texts[start:end], normalized[start:end])
        if groups:
            out[lang] = groups
    return out


def _report(
    corpus: Corpus, ref: _Reference, sources: list[dict], selected: list[str], duplicates: dict
) -> IngestReport:
    split_sizes = {s: 0 for s in SPLITS}
    topic_sizes: dict[str, int] = {}
    for r in ref.ordered:
        split_sizes[r.split] += 1
        topic_sizes[r.topic] = topic_sizes.get(r.topic, 0) + 1
    return IngestReport(
        corpus=CORPUS_FILE,
        corpus_sha256=hashlib.sha256(corpus.parquet_bytes()).hexdigest(),
        reference=ref.name,
        sources=sources,
        languages=list(selected),
        n_languages=len(selected),
        n_rows=len(corpus),
        sentences_per_language=len(ref.by_id),
        split_sizes=split_sizes,
        topic_sizes=dict(sorted(topic_sizes.items())),
        duplicates=duplicates,
    )
