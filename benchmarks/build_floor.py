"""The floor of ``mvlsib-build build``: only the reading, parsing and writing no build can avoid.

    python benchmarks/build_floor.py SIB_DIR POOL_DIR INSTANCES_JSONL OUT_DIR

A minimal program with no checks, no sampling and no toolkit imports (pyarrow and the
standard library only) that does what every correct build must do at least once:

1. read and parse every ``data/annotated/<lang>/{train,dev,test}.tsv`` (csv module, the
   quoting SIB-200 uses), and write ``corpus.parquet`` (same columns and writer settings);
2. read ``instances.jsonl`` (made by a real build: sampling is not part of the floor) and
   write it again;
3. per language, gather the instance texts (``take``) and write the 3,012-row language
   parquet with the release's writer settings; read and write the pool's images once.

``benchmarks/build_speed.py`` runs it beside a real build and prints build / floor (CPU).

    python benchmarks/build_floor.py --keys SIB_DIR POOL_DIR INSTANCES_JSONL

(``--phases`` before SIB_DIR also prints the CPU seconds of each phase as JSON: ``build_ledger.py``)

computes, instead, only the SHA-256 keys the documented sampler (docs/sampling.md, seed 0) must
compute at least once for the instances of that file: every candidate's key of every pick (the
sentences of the instance's topic and of each negative topic, the topic's and each negative
topic's images, the positives, the other topics, every instance for the order and both label
deals), hashed as fast as this machine's hashlib allows (the shared prefix hashed once and copied).
``build_speed.py`` prints build / (floor + keys), the figure the build goal is set on.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

# The release's writer settings (release/tables.py), page index and content-defined chunking
# included: they decide the bytes of every language file, so a build cannot leave them out.
WRITER = dict(
    version="2.6",
    compression="zstd",
    compression_level=3,
    use_dictionary=True,
    data_page_version="1.0",
    store_schema=False,
    write_page_index=True,
    use_content_defined_chunking=True,
    write_page_checksum=False,
)


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(sib: Path, pool: Path, instances: Path, out: Path, phases: dict | None = None) -> None:
    mark = (
        (lambda name: phases.__setitem__(name, _cpu() - sum(phases.values())))
        if phases is not None
        else (lambda _name: None)
    )
    mark("start-up")
    out.mkdir(parents=True, exist_ok=True)
    cols: dict[str, list] = {"language": [], "index_id": [], "split": [], "topic": [], "text": []}
    for folder in sorted((sib / "data" / "annotated").iterdir()):
        for split in ("train", "dev", "test"):
            with open(folder / f"{split}.tsv", encoding="utf-8", newline="") as fh:
                # whole columns at once (no per-row Python), as lean as the build's own parse
                body = list(csv.reader(fh, delimiter="\t", quotechar='"', doublequote=True, strict=True))[1:]
            raw_ids, topics, texts = zip(*body)
            cols["language"] += [folder.name] * len(body)
            cols["index_id"] += map(int, raw_ids)
            cols["split"] += [split] * len(body)
            cols["topic"] += topics
            cols["text"] += map(str.rstrip, texts)
    mark("parse")
    corpus = pa.table(
        {
            "language": pa.array(cols["language"], pa.string()),
            "index_id": pa.array(cols["index_id"], pa.int64()),
            "split": pa.array(cols["split"], pa.string()),
            "topic": pa.array(cols["topic"], pa.string()),
            "text": pa.array(cols["text"], pa.string()),
        }
    )
    pq.write_table(
        corpus,
        out / "corpus.parquet",
        compression="zstd",
        compression_level=3,
        use_dictionary=["language", "split", "topic"],
        version="2.6",
        data_page_version="1.0",
        row_group_size=1 << 20,
    )
    del cols
    mark("corpus")
    # The corpus stays in memory: `mvlsib-build build` hands it from stage to stage without
    # reading corpus.parquet back, so reading it back is not part of the floor.
    lines = instances.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    (out / "instances.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    mark("instances")

    # Texts by language, each in index_id order (one sort of the whole corpus).
    corpus = corpus.sort_by([("language", "ascending"), ("index_id", "ascending")])
    languages = corpus.column("language").to_pylist()
    index_ids = corpus.column("index_id").to_pylist()
    texts = corpus.column("text").combine_chunks()
    starts = [n for n in range(len(languages)) if n == 0 or languages[n] != languages[n - 1]] + [len(languages)]
    per_language = starts[1] - starts[0]
    pos = {i: n for n, i in enumerate(index_ids[:per_language])}
    sent = pa.array([pos[r["index_id"]] for r in records], pa.int32())
    refs = pa.array([pos[i] for r in records for i in r["ref_sentence_ids"]], pa.int32())
    opts = pa.array([pos[i] for r in records for i in r["sentence_option_ids"]], pa.int32())
    n = len(records)
    base = {
        name: pa.array([r[name] for r in records])
        for name in (
            "instance_id",
            "index_id",
            "topic",
            "ref_sentence_ids",
            "ref_image_ids",
            "neg_topics",
            "sentence_option_ids",
            "sentence_label",
            "image_option_ids",
            "topic_options",
            "image_label",
        )
    }
    for a, b in zip(starts, starts[1:]):
        lang_texts = texts.slice(a, b - a)
        table = pa.table(
            {
                **base,
                "language": pa.array([languages[a]] * n, pa.string()),
                "sentence": lang_texts.take(sent),
                "ref_sentences": pa.ListArray.from_arrays(
                    pa.array(range(0, 5 * n + 1, 5), pa.int32()), lang_texts.take(refs)
                ),
                "sentence_options": pa.ListArray.from_arrays(
                    pa.array(range(0, 4 * n + 1, 4), pa.int32()), lang_texts.take(opts)
                ),
            }
        )
        (out / languages[a]).mkdir(exist_ok=True)
        pq.write_table(table, out / languages[a] / "test.parquet", row_group_size=n, **WRITER)

    mark("tables")
    manifest = list(csv.DictReader(open(pool / "manifest.csv", encoding="utf-8", newline="")))
    images = pa.table(
        {
            "image_id": [r["image_id"] for r in manifest],
            "image": pa.array([{"bytes": (pool / r["file"]).read_bytes(), "path": None} for r in manifest]),
        }
    )
    pq.write_table(images, out / "images.parquet", row_group_size=10, write_statistics=["image_id"], **WRITER)
    mark("images")


def _keys(prefix: str, items: list[bytes]) -> list[bytes]:
    import hashlib
    from collections import deque
    from itertools import repeat
    from operator import itemgetter

    kind = type(hashlib.sha256())
    states = list(map(kind.copy, repeat(hashlib.sha256(prefix.encode()), len(items))))
    deque(map(kind.update, states, items), maxlen=0)
    return list(map(itemgetter(slice(0, 8)), map(kind.digest, states)))


def sampler_keys(sib: Path, pool: Path, instances: Path, seed: int = 0) -> tuple[int, float]:
    """The keys the documented sampler computes at least once for these instances: their number and
    the CPU seconds of hashing them (reading the inputs left out: the floor reads them already)."""
    import time

    sep = "\x1f"
    topic_of: dict[str, list[bytes]] = {}
    for split in ("train", "dev", "test"):
        with open(sib / "data" / "annotated" / "eng_Latn" / f"{split}.tsv", encoding="utf-8", newline="") as fh:
            for row in list(csv.reader(fh, delimiter="\t", quotechar='"', doublequote=True, strict=True))[1:]:
                topic_of.setdefault(row[1], []).append(row[0].encode())
    images: dict[str, list[bytes]] = {}
    for r in csv.DictReader(open(pool / "manifest.csv", encoding="utf-8", newline="")):
        images.setdefault(r["topic"], []).append(r["image_id"].encode())
    records = [json.loads(line) for line in instances.read_text(encoding="utf-8").splitlines()]
    start = time.process_time()
    n = 0
    iids = [r["instance_id"].encode() for r in records]
    for topic in topic_of:
        mine = [r["instance_id"].encode() for r in records if r["topic"] == topic]
        n += len(_keys(f"{seed}{sep}order{sep}", mine))
    for purpose in ("sentence-label", "image-label"):
        n += len(_keys(f"{seed}{sep}{purpose}{sep}", iids))
    for r in records:
        iid, topic = r["instance_id"], r["topic"]
        head = f"{seed}{sep}{{}}{sep}{iid}{sep}"
        n += len(_keys(head.format("pos-image"), images[topic]))
        n += len(_keys(head.format("first-image"), [i.encode() for i in r["ref_image_ids"]]))
        n += len(_keys(head.format("image-order"), [i.encode() for i in r["ref_image_ids"][1:]]))
        n += len(_keys(head.format("ref-sentence"), topic_of[topic]))
        n += len(_keys(head.format("neg-topic"), [t.encode() for t in topic_of if t != topic]))
        for nt in r["neg_topics"]:
            n += len(_keys(head.format("neg-sentence"), topic_of[nt]))
            n += len(_keys(head.format("neg-image"), images[nt]))
    return n, time.process_time() - start


if __name__ == "__main__":
    if sys.argv[1] == "--keys":
        count, seconds = sampler_keys(*(Path(a) for a in sys.argv[2:5]))
        print(json.dumps({"keys": count, "cpu_s": seconds}))
    elif sys.argv[1] == "--phases":
        spent: dict[str, float] = {}
        main(*(Path(a) for a in sys.argv[2:6]), phases=spent)
        print(json.dumps({**spent, "total": _cpu()}))
    else:
        main(*(Path(a) for a in sys.argv[1:5]))
