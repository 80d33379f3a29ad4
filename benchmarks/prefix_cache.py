"""How much prefill a server's prefix cache saves on the full benchmark, in today's order and in
the evaluator's prefix order. No model needed.

    python benchmarks/prefix_cache.py [--release DIR] [--sib ../shared/sib-200] [--pool image_pool]
                                      [--cache-tokens 16000,110000,inf] [--image-tokens 576]
                                      [--bytes-per-token 3] [--languages all|N]

Without ``--release`` it builds one (ingest -> sample -> publish, all languages of SIB-200)
in a temporary folder first. Then it makes every prompt of ``mvlsib-eval run`` with the
defaults (all tasks, k = 1, 3, 5, all languages) with the evaluator's own prompt builder.

The model (documented in docs/performance.md):

- **Tokens.** A prompt is the evaluator's ``schedule.prefix_key``: its text in reading order with
  each image as one marker. It is cut into units: every image is one unit, text is cut after
  every newline. A unit costs ``--image-tokens`` tokens if it is an image (576: LLaVA-1.5 at
  336 px) and ceil(UTF-8 bytes / ``--bytes-per-token``) if it is text (a tokenizer-free proxy;
  multilingual BPE vocabularies average about 3 bytes a token over SIB-200's scripts).
  The chat template's own tokens are left out (the same few in every prompt).
- **Cache.** A radix (prefix-tree) cache of units as in SGLang, or vLLM's automatic prefix caching
  with one block per unit: a prompt reuses the longest prefix of whole units that is still
  cached; then all its units are cached. Capacity is in tokens; when it is exceeded the least
  recently used leaves are evicted first (a prefix is never evicted before its extensions).
  Prompts are sent one at a time in the given order.
- **Realised** = the tokens of each prompt's reused prefix, summed, over all prefill tokens.
  ``inf`` capacity gives the ceiling: every prefix shared with an earlier prompt.

The two orders are the canonical one (language, task, k, instance: what the evaluator sent
before the prefix order existed) and ``--order prefix`` (sorted by ``prefix_key``, exactly the order of
``schedule.prefix_order``: units are ranked by their text, and a unit never is a proper prefix of
another, so sorting unit ranks sorts the keys).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections import OrderedDict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def build_release(sib: Path, pool: Path, tmp: Path) -> Path:
    from mvlsib.pipeline import build

    build(str(sib), tmp / "rel", workdir=tmp / "work", pool=pool, progress=False)
    return tmp / "rel"


def _units(key: str) -> list[str]:
    from mvlsib.evaluation.run.schedule import _IMAGE_CLOSE, _IMAGE_OPEN

    out: list[str] = []
    for line in key.splitlines(keepends=True):
        while _IMAGE_OPEN in line:
            head, rest = line.split(_IMAGE_OPEN, 1)
            image, line = rest.split(_IMAGE_CLOSE, 1)
            if head:
                out.append(head)
            out.append(_IMAGE_OPEN + image + _IMAGE_CLOSE)
        if line:
            out.append(line)
    return out


def prompts(release: Path, languages: int | None):
    """(canonical list of unit-id tuples, unit texts): every prompt of a default full run."""
    from mvlsib.evaluation._compat import CROSS_MODAL
    from mvlsib.evaluation.run.prompts import prompt_for_example
    from mvlsib.evaluation.run.runner import resolve_tasks_ks
    from mvlsib.evaluation.run.schedule import prefix_key
    from mvlsib.release_format import mvl_sib as loader

    pairs = resolve_tasks_ks(("i2s", "s2i", "t2s", "s2t"), (1, 3, 5))
    langs = loader.languages(str(release))[:languages]
    image_ids = loader.load_images(str(release))  # the ids are what matters here
    ids = {i: i for i in image_ids}
    unit_id: dict[str, int] = {}
    out = []
    for language in langs:
        rows = loader.load_rows(language, str(release))
        for task, k in pairs:
            for ex in loader.build_examples(rows, ids if task in CROSS_MODAL else None, task, k):
                key = prefix_key(prompt_for_example(ex).messages())
                out.append(tuple(unit_id.setdefault(u, len(unit_id)) for u in _units(key)))
    texts = [""] * len(unit_id)
    for u, n in unit_id.items():
        texts[n] = u
    return out, texts, len(langs)


def unit_tokens(texts: list[str], image_tokens: int = 576, bytes_per_token: float = 3.0) -> list[int]:
    """The token cost of each unit (see the module doc): an image ``image_tokens``, text ceil(UTF-8 bytes / ``bytes_per_token``)."""
    from mvlsib.evaluation.run.schedule import _IMAGE_OPEN

    return [
        image_tokens if t.startswith(_IMAGE_OPEN) else math.ceil(len(t.encode("utf-8")) / bytes_per_token)
        for t in texts
    ]


def realised_share(
    keys: list[str], capacity: float, image_tokens: int = 576, bytes_per_token: float = 3.0
) -> tuple[int, int]:
    """(reused tokens, all tokens) of prompts given by their ``schedule.prefix_key``, sent in the given order."""
    unit_id: dict[str, int] = {}
    order = [tuple(unit_id.setdefault(u, len(unit_id)) for u in _units(k)) for k in keys]
    texts = sorted(unit_id, key=unit_id.__getitem__)
    return simulate(order, unit_tokens(texts, image_tokens, bytes_per_token), capacity)


def simulate(order, weight, capacity: float) -> tuple[int, int]:
    """(reused tokens, all tokens) of sending ``order`` through an LRU radix cache of ``capacity`` tokens."""
    cache: OrderedDict[int, int] = OrderedDict()
    size = reused = total = 0
    move = cache.move_to_end
    for units in order:
        h = 0
        hit = True
        path = []
        for u in units:
            h = hash((h, u))
            w = weight[u]
            total += w
            if hit and h in cache:
                reused += w
            else:
                hit = False
            path.append((h, w))
        # Leaf first, root last: a prefix is always more recent than its extensions.
        for h, w in reversed(path):
            if h in cache:
                move(h)
            else:
                cache[h] = w
                size += w
        while size > capacity:
            _, w = cache.popitem(last=False)
            size -= w
    return reused, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", type=Path, default=None)
    ap.add_argument("--sib", type=Path, default=REPO.parent / "shared" / "sib-200")
    ap.add_argument("--pool", type=Path, default=REPO / "src" / "mvlsib" / "data" / "image_pool")
    ap.add_argument("--cache-tokens", default="16000,110000,inf")
    ap.add_argument("--image-tokens", type=int, default=576)
    ap.add_argument("--bytes-per-token", type=float, default=3.0)
    ap.add_argument("--languages", default="all", help="all, or the first N languages")
    args = ap.parse_args()
    n_lang = None if args.languages == "all" else int(args.languages)

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        release = args.release or build_release(args.sib, args.pool, Path(tmp))
        t1 = time.perf_counter()
        canonical, texts, n_langs = prompts(release, n_lang)
    t2 = time.perf_counter()
    from mvlsib.evaluation.run.schedule import _IMAGE_OPEN

    weight = unit_tokens(texts, args.image_tokens, args.bytes_per_token)
    rank = {n: r for r, n in enumerate(sorted(range(len(texts)), key=texts.__getitem__))}
    ranked = [tuple(rank[u] for u in p) for p in canonical]
    del canonical
    weight = [weight[n] for n in sorted(range(len(texts)), key=texts.__getitem__)]
    orders = {
        "canonical (language first)": ranked,
        "prefix (schedule.prefix_order)": [ranked[n] for n in sorted(range(len(ranked)), key=ranked.__getitem__)],
    }
    t3 = time.perf_counter()
    n_images = sum(1 for t in texts if t.startswith(_IMAGE_OPEN))
    print(
        f"release: {release if args.release else 'built from ' + str(args.sib)} ({t1 - t0:.0f} s); "
        f"{len(ranked):,} prompts in {n_langs} languages, {len(texts):,} distinct units ({n_images} images); "
        f"prompts made in {t2 - t1:.0f} s, sorted in {t3 - t2:.0f} s"
    )
    print(f"tokens: image = {args.image_tokens}, text = ceil(UTF-8 bytes / {args.bytes_per_token:g})")
    print()
    caps = [float(c) for c in args.cache_tokens.split(",")]
    header = "| order | " + " | ".join(f"cache {'∞' if math.isinf(c) else f'{int(c):,}'} tokens" for c in caps) + " |"
    print(header)
    print("|" + "---|" * (len(caps) + 1))
    total_tokens = None
    for name, order in orders.items():
        cells = []
        for cap in caps:
            t = time.perf_counter()
            reused, total = simulate(order, weight, cap)
            total_tokens = total
            cells.append(f"{100 * reused / total:.1f} % ({time.perf_counter() - t:.0f} s)")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()
    print(
        f"prefill tokens in all: {total_tokens:,}; realised share = reused prefix tokens / all prefill tokens "
        "(seconds: simulation time)"
    )


if __name__ == "__main__":
    main()
