"""Export a release in MTEB's retrieval layout, for s2i and i2s with one reference (k=1).

Each task is a dataset folder of its own (an MTEB task reads one dataset) whose card
declares, per language ``L``, the configs MTEB's ``RetrievalDatasetLoader`` reads with
``hf_subset=L``: ``L-corpus``, ``L-queries``, ``L-qrels`` and ``L-top_ranked`` (the 4
candidates of the instance, so MTEB ranks exactly the multiple-choice options).

- ``s2i``: queries are the instance's sentence in ``L`` (``id`` = instance id, ``text``);
  the corpus is the release's images, one shared file (``id`` = image id, ``image``);
- ``i2s``: queries are the instance's first reference image, one shared file; the corpus
  is the 1,004 SIB-200 sentences in ``L`` (``id`` = ``index_id``, ``text``).

Only what depends on the language is written per language; the other configs of every
language point at the same file, so no image is stored twice. The instance set is this
release's (its manifest's), not the upstream load-time one MTEB's ``MVLSIBSent2Img`` pins.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from mvlsib import jsonio
from mvlsib.errors import MvlsibError
from mvlsib.escape import md_code
from mvlsib.release.exports.common import Selection, load_image_bytes, load_rows, select, staging, write_info
from mvlsib.release.tables import write_table
from mvlsib.release_format import mvl_sib

FORMAT = "mteb"
IMAGE = "image"
TEXT = "text"
# Which column of a release row holds the ids of the texts in a text column (the loader's TEXT_OF, reversed).
_IDS_OF = {text: ids for text, ids in mvl_sib.TEXT_OF.items()}


def query_kind(spec) -> str:
    return IMAGE if spec.references in mvl_sib.IMAGE_COLUMNS_OF_ROWS else TEXT


def corpus_kind(spec) -> str:
    return IMAGE if spec.options in mvl_sib.IMAGE_COLUMNS_OF_ROWS else TEXT


# The tasks MTEB's retrieval layout can express: the cross-modal ones (s2i, i2s), with one query
# (k=1) ranked against its 4 candidates (images, or target-language sentences with their ids).
TASKS = tuple(t.name for t in mvl_sib.TASK_TABLE if t.cross_modal)
SPLIT = mvl_sib.SPLIT
IMAGE_ROW_GROUP = 10


def _features(columns: dict[str, str]) -> dict:
    def feature(kind):
        if kind == "image":
            return {"_type": "Image"}
        if kind == "list<string>":
            return {"feature": {"dtype": "string", "_type": "Value"}, "_type": "List"}
        return {"dtype": kind, "_type": "Value"}

    return {name: feature(kind) for name, kind in columns.items()}


def _write(path: Path, columns: dict[str, str], data: dict[str, list], image: bool = False) -> str:
    types = {
        "string": pa.string(),
        "int32": pa.int32(),
        "list<string>": pa.list_(pa.string()),
        "image": pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
    }
    meta = jsonio.dumps({"info": {"features": _features(columns)}}, ensure_ascii=False, separators=(",", ":"))
    schema = pa.schema(
        [(name, types[kind]) for name, kind in columns.items()], metadata={b"huggingface": meta.encode("utf-8")}
    )
    table = pa.table({name: data[name] for name in columns}, schema=schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_table(
        table,
        path,
        row_group_size=IMAGE_ROW_GROUP if image else None,
        no_stats=[n for n, k in columns.items() if k == "image"],
    )
    return path.as_posix()


def _option_ids(task: str, row: dict) -> tuple[list[str], str]:
    """The 4 candidate corpus ids of a row and the relevant one."""
    spec = mvl_sib.TASK_BY_NAME[task]
    column = spec.options if corpus_kind(spec) == IMAGE else _IDS_OF[spec.options]
    ids = [str(i) for i in row[column]]
    return ids, ids[int(row[spec.label])]


def _card(task: str, sel: Selection, configs: dict[str, str], counts: dict) -> str:
    spec = mvl_sib.TASK_BY_NAME[task]
    lines = ["---", "configs:"]
    for name, path in configs.items():
        lines += [f"- config_name: {name}", "  data_files:", f"  - split: {SPLIT}", f"    path: {path}"]
    lines += [
        "---",
        "",
        f"# MVL-SIB {task} (k=1) in MTEB's retrieval layout",
        "",
        f"{spec.title}: for each of the 3,012 MVL-SIB instances, rank the instance's 4 candidates "
        f"({'images' if corpus_kind(spec) == IMAGE else 'sentences'}) for its "
        f"{'reference image' if query_kind(spec) == IMAGE else 'sentence'}; exactly one is relevant. "
        "Subsets are the languages (`hf_subset`): " + ", ".join(sel.languages) + ".",
        "",
        "**A different instance set from MTEB's `MVLSIBSent2Img`.** That task pins a dataset built from the "
        "upstream release's load-time instances (WueNLP/mvl-sib). This export holds the instances of the "
        "mvlsib-build release it was made from (its `manifest.json` names the instance-file hash and seed), "
        "with that release's images. Register it as a new task (or a new version of the task), never as a "
        "replacement of the old one: scores on the two instance sets are not comparable.",
        "",
        f"Exported by mvlsib-build {sel.info(FORMAT)['mvlsib_build']} from {md_code(sel.source, in_table=False)}"
        + (f" (revision {md_code(sel.revision, in_table=False)})" if sel.revision else "")
        + ".",
        "",
        "| config | rows |",
        "|---|---|",
    ]
    lines += [f"| {name} | {counts[name]} |" for name in configs]
    lines += ["", "See docs/exports.md of mvlsib-build for the task class that loads it.", ""]
    return "\n".join(lines)


def export_mteb(release, out, *, languages=None, tasks=None, ks=None, revision=None) -> dict:
    """Write ``out/s2i`` and ``out/i2s`` (those asked for); returns what ``export.json`` records."""
    sel = select(
        release,
        languages=languages,
        tasks=tasks,
        ks=ks,
        revision=revision,
        default_ks=(1,),
        allowed=lambda task, k: task in TASKS and k == 1,
    )
    images = load_image_bytes(sel)
    rows = {lang: load_rows(sel, lang, all_columns=True) for lang in sel.languages}
    info = sel.info(FORMAT)
    info["datasets"] = {}
    with staging(out) as stage:
        for task, _k in sel.task_ks:
            root = stage / task
            configs, counts = _export_task(root, task, sel, rows, images)
            (root / "README.md").write_text(_card(task, sel, configs, counts), encoding="utf-8", newline="\n")
            info["datasets"][task] = {"configs": len(configs), "counts": counts}
        write_info(stage, info)
    return info


def _export_task(root: Path, task: str, sel: Selection, rows, images) -> tuple[dict, dict]:
    """One task's dataset folder: (config name -> file, config name -> rows) per language."""
    spec = mvl_sib.TASK_BY_NAME[task]
    first = rows[sel.languages[0]]
    shared, n_shared = _shared_configs(root, task, spec, first, images)
    query_ids = [row["instance_id"] for row in first]
    configs, counts = {}, {}
    for lang in sel.languages:
        lang_rows = rows[lang]
        if [r["instance_id"] for r in lang_rows] != query_ids:
            raise MvlsibError(f"{lang}: its instances differ from {sel.languages[0]}'s; not one release")
        own, n_own = _language_configs(root / "data" / lang, spec, lang_rows)
        for kind in ("corpus", "queries", "qrels", "top_ranked"):
            path = own.get(kind) or shared[kind]
            name = f"{lang}-{kind}"
            configs[name] = Path(path).relative_to(root).as_posix()
            counts[name] = n_own.get(kind, n_shared.get(kind))
    return configs, counts


