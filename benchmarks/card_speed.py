"""What the dataset card's YAML header costs a `datasets.load_dataset` call .

    python benchmarks/card_speed.py RELEASE [RELEASE ...] [--rounds 15] [--config eng_Latn]

For each release folder (e.g. one built by the code before a change and one after), side by
side in one process, rounds interleaved: the header's size; CPU seconds of `yaml.safe_load` of
the header (what `huggingface_hub.DatasetCard.load` runs), of building `datasets`'
`DatasetInfosDict` from it, and of hashing those infos (what `datasets` does for the cache key
of every call); and of a warm `load_dataset(folder, name=config, split="test")` (cache filled
before timing). Minimum and median over ``--rounds``; a full garbage collection before each
timing, so one variant's garbage is not charged to the next.

A release of an older build:
    git archive <commit> src | tar -x -C /tmp/old && PYTHONPATH=/tmp/old/src python -m mvlsib build --sib ../shared/sib-200 --seed 0 --out /tmp/rel-old
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from pathlib import Path


def _header(folder: Path) -> str:
    text = (folder / "README.md").read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise SystemExit(f"{folder}/README.md: no YAML header")
    return text.split("\n---\n", 1)[0][4:]


def _cpu(fn) -> float:
    gc.collect()
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("releases", nargs="+", type=Path, help="release folders to compare")
    ap.add_argument("--rounds", type=int, default=15, help="timed rounds per release (min and median printed)")
    ap.add_argument("--config", default="eng_Latn", help="config loaded by load_dataset")
    args = ap.parse_args()

    import datasets
    import yaml
    from datasets.fingerprint import Hasher
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCardData

    datasets.disable_progress_bars()
    headers = {r: _header(r) for r in args.releases}
    caches = {r: tempfile.mkdtemp(prefix="card-speed-") for r in args.releases}
    for r in args.releases:  # fill each cache: only the warm call is timed
        datasets.load_dataset(str(r), name=args.config, split="test", cache_dir=caches[r])
    times: dict[Path, dict[str, list[float]]] = {
        r: {"yaml": [], "infos": [], "hash": [], "load": []} for r in args.releases
    }
    for _ in range(args.rounds):
        for r in args.releases:
            data = {}
            times[r]["yaml"].append(_cpu(lambda: data.update(card=yaml.safe_load(headers[r]))))
            times[r]["infos"].append(
                _cpu(
                    lambda: data.update(infos=DatasetInfosDict.from_dataset_card_data(DatasetCardData(**data["card"])))
                )
            )
            times[r]["hash"].append(_cpu(lambda: Hasher.hash(data["infos"])))
            times[r]["load"].append(
                _cpu(lambda: datasets.load_dataset(str(r), name=args.config, split="test", cache_dir=caches[r]))
            )
    print(f"CPU seconds, min / median of {args.rounds} rounds; load_dataset(name={args.config!r}) with a warm cache\n")
    print("| release | header | yaml.safe_load | DatasetInfosDict | hash infos | load_dataset | yaml share |")
    print("|---|---|---|---|---|---|---|")
    for r in args.releases:
        t = {k: (min(v), statistics.median(v)) for k, v in times[r].items()}
        share = t["yaml"][1] / t["load"][1] if t["load"][1] else float("nan")
        cells = " | ".join(f"{t[k][0]:.3f} / {t[k][1]:.3f}" for k in ("yaml", "infos", "hash", "load"))
        print(f"| {r} | {len(headers[r].encode()) / 1000:.1f} KB | {cells} | {share:.0%} |")


if __name__ == "__main__":
    main()
