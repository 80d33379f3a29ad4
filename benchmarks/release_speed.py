"""Release build and load speed on ../shared/sib-200 with the bundled image pool.

    python benchmarks/release_speed.py [--sib ../shared/sib-200] [--pool src/mvlsib/data/image_pool] [--repeat 3]

Prints one table:
- the full build (`mvlsib-build build`: ingest -> sample -> validate -> publish) and each stage;
- writing the release folder from a work folder: ours (arrow `take` on per-language text
  arrays, one parquet per language) vs. the naive way (a Python dict per row, one
  `pa.Table.from_pylist` per language);
- the release size;
- `datasets.load_dataset(DIR, name=<lang>)` for one language and for `images`, with a cold
  cache (fresh cache folder) and a warm one; and `mvl_sib.load_task` (pyarrow directly).
Targets: build <= 60 s, release <= 200 MB, one language loads in <= 2 s.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def _timed(fn, repeat: int = 1):
    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _naive_write(workdir: Path, out: Path) -> None:
    """The obvious way: a dict per row with texts looked up in Python, then from_pylist per language."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from mvlsib.workdir.instances import load_instances

    instances = load_instances(workdir)
    corpus = pq.read_table(workdir / "corpus.parquet", columns=["language", "index_id", "text"]).to_pylist()
    by_lang: dict[str, dict[int, str]] = {}
    for row in corpus:
        by_lang.setdefault(row["language"], {})[row["index_id"]] = row["text"]
    for lang, texts in sorted(by_lang.items()):
        rows = []
        for inst in instances:
            rows.append(
                {
                    **inst,
                    "language": lang,
                    "sentence": texts[inst["index_id"]],
                    "ref_sentences": [texts[i] for i in inst["ref_sentence_ids"]],
                    "sentence_options": [texts[i] for i in inst["sentence_option_ids"]],
                }
            )
        path = out / "data" / lang / "test.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows), path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sib", default=str(REPO.parent / "shared" / "sib-200"), help="SIB-200 folder")
    ap.add_argument("--pool", default=str(REPO / "src/mvlsib/data/image_pool"), help="image pool folder")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of the load timings (median)")
    ap.add_argument("--language", default="eng_Latn", help="language config to load")
    args = ap.parse_args()

    import datasets

    from mvlsib.pipeline import build
    from mvlsib.release.publish import publish
    from mvlsib.release_format import mvl_sib
    from mvlsib.workdir.corpus import load_corpus
    from mvlsib.workdir.instances import load_instances

    datasets.disable_progress_bars()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="release-speed-") as tmp:
        tmp = Path(tmp)
        work, out = tmp / "work", tmp / "rel"
        t_build, summary = _timed(lambda: build(args.sib, out, seed=0, workdir=work, pool=args.pool, progress=False))
        rows.append(("full build (ingest+sample+validate+publish)", f"{t_build:.1f} s", "<= 60 s"))
        for stage, sec in summary.seconds.items():
            rows.append((f"  stage {stage}", f"{sec:.1f} s", ""))
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        rows.append(("release size", f"{size / 1e6:.1f} MB ({len(summary.release.languages)} languages)", "<= 200 MB"))

        corpus, instances = load_corpus(work), load_instances(work)
        t_ours, _ = _timed(lambda: publish(corpus, instances, args.pool, tmp / "rel2", seed=0, progress=False))
        t_naive, _ = _timed(lambda: _naive_write(work, tmp / "naive"))
        rows.append(("write release folder: ours (publish)", f"{t_ours:.1f} s", ""))
        rows.append(
            (
                "write language files: naive (dict rows + from_pylist)",
                f"{t_naive:.1f} s",
                f"ours {t_naive / t_ours:.1f}x faster, and ours also writes images/card/manifest",
            )
        )
        ours_lang = sum(p.stat().st_size for p in (tmp / "rel2" / "data").rglob("*.parquet") if "images" not in p.parts)
        naive_lang = sum(p.stat().st_size for p in (tmp / "naive" / "data").rglob("*.parquet"))
        rows.append(
            (
                "language files size: ours / naive (default writer)",
                f"{ours_lang / 1e6:.1f} / {naive_lang / 1e6:.1f} MB",
                "",
            )
        )
        shutil.rmtree(tmp / "naive")

        def cold(name):
            cache = Path(tempfile.mkdtemp(dir=tmp, prefix="cache-"))
            return lambda: datasets.load_dataset(str(out), name=name, split="test", cache_dir=str(cache))

        for name in (args.language, "images"):
            t_cold, _ = _timed(cold(name), args.repeat)  # a fresh cache every repetition
            cache = str(tmp / f"warm-{name}")
            datasets.load_dataset(str(out), name=name, split="test", cache_dir=cache)
            t_warm, _ = _timed(
                lambda: datasets.load_dataset(str(out), name=name, split="test", cache_dir=cache), args.repeat
            )
            target = "<= 2 s" if name != "images" else ""
            rows.append((f"load_dataset(name={name!r}) cold cache", f"{t_cold:.2f} s", target))
            rows.append((f"load_dataset(name={name!r}) warm cache", f"{t_warm:.2f} s", ""))
        t_task, ex = _timed(lambda: mvl_sib.load_task("i2s", args.language, k=3, source=str(out)), args.repeat)
        rows.append(
            (
                f"mvl_sib.load_task('i2s', {args.language!r}, k=3) (pyarrow + 70 images)",
                f"{t_task:.2f} s",
                f"{len(ex)} examples",
            )
        )
        t_text, _ = _timed(lambda: mvl_sib.load_task("s2t", args.language, k=3, source=str(out)), args.repeat)
        rows.append((f"mvl_sib.load_task('s2t', {args.language!r}, k=3) (text only)", f"{t_text:.2f} s", ""))

    width = max(len(r[0]) for r in rows)
    vwidth = max(len(r[1]) for r in rows)
    print(f"{'measure':<{width}}  {'value':<{vwidth}}  target / note")
    print("-" * (width + vwidth + 20))
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:<{vwidth}}  {note}")


if __name__ == "__main__":
    main()