def _shared_configs(root: Path, task: str, spec, first, images) -> tuple[dict, dict]:
    """The language-independent configs, once: qrels, top_ranked, and the image side (corpus or queries)."""
    shared, n_shared = {}, {}
    qrels: dict[str, list] = {"query-id": [], "corpus-id": [], "score": []}
    top: dict[str, list] = {"query-id": [], "corpus-ids": []}
    for row in first:
        ids, relevant = _option_ids(task, row)
        qrels["query-id"].append(row["instance_id"])
        qrels["corpus-id"].append(relevant)
        qrels["score"].append(1)
        top["query-id"].append(row["instance_id"])
        top["corpus-ids"].append(ids)
    shared["qrels"] = _write(
        root / "data" / "qrels.parquet", {"query-id": "string", "corpus-id": "string", "score": "int32"}, qrels
    )
    shared["top_ranked"] = _write(
        root / "data" / "top_ranked.parquet", {"query-id": "string", "corpus-ids": "list<string>"}, top
    )
    if corpus_kind(spec) == IMAGE:
        image_ids = list(images)
        shared["corpus"] = _write(
            root / "data" / "corpus.parquet",
            {"id": "string", "image": "image"},
            {"id": image_ids, "image": [{"bytes": images[i][0], "path": None} for i in image_ids]},
            image=True,
        )
        n_shared["corpus"] = len(image_ids)
    else:
        refs = [row[spec.references][0] for row in first]
        shared["queries"] = _write(
            root / "data" / "queries.parquet",
            {"id": "string", "image": "image"},
            {
                "id": [row["instance_id"] for row in first],
                "image": [{"bytes": images[i][0], "path": None} for i in refs],
            },
            image=True,
        )
        n_shared["queries"] = len(refs)
    n_shared.update(qrels=len(qrels["query-id"]), top_ranked=len(top["query-id"]))
    return shared, n_shared


def _language_configs(folder: Path, spec, lang_rows) -> tuple[dict, dict]:
    """One language's own config: its queries (s2i: the sentences) or its corpus (i2s: every sentence)."""
    if corpus_kind(spec) == IMAGE:
        path = _write(
            folder / "queries.parquet",
            {"id": "string", "text": "string"},
            {"id": [r["instance_id"] for r in lang_rows], "text": [r[spec.references][0] for r in lang_rows]},
        )
        return {"queries": path}, {"queries": len(lang_rows)}
    # Every SIB-200 sentence is some instance's own sentence: the corpus is all of them.
    texts = {int(r["index_id"]): r["sentence"] for r in lang_rows}
    ids = sorted(texts)
    path = _write(
        folder / "corpus.parquet",
        {"id": "string", "text": "string"},
        {"id": [str(i) for i in ids], "text": [texts[i] for i in ids]},
    )
    return {"corpus": path}, {"corpus": len(ids)}
