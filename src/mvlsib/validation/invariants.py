"""Check a work folder against the JSON Schemas and every dataset invariant of SPEC §4.

Each check returns :class:`Violation` records (instance id, rule, detail) instead of
stopping at the first problem, so one run shows a curator everything that is wrong.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

from mvlsib import jsonio
from mvlsib import progress as progress_bars
from mvlsib.errors import MvlsibError
from mvlsib.release_format.mvl_sib import TASK_TABLE, TOPICS
from mvlsib.schema.validators import column_errors, is_valid, load_schema, schema_errors
from mvlsib.workdir import BUNDLED_POOL
from mvlsib.workdir.corpus import Corpus, take
from mvlsib.workdir.instances import Instance, instance_records
from mvlsib.workdir.pool_manifest import PoolLike, as_pool

N_OPTIONS = 4
CORPUS_LEVEL = "-"  # instance_id used for violations that belong to no single instance

# rule name -> what it guards; names are stable (tests and users grep for them)
RULES: dict[str, str] = {
    "schema": "a record does not match its JSON Schema",
    "corpus-parallel": "a language's ids, topics or splits differ from the reference language (SPEC §4.6)",
    "corpus-empty-text": "a sentence is empty in some language",
    "count": "not exactly 3 instances per SIB sentence with ids '{index_id}-{r}' in order (SPEC §4.1)",
    "unknown-id": "an instance refers to a sentence or image that does not exist",
    "positives": "positive images or reference sentences wrong: count, distinctness, topic, own id first (SPEC §4.2)",
    "negatives": "negative topics, sentences or images wrong (SPEC §4.2)",
    "options": "options or labels inconsistent with the instance's sentence, images and topics",
    "siblings": "two instances of the same sentence are identical (SPEC §4.3)",
    "answerable": "two sentences of an instance read the same in some language (SPEC §4.4)",
    "label-balance": "correct-option positions A-D not used equally often (SPEC §4.5)",
    "image-balance": "positive images of a topic used unevenly (SPEC §4.8)",
}


@dataclass(frozen=True)
class Violation:
    instance_id: str
    rule: str
    detail: str

    def __str__(self) -> str:
        return f"{self.instance_id:>8}  {self.rule:<17} {self.detail}"


@dataclass
class ValidationResult:
    violations: list[Violation]
    summary: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.violations

    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(v.rule for v in self.violations).items()))

    def to_json(self) -> str:
        payload = {
            "ok": self.ok,
            "summary": self.summary,
            "counts": self.counts(),
            "violations": [asdict(v) for v in self.violations],
        }
        return jsonio.dumps(payload, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


SHOWN_VIOLATIONS = 10  # how many violations a refusal lists (`mvlsib-build validate` lists them all)


def refuse_if_invalid(result: ValidationResult, where: str | Path) -> None:
    """Raise the one "N violations" refusal when ``result`` has violations: no release is written."""
    refuse_violations(result.violations, where)


def refuse_violations(violations: Sequence[Violation], where: str | Path) -> None:
    """The refusal of ``refuse_if_invalid`` for a list of violations."""
    if not violations:
        return
    raise MvlsibError(
        f"{where}: validation found {len(violations)} violation(s); no release was written "
        "(`mvlsib-build validate` lists them all):",
        items=[str(v).strip() for v in violations],
        shown=SHOWN_VIOLATIONS,
    )


# --------------------------------------------------------------------------- entry point


def validate(
    corpus: Corpus,
    instances: Sequence[Instance | dict],
    pool: PoolLike = BUNDLED_POOL,
    *,
    schemas: bool = True,
    progress: bool = False,
) -> ValidationResult:
    """Every schema and invariant of the corpus and the instances, against the pool's manifest.

    ``instances`` are what ``sample`` returns or the records of ``instances.jsonl``; ``pool`` a
    ``Pool`` or its folder; ``progress`` draws a bar over the checks (on a terminal)."""
    pool = as_pool(pool)
    instances = instance_records(instances)
    image_topics = dict(pool.image_topics)
    manifest_rows = [r.as_dict() for r in pool.rows]
    violations: list[Violation] = []
    with progress_bars.bar(total=8, desc="validate", unit="check", enabled=progress) as bar:
        well_formed = _well_formed(instances)
        if schemas:
            violations += check_schemas(corpus, instances, manifest_rows, well_formed)
        bar.update()
        corpus_violations, topics_by_id = check_corpus(corpus)
        violations += corpus_violations
        bar.update()
        # Structural checks below assume well-formed records; malformed ones are reported as "schema".
        for check in (
            lambda: check_count(instances, topics_by_id),
            lambda: check_structure(well_formed, topics_by_id, image_topics),
            lambda: check_siblings(well_formed),
            lambda: check_answerable(corpus, well_formed),
        ):
            violations += check()
            bar.update()
        label_v, label_counts = check_label_balance(well_formed)
        violations += label_v
        bar.update()
        image_v, spread = check_image_balance(well_formed, image_topics)
        violations += image_v
        bar.update()
    summary = {
        "instances": len(instances),
        "sentences": len(topics_by_id),
        "languages": len(set(corpus.column("language"))),
        "corpus_rows": int(len(corpus)),
        "images": len(image_topics),
        "label_counts": label_counts,
        "positive_image_spread": spread,
    }
    return ValidationResult(violations=violations, summary=summary)


# --------------------------------------------------------------------------- schemas


def check_schemas(
    corpus: Corpus, instances: Sequence[dict], manifest_rows: Sequence[dict], well_formed: Sequence[dict] | None = None
) -> list[Violation]:
    out: list[Violation] = []
    columns = {name: corpus.column(name) for name in corpus.names()}
    messages = column_errors(
        "corpus_row", columns, label_columns=("language", "index_id"), suspects=_text_suspects(corpus)
    )
    out += [Violation(CORPUS_LEVEL, "schema", f"corpus row {msg}") for msg in messages]
    out += instance_shape_violations(instances, well_formed)
    for rec in manifest_rows:
        for msg in schema_errors("manifest_row", rec):
            out.append(Violation(CORPUS_LEVEL, "schema", f"manifest row {rec.get('image_id')}: {msg}"))
    return out


def instance_shape_violations(
    instances: Sequence[object], well_formed: Sequence[dict] | None = None
) -> list[Violation]:
    """The instance schema's findings, record by record (its types and patterns: what the release's
    typed tables need, checked even when the invariants are skipped)."""
    out: list[Violation] = []
    good = {id(rec) for rec in (_well_formed(instances) if well_formed is None else well_formed)}
    for n, rec in enumerate(instances, start=1):
        if id(rec) not in good:
            iid = str(rec.get("instance_id", f"line {n}")) if isinstance(rec, dict) else f"line {n}"
            out += [Violation(iid, "schema", msg) for msg in schema_errors("instance", rec)]
    return out


def _text_suspects(corpus: Corpus) -> dict[str, list[int]] | None:
    """The corpus rows whose text can break the ``corpus_row`` text rule (a string, not empty, not
    only whitespace), found in one arrow pass: only those go through jsonschema. ``utf8_is_space``
    classifies characters as Python's ``str.isspace`` does, which is what the rule's ``\\S`` uses."""
    texts = corpus.arrow_column("text")
    if texts is None:
        return None
    suspect = pc.or_kleene(pc.equal(pc.binary_length(texts), 0), pc.utf8_is_space(texts))
    return {"text": pc.indices_nonzero(pc.fill_null(suspect, True).combine_chunks()).to_pylist()}


def _well_formed(instances: Sequence[object]) -> list[dict]:
    """The records the instance schema accepts. Checked column by column first (each distinct value
    once; the schema's properties are independent of each other, so this equals checking every
    record when every record is an object with exactly the schema's keys); record by record only
    when that finds a problem."""
    fields = load_schema("instance")["required"]
    if all(isinstance(inst, dict) and list(inst) == fields for inst in instances):
        columns = {name: [inst[name] for inst in instances] for name in fields}  # type: ignore[index]
        if not column_errors("instance", columns, limit=1):
            return list(instances)  # type: ignore[arg-type]
    return [inst for inst in instances if isinstance(inst, dict) and is_valid("instance", inst)]


# --------------------------------------------------------------------------- corpus


def check_corpus(corpus) -> tuple[list[Violation], dict[int, str]]:
    """Every language must carry the reference language's ids, topics and splits (SPEC §4.6)."""
    out: list[Violation] = []
    rows_of = corpus.language_rows()
    langs = sorted(rows_of)
    if not langs:
        return [Violation(CORPUS_LEVEL, "corpus-parallel", "corpus has no languages")], {}
    ref_lang = "eng_Latn" if "eng_Latn" in langs else langs[0]
    index_ids, topics, splits = corpus.column("index_id"), corpus.column("topic"), corpus.column("split")
    texts = corpus.column("text")
    # One pass over all texts: every one a string with a non-space character (the usual answer).
    all_full = set(map(type, texts)) == {str} and all(map(str.strip, texts))

    def columns(rows) -> tuple[list, list, list]:
        return take(index_ids, rows), take(topics, rows), take(splits, rows)

    ref_columns = columns(rows_of[ref_lang])
    ref_rows = {(int(i), t, s) for i, t, s in zip(*ref_columns)}
    ref_unique = len(ref_rows) == len(ref_columns[0])
    for lang in langs:
        lang_columns = columns(rows_of[lang])
        # The same rows in the same order as a reference without repeats: both checks below pass.
        if not (ref_unique and lang_columns == ref_columns):
            rows = {(int(i), t, s) for i, t, s in zip(*lang_columns)}
            if len(lang_columns[0]) != len(rows):
                dup = Counter(int(i) for i in lang_columns[0])
                ids = sorted(i for i, c in dup.items() if c > 1)[:5]
                out.append(
                    Violation(CORPUS_LEVEL, "corpus-parallel", f"{lang}: index_id(s) {ids} occur more than once")
                )
            if rows != ref_rows:
                extra, lacking = sorted(rows - ref_rows)[:3], sorted(ref_rows - rows)[:3]
                out.append(
                    Violation(
                        CORPUS_LEVEL,
                        "corpus-parallel",
                        f"{lang} differs from {ref_lang}: has {extra} not in {ref_lang}, lacks {lacking}",
                    )
                )
        if not all_full:
            empty = [n for n in rows_of[lang] if not isinstance(texts[n], str) or not texts[n].strip()]
            for n in empty[:5]:
                out.append(
                    Violation(CORPUS_LEVEL, "corpus-empty-text", f"{lang}: sentence {int(index_ids[n])} is empty")
                )
    return out, {i: t for i, t, _ in sorted(ref_rows)}


# --------------------------------------------------------------------------- instances


def check_count(instances: Sequence[dict], topics_by_id: Mapping[int, str]) -> list[Violation]:
    out: list[Violation] = []
    # An id of another type (a list, an object) is the schema check's to report; it is no key here.
    ids = [
        inst.get("instance_id") if isinstance(inst, dict) and isinstance(inst.get("instance_id"), str) else None
        for inst in instances
    ]
    expected = [f"{i}-{r}" for i in sorted(topics_by_id) for r in range(3)]
    if len(instances) != len(expected):
        out.append(
            Violation(CORPUS_LEVEL, "count", f"{len(instances)} instances; expected {len(expected)} (3 per sentence)")
        )
    counts = Counter(ids)
    for iid, c in sorted(counts.items(), key=lambda kv: str(kv[0])):
        if c > 1:
            out.append(Violation(str(iid), "count", f"instance id occurs {c} times"))
    missing = sorted(set(expected) - set(counts), key=_iid_sort)
    for iid in missing[:20]:
        out.append(Violation(iid, "count", "instance missing"))
    if len(missing) > 20:
        out.append(Violation(CORPUS_LEVEL, "count", f"... and {len(missing) - 20} more missing instances"))
    for inst in instances:
        if not isinstance(inst, dict):
            continue
        iid, index_id = inst.get("instance_id"), inst.get("index_id")
        if isinstance(iid, str) and "-" in iid and iid.split("-")[0] != str(index_id):
            out.append(Violation(iid, "count", f"instance_id does not start with its index_id {index_id}"))
    if not all(isinstance(i, str) for i in ids) or ids == sorted(ids, key=_iid_sort):  # type: ignore[arg-type]
        return out
    out.append(Violation(CORPUS_LEVEL, "count", "instances are not ordered by index_id then r"))
    return out


def _iid_sort(iid: str) -> tuple[int, int]:
    try:
        a, b = str(iid).split("-")
        return int(a), int(b)
    except ValueError:
        return (math.inf, math.inf)  # type: ignore[return-value]


def check_structure(
    instances: Iterable[dict], topics_by_id: Mapping[int, str], image_topics: Mapping[str, str]
) -> list[Violation]:
    out: list[Violation] = []
    for inst in instances:
        iid, topic = inst["instance_id"], inst["topic"]
        v = lambda rule, detail, iid=iid: out.append(Violation(iid, rule, detail))  # noqa: E731
        sent_ids = [*inst["ref_sentence_ids"], *inst["sentence_option_ids"]]
        unknown_s = sorted({s for s in sent_ids if s not in topics_by_id})
        unknown_i = sorted({i for i in [*inst["ref_image_ids"], *inst["image_option_ids"]] if i not in image_topics})
        if unknown_s:
            v("unknown-id", f"sentence id(s) {unknown_s} not in the corpus")
        if unknown_i:
            v("unknown-id", f"image id(s) {unknown_i} not in the pool manifest")
        if unknown_s or unknown_i:
            continue
        if topics_by_id[inst["index_id"]] != topic:
            v("positives", f"topic {topic!r} but sentence {inst['index_id']} is {topics_by_id[inst['index_id']]!r}")
        refs = inst["ref_sentence_ids"]
        if refs[0] != inst["index_id"]:
            v("positives", f"ref_sentence_ids[0] is {refs[0]}, not the instance's own id {inst['index_id']}")
        if inst["index_id"] in refs[1:]:
            v("positives", "the instance's own id appears again among the 4 additional sentences")
        wrong = [s for s in refs if topics_by_id[s] != topic]
        if wrong:
            v("positives", f"reference sentence(s) {wrong} are not of topic {topic!r}")
        wrong_img = [i for i in inst["ref_image_ids"] if image_topics[i] != topic]
        if wrong_img:
            v("positives", f"positive image(s) {wrong_img} are not of topic {topic!r}")
        negs = inst["neg_topics"]
        if topic in negs:
            v("negatives", f"neg_topics {negs} contain the instance's topic {topic!r}")
        # Sentence options: own sentence at the label, one sentence of each negative topic elsewhere.
        s_opts, s_label = inst["sentence_option_ids"], inst["sentence_label"]
        if s_opts[s_label] != inst["index_id"]:
            v(
                "options",
                f"sentence_option_ids[{s_label}] is {s_opts[s_label]}, not the instance's sentence {inst['index_id']}",
            )
        neg_s = [s for j, s in enumerate(s_opts) if j != s_label]
        if sorted(topics_by_id[s] for s in neg_s) != sorted(negs):
            v(
                "negatives",
                f"negative sentences {neg_s} have topics {[topics_by_id[s] for s in neg_s]}, expected one each of {negs}",
            )
        if inst["index_id"] in neg_s:
            v("negatives", "the instance's own sentence appears as a negative option")
        # Image options: a positive image at the label, one image of each negative topic elsewhere.
        i_opts, i_label, t_opts = inst["image_option_ids"], inst["image_label"], inst["topic_options"]
        if image_topics[i_opts[i_label]] != topic:
            v("options", f"image_option_ids[{i_label}] = {i_opts[i_label]!r} is not of topic {topic!r}")
        neg_i = [i for j, i in enumerate(i_opts) if j != i_label]
        if sorted(image_topics[i] for i in neg_i) != sorted(negs):
            v(
                "negatives",
                f"negative images {neg_i} have topics {[image_topics[i] for i in neg_i]}, expected one each of {negs}",
            )
        if [image_topics[i] for i in i_opts] != t_opts:
            v("options", f"topic_options {t_opts} are not the topics of image_option_ids {i_opts}")
        if t_opts[i_label] != topic:
            v("options", f"topic_options[{i_label}] is {t_opts[i_label]!r}, not the instance's topic {topic!r}")
    return out


def _signature(inst: dict) -> tuple:
    return (
        tuple(sorted(inst["ref_image_ids"])),
        tuple(inst["ref_sentence_ids"]),
        tuple(inst["neg_topics"]),
        tuple(inst["sentence_option_ids"]),
        tuple(inst["image_option_ids"]),
    )


def check_siblings(instances: Iterable[dict]) -> list[Violation]:
    out: list[Violation] = []
    seen: dict[tuple, str] = {}
    for inst in instances:
        key = (inst["index_id"], _signature(inst))
        if key in seen:
            out.append(
                Violation(
                    inst["instance_id"], "siblings", f"identical to {seen[key]} (same images, sentences and options)"
                )
            )
        else:
            seen[key] = inst["instance_id"]
    return out


def check_answerable(corpus, instances: Sequence[dict]) -> list[Violation]:
    """In every language, the 8 sentences of an instance must have 8 different normalised texts."""
    if not instances:
        return []
    # Sentences by their rank among the corpus's ids (ids may be sparse: 9 digits, a table by id
    # would be gigabytes). table[language, rank]: the sentence's own rank, or for a text that repeats
    # in that language (normalised) the smallest rank with that text; -1 where the language lacks it.
    norm, index_id_list = corpus.normalized(), corpus.column("index_id")
    rows_of = corpus.language_rows()
    langs = sorted(rows_of)
    known = np.unique(np.fromiter(index_id_list, dtype=np.int64, count=len(corpus)))
    table = np.full((len(langs), len(known)), -1, dtype=np.int32)
    for li, lang in enumerate(langs):
        rows = rows_of[lang]
        ranks = np.searchsorted(known, take(index_id_list, rows))
        table[li, ranks] = ranks
        block = take(norm, rows)
        if len(set(block)) != len(block):
            first: dict[str, int] = {}
            for text, rank in sorted(zip(block, ranks.tolist()), key=lambda pair: pair[1]):
                table[li, rank] = first.setdefault(text, rank)

    ids = [sorted({*inst["ref_sentence_ids"], *inst["sentence_option_ids"]}) for inst in instances]
    width = max(len(row) for row in ids)
    mat = np.array([row + [row[0]] * (width - len(row)) for row in ids], dtype=np.int64)
    n_real = np.array([len(row) for row in ids])
    at = np.minimum(np.searchsorted(known, mat), len(known) - 1)
    in_corpus = known[at] == mat  # unknown ids are reported by check_structure
    out: list[Violation] = []
    # All languages at once: padding columns get codes no text has, distinct per column, so only
    # a repeated real code makes a row bad; rows naming a missing sentence (code < 0) are skipped.
    c = np.where(in_corpus[None], table[:, at], -1)  # (languages, instances, width)
    if (n_real != width).any():
        pad = np.arange(width)[None, :] >= n_real[:, None]
        c = np.where(pad[None], len(known) + np.arange(width, dtype=np.int32)[None, None, :], c)
    s = np.sort(c, axis=2)
    bad = (s[:, :, 1:] == s[:, :, :-1]).any(axis=2) & ~(c < 0).any(axis=2)
    for li, r in zip(*np.nonzero(bad)):
        lang, inst = langs[li], instances[r]
        row = c[li, r, : n_real[r]]
        by_code: dict[int, list[int]] = defaultdict(list)
        for sid, code in zip(ids[r], row.tolist()):
            by_code[code].append(sid)
        same = [group for group in by_code.values() if len(group) > 1]
        out.append(Violation(inst["instance_id"], "answerable", f"{lang}: sentences {same} have the same text"))
    return out


def check_label_balance(instances: Sequence[dict]) -> tuple[list[Violation], dict[str, dict[str, int]]]:
    out: list[Violation] = []
    counts: dict[str, dict[str, int]] = {}
    families = {
        f: "/".join(t.name for t in TASK_TABLE if t.label == f) for f in dict.fromkeys(t.label for t in TASK_TABLE)
    }
    for field_name, family in families.items():
        c = Counter(inst[field_name] for inst in instances)
        counts[field_name] = {"ABCD"[k]: c.get(k, 0) for k in range(N_OPTIONS)}
        if instances and len(instances) % N_OPTIONS == 0:
            want = len(instances) // N_OPTIONS
            bad = {k: v for k, v in counts[field_name].items() if v != want}
            if bad:
                out.append(
                    Violation(
                        CORPUS_LEVEL,
                        "label-balance",
                        f"{field_name} ({family}): {counts[field_name]}; each letter must be the answer {want} times",
                    )
                )
        elif instances:
            spread = max(counts[field_name].values()) - min(counts[field_name].values())
            if spread > 1:
                out.append(
                    Violation(
                        CORPUS_LEVEL,
                        "label-balance",
                        f"{field_name} ({family}): {counts[field_name]} (spread {spread} > 1)",
                    )
                )
    return out, counts


def image_spread_tolerance(mean_use: float) -> int:
    """Allowed max-min spread of positive-image use within a topic: 10 % of the mean, at least 2."""
    return max(2, math.ceil(0.1 * mean_use))


def check_image_balance(
    instances: Sequence[dict], image_topics: Mapping[str, str]
) -> tuple[list[Violation], dict[str, int]]:
    out: list[Violation] = []
    spread: dict[str, int] = {}
    for topic in TOPICS:
        pool = sorted(i for i, t in image_topics.items() if t == topic)
        topic_insts = [inst for inst in instances if inst["topic"] == topic]
        if not pool or not topic_insts:
            continue
        use = Counter({i: 0 for i in pool})
        for inst in topic_insts:
            use.update(i for i in inst["ref_image_ids"] if i in use)
        spread[topic] = max(use.values()) - min(use.values())
        mean = sum(use.values()) / len(use)
        if spread[topic] > image_spread_tolerance(mean):
            lo, hi = min(use, key=lambda i: (use[i], i)), max(use, key=lambda i: (use[i], i))
            out.append(
                Violation(
                    CORPUS_LEVEL,
                    "image-balance",
                    f"{topic}: {hi} is a positive {use[hi]} times but {lo} only {use[lo]} "
                    f"(spread {spread[topic]} > {image_spread_tolerance(mean)})",
                )
            )
    return out, spread
