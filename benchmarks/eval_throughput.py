"""Evaluator throughput per VLM family: the naive loop vs. the ``hf`` backend, same prompts, one run.

For each family (tiny random-weight models of ``tiny_models.families`` in tests/, or ``--model``):

- **naive**: what harnesses without batching do: per prompt one ``processor(text, images)``
  call and one ``generate`` (every image preprocessed again for every prompt);
- **no memo**: ``HFBackend`` with the image-processor memo and the feature cache off (batching only);
- **no feat**: with the image-processor memo (each prompt's image tuple preprocessed once per
  run: a tuple repeats in every language), feature cache off;
- **ours**: ``HFBackend`` as shipped: also each image's vision-tower features computed once per
  run (``hf.feature_cache.FeatureCache``, behind its self-check); the "tower" column counts the units the
  vision tower encoded (an image; a tile for Idefics3/SmolVLM; the self-check's plain runs
  included), the units shown in all (what runs without the cache), and the distinct images;
- **ours+kv**: also ``--kv-prefix`` (the prefix a batch shares computed once per run, its KV
  cache reused: the text before the first image, or through the images when every prompt of the
  batch shows the same images and no image follows the shared part, as in an i2s reference set
  sent in several languages; optional, off by default). "kv tok" is the share of prompt tokens
  taken from a reused cache, net of computing each prefix once;
- **pipeline**: what a user would write instead with transformers alone: the same
  chat messages (PIL images in place of the ids) through ``pipeline("image-text-to-text")`` with
  ``batch_size`` and the same greedy settings, ``return_full_text=False``. Its answers are compared
  with ours; where the pipeline cannot run a family the column says why.

With ``--reuse-only`` the script skips the naive loop, the pipeline and the memo and prints one
row per family for the reuse mechanisms alone, each against **plain** (the backend with the
memo, no feature cache, no KV prefix): **feat** (the feature cache), **kv** (``--kv-prefix``, no
feature cache) and **feat+kv** (both), with what each really reused and the modes ``describe()``
ends with (a family refused says why in the last column). ``--window N`` sets the text model's
sliding window of the tiny models built here (tiny Gemma 4 has 64 tokens, shorter than every
prompt, so a prefix is never reused; Gemma 4's config default is 512).

    python benchmarks/eval_throughput.py --reuse-only --families gemma4,mistral3,qwen3_5,lfm2_vl --window 1024

All render the same prompts (the backend's renderer, so images stay in place) and decode
greedily with the same settings; "agree" counts prompts where naive and every variant of ours
give the same answer. Prompts are sent in ``--order`` (default prefix, the evaluator's default),
to the backend in chunks of its preferred size as the runner does. Each figure is the median of
``--repeats`` rounds; each round builds every variant of ours afresh (empty memo and cache,
self-checks paid again), as a real run would. The script also prints the realised shared-prefix
share of the prompts in canonical and prefix order by the LRU model of ``prefix_cache.py``.

    python benchmarks/eval_throughput.py                           # every family, 2 languages
    python benchmarks/eval_throughput.py --families qwen2_vl,gemma3 --languages eng_Latn,fra_Latn,arb_Arab
    python benchmarks/eval_throughput.py --model MODEL_DIR --device cuda --data REL

Processors that insist on a video processor need torchvision, which the ``[eval]`` extra installs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests"), str(REPO / "benchmarks")]


def build_release(tmp: Path, languages: str) -> Path:
    from mvlsib.pipeline import build

    sib = REPO.parent / "shared" / "sib-200"
    pool = REPO / "src/mvlsib/data/image_pool"
    build(str(sib), tmp / "rel", workdir=tmp / "work", pool=pool, languages=languages.split(","), progress=False)
    return tmp / "rel"


def requests_for(data: Path, languages: list[str], limit: int, tasks: str, ks: str):
    from mvlsib.evaluation.backends import Request
    from mvlsib.evaluation.run.prompts import prompt_for_example
    from mvlsib.evaluation.run.runner import resolve_tasks_ks
    from mvlsib.release_format import mvl_sib

    images = mvl_sib.load_images(data)
    pairs = resolve_tasks_ks(tasks.split(","), [int(k) for k in ks.split(",")])
    out = []
    for language in languages:
        rows = mvl_sib.load_rows(language, data)[:limit]
        for task, k in pairs:
            for ex in mvl_sib.build_examples(rows, images, task, k):
                p = prompt_for_example(ex)
                out.append(Request(f"{task}|{k}|{language}|{ex['instance_id']}", tuple(p.messages()), p.image_ids))
    return out, images


def prefix_shares(requests, capacities) -> dict[str, list[float]]:
    """Realised shared-prefix fraction of ``requests`` per order and cache size, by the LRU
    prefix-cache model of ``benchmarks/prefix_cache.py`` (documented in docs/performance.md)."""
    from prefix_cache import realised_share

    from mvlsib.evaluation.run.schedule import prefix_key, prefix_order

    orders = {
        "canonical (language first)": list(requests),
        "prefix (--order prefix)": prefix_order(list(requests), messages_of=lambda r: r.messages),
    }
    out = {}
    for name, order in orders.items():
        keys = [prefix_key(r.messages) for r in order]
        out[name] = []
        for cap in capacities:
            reused, total = realised_share(keys, cap)
            out[name].append(reused / total)
    return out


# Our backend's variants, each built fresh in every round (one-off costs such as the batching and
# feature self-checks are paid once per round, as in a real run): constructor options.
VARIANTS = {
    "no memo": {"cache_images": False, "feature_cache_mb": 0},  # batching only
    "no feat": {"cache_images": True, "feature_cache_mb": 0},  # + image-processor memo
    "ours": {"cache_images": True},  # + image features once per image (as shipped)
    "ours+kv": {"cache_images": True, "kv_prefix": True},  # + KV-prefix reuse (--kv-prefix, optional)
}


def run_backend(b, requests) -> list[str]:
    """As the runner sends them: chunks of the backend's preferred size, in the given order."""
    out: list[str] = []
    for start in range(0, len(requests), b.preferred_chunk):
        out.extend(b.generate(requests[start : start + b.preferred_chunk]))
    return out


def make_backend(model: str, images, args, **options):
    """An ``HFBackend`` for ``model`` with the command line's settings, ``options`` (a variant) on top."""
    from mvlsib.evaluation.backends.hf import HFBackend

    options.setdefault("feature_cache_mb", args.feature_cache_mb)
    b = HFBackend(
        model,
        batch_size=args.batch_size,
        device=args.device,
        dtype=args.dtype,
        max_new_tokens=args.max_new_tokens,
        thinking_max_new_tokens=args.max_new_tokens,
        **options,
    )
    b.set_images(images)
    return b


def measure(model: str, requests, images, args) -> dict:
    import torch

    def backend(**options):
        return make_backend(model, images, args, **options)

    plain = backend(**VARIANTS["no memo"])  # the model the naive loop and the pipeline use: no wrapper on it
    proc, net = plain.processor, plain.model
    settings = plain.decoding(args.max_new_tokens)

    def naive_one(req) -> str:
        text = plain.batcher.chat_text(req)
        inputs = plain.batcher.call_processor([text], [[images[i] for i in req.image_ids]] if req.image_ids else None)
        inputs = {
            k: (v.to(args.device, dtype=net.dtype) if torch.is_floating_point(v) else v.to(args.device))
            if hasattr(v, "to")
            else v
            for k, v in inputs.items()
        }
        with torch.inference_mode():
            out = net.generate(**inputs, **settings)
        return plain.decode(out[0, inputs["input_ids"].shape[1] :])

    pipe, pipe_error = None, None
    try:
        from transformers import pipeline

        pipe = pipeline("image-text-to-text", model=net, processor=proc, device=args.device)
    except Exception as exc:  # a family the pipeline does not support: say so in the table
        pipe_error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:60]}"
    pipe_settings = {k: v for k, v in settings.items() if k not in ("pad_token_id",)}

    def pipeline_all(reqs) -> list[str]:
        chats = []
        for req in reqs:
            content = [
                {"type": "image", "image": images[p["image_id"]]} if p["type"] == "image" else dict(p)
                for p in req.messages[0]["content"]
            ]
            chats.append([{"role": "user", "content": content}])
        # The pipeline cannot batch prompts with and without images together: one call per kind.
        answers: list[str | None] = [None] * len(reqs)
        for has_images in (True, False):
            idx = [n for n, r in enumerate(reqs) if bool(r.image_ids) == has_images]
            if not idx:
                continue
            out = pipe(
                text=[chats[n] for n in idx],
                batch_size=args.batch_size,
                generate_kwargs=pipe_settings,
                return_full_text=False,
            )
            for n, o in zip(idx, out):
                answers[n] = (o[0] if isinstance(o, list) else o)["generated_text"]
        return answers

    naive_one(requests[0])  # warm-up (and the renderer's mode), every way
    plain.generate(requests[:2])
    backend(**VARIANTS["ours"]).generate(requests[:2])
    if pipe is not None:
        try:
            pipeline_all(requests[:2])
        except Exception as exc:
            pipe, pipe_error = None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:60]}"
    times: dict[str, list[float]] = {"naive": [], "pipeline": [], **{v: [] for v in VARIANTS}}
    answers: dict[str, list[str]] = {}
    last: dict = {}
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        answers["naive"] = [naive_one(r) for r in requests]
        times["naive"].append(time.perf_counter() - t0)
        for name, options in VARIANTS.items():
            b = backend(**options)  # a fresh memo and feature cache: paid in every round, as in a real run
            t0 = time.perf_counter()
            answers[name] = run_backend(b, requests)
            times[name].append(time.perf_counter() - t0)
            last[name] = b
        if pipe is not None:
            t4 = time.perf_counter()
            try:
                answers["pipeline"] = pipeline_all(requests)
            except Exception as exc:  # e.g. the pipeline's collate cannot pad this family's pixel tensors
                pipe, pipe_error = None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:60]}"
                continue
            times["pipeline"].append(time.perf_counter() - t4)
    med = {k: statistics.median(v) for k, v in times.items() if v}
    n = len(requests)
    pipeline_cols = (
        {
            "ours/pipeline": med["pipeline"] / med["ours"],
            "pipeline agree": sum(a == b for a, b in zip(answers["ours"], answers["pipeline"])),
        }
        if pipe is not None
        else {"pipeline error": pipe_error}
    )
    ours = last["ours"]
    ours_names = ["naive", *VARIANTS]
    return {
        **pipeline_cols,
        "model_class": type(net).__name__,
        "prompts": n,
        **{name: n / med[name] for name in ours_names},
        "ours/naive": med["naive"] / med["ours"],
        "memo": med["no memo"] / med["no feat"],
        "feat": med["no feat"] / med["ours"],
        "kv": med["ours"] / med["ours+kv"],
        "kv mode": last["ours+kv"].describe()["kv_prefix"].split(" (")[0],
        "kv img mode": last["ours+kv"].describe().get("kv_prefix_images", "-").split(" (")[0],
        # prompt tokens taken from a reused prefix cache, net of computing each prefix once
        "kv share": (last["ours+kv"].stats.prefix_tokens_reused - last["ours+kv"].stats.prefix_tokens_computed)
        / max(1, last["ours+kv"].stats.prompt_tokens),
        "agree": sum(len(set(row)) == 1 for row in zip(*(answers[name] for name in ours_names))),
        "preprocessed": ours.stats.images_preprocessed,
        "naive preprocessed": sum(len(r.image_ids) for r in requests),
        # vision-tower units (an image; a tile for Idefics3/SmolVLM): computed with the cache (its
        # self-check's plain runs included) vs. every unit shown; distinct images for reference
        "tower": ours.stats.image_features_computed + ours.stats.image_features_plain,
        "tower without": ours.stats.image_features_computed + ours.stats.image_features_reused
        if ours.features.cache is not None and ours.features.cache.enabled
        else None,
        "distinct images": len({i for r in requests for i in r.image_ids}),
        "feature cache": ours.features.mode.split(" (")[0],
        "rendering": ours.renderer.mode,
    }


# --reuse-only: plain (memo on, nothing reused) against each reuse mechanism alone and both.
REUSE_VARIANTS = {
    "plain": {"feature_cache_mb": 0},
    "feat": {},
    "kv": {"feature_cache_mb": 0, "kv_prefix": True},
    "feat+kv": {"kv_prefix": True},
}


def measure_reuse(model: str, requests, images, args) -> dict:
    """Median time of each of REUSE_VARIANTS over ``--repeats`` rounds (each backend built afresh, its
    self-checks paid again), the answers' agreement and what was reused in the last round."""

    def backend(**options):
        return make_backend(model, images, args, **options)

    backend(**REUSE_VARIANTS["plain"]).generate(requests[:2])  # warm-up
    times: dict[str, list[float]] = {v: [] for v in REUSE_VARIANTS}
    answers: dict[str, list[str]] = {}
    last: dict = {}
    for _ in range(args.repeats):
        for name, options in REUSE_VARIANTS.items():
            b = backend(**options)
            t0 = time.perf_counter()
            answers[name] = run_backend(b, requests)
            times[name].append(time.perf_counter() - t0)
            last[name] = b
    med = {k: statistics.median(v) for k, v in times.items()}
    feat, kv = last["feat"], last["feat+kv"]
    stats = kv.stats
    described = kv.describe()
    return {
        "prompts": len(requests),
        **{name: len(requests) / med[name] for name in REUSE_VARIANTS},
        **{f"{name}/plain": med["plain"] / med[name] for name in REUSE_VARIANTS if name != "plain"},
        "agree": sum(len(set(row)) == 1 for row in zip(*(answers[name] for name in REUSE_VARIANTS))),
        "tower": feat.stats.image_features_computed + feat.stats.image_features_plain
        if feat.features.cache is not None
        else "-",
        "tower without": feat.stats.image_features_computed + feat.stats.image_features_reused
        if feat.features.cache is not None and feat.features.cache.enabled
        else "-",
        "kv share": (stats.prefix_tokens_reused - stats.prefix_tokens_computed) / max(1, stats.prompt_tokens),
        "kv batches": stats.kv_prefix_batches,
        "feature cache": feat.describe()["image_feature_cache"]["mode"],
        "kv mode": described["kv_prefix"],
        "kv img mode": described["kv_prefix_images"],
    }


def print_reuse(models: dict[str, str], requests, images, args) -> None:
    head = (
        f"{'family':<10} {'plain p/s':>9} {'feat p/s':>9} {'kv p/s':>8} {'feat+kv':>8} {'feat':>6} {'kv':>6} "
        f"{'both':>6} {'tower (all)':>13} {'kv tok':>6} {'kv bat':>6} {'agree':>7}  feature cache; kv prefix (text; images)"
    )
    print(head)
    print("-" * len(head))
    for name, model in models.items():
        r = measure_reuse(model, requests, images, args)
        print(
            f"{name:<10} {r['plain']:>9.1f} {r['feat']:>9.1f} {r['kv']:>8.1f} {r['feat+kv']:>8.1f} "
            f"{r['feat/plain']:>5.2f}x {r['kv/plain']:>5.2f}x {r['feat+kv/plain']:>5.2f}x "
            f"{r['tower']:>5} ({r['tower without']:>4}) {100 * r['kv share']:>5.1f}% {r['kv batches']:>6} "
            f"{r['agree']:>3}/{r['prompts']:<3}  {r['feature cache']}; {r['kv mode']}; {r['kv img mode']}",
            flush=True,
        )


def widen_window(model_dir: str, window: int) -> None:
    """Set the text model's sliding window of a tiny model built here (config.json) to ``window``."""
    import json

    path = Path(model_dir) / "config.json"
    config = json.loads(path.read_text())
    for part in (config.get("text_config"), config):
        if isinstance(part, dict) and part.get("sliding_window"):
            part["sliding_window"] = window
    path.write_text(json.dumps(config, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="release folder (default: build one for --languages in a temp folder)")
    ap.add_argument("--model", help="one model folder or Hub id instead of the tiny families")
    ap.add_argument("--families", default="", help="comma-separated tiny families (default: every chat family)")
    ap.add_argument("--languages", default="eng_Latn,fra_Latn")
    ap.add_argument("--limit", type=int, default=6, help="instances per language")
    ap.add_argument("--tasks", default="i2s,s2i,t2s,s2t")
    ap.add_argument("--k", default="1,3")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1: stable on a shared CPU)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds; the median per method counts")
    ap.add_argument(
        "--order",
        choices=("prefix", "canonical"),
        default="prefix",
        help="order the prompts are sent in (the evaluator's --order; prefix is its default)",
    )
    ap.add_argument("--feature-cache-mb", type=int, default=1024, help="the hf backend's --feature-cache-mb for ours")
    ap.add_argument(
        "--reuse-only",
        action="store_true",
        help="only plain vs feature cache vs KV prefix vs both (no naive loop, no pipeline)",
    )
    ap.add_argument(
        "--window", type=int, help="set the sliding window of the tiny models built here to this many tokens"
    )
    args = ap.parse_args()

    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a "Loading weights" bar per model would break up the table

    from tiny_models.families import build_family, family, family_names, missing
    from tiny_models.llava import sib_sentences

    torch.set_num_threads(args.threads)

    languages = args.languages.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="mvlsib-bench-"))
    data = Path(args.data) if args.data else build_release(tmp, ",".join(languages))
    requests, images = requests_for(data, languages, args.limit, args.tasks, args.k)
    canonical = requests
    if args.order == "prefix":
        from mvlsib.evaluation.run.schedule import prefix_order

        requests = prefix_order(list(requests), messages_of=lambda r: r.messages)
    if args.model:
        models = {args.model: args.model}
    else:
        names = (
            args.families.split(",")
            if args.families
            else [
                n
                for n in family_names()
                if getattr(family(n), "KIND", "") == "generative"
                and getattr(family(n), "CHAT_TEMPLATE", None) is not None
                and "thinking" not in n
                and not missing(n)  # e.g. torchvision, absent from the main environment
            ]
        )
        texts = sib_sentences(REPO.parent / "shared" / "sib-200", languages, limit=100)
        models = {n: str(build_family(n, tmp / n, texts)) for n in names}
        if args.window:
            for model in models.values():
                widen_window(model, args.window)
    print(
        f"{len(requests)} prompts ({', '.join(languages)}; {args.limit} instances each; tasks {args.tasks}; "
        f"k {args.k}); batch size {args.batch_size}; max_new_tokens {args.max_new_tokens}; "
        f"torch threads {args.threads}; {args.device}; median of {args.repeats}"
    )
    capacities = (16000.0, float("inf"))
    print(
        "realised shared-prefix share of these prompts (benchmarks/prefix_cache.py's LRU model: "
        "576 tokens an image, UTF-8 bytes / 3 a text unit), cache "
        + " / ".join("inf" if c == float("inf") else f"{int(c):,}" for c in capacities)
        + " tokens:"
    )
    for name, shares in prefix_shares(canonical, capacities).items():
        print(f"  {name:<28} " + " / ".join(f"{100 * x:.1f} %" for x in shares))
    print(f"order sent: {args.order}")
    if args.reuse_only:
        print_reuse(models, requests, images, args)
        return
    head = (
        f"{'family':<16} {'naive p/s':>9} {'no memo':>8} {'no feat':>8} {'ours p/s':>8} {'ours/naive':>10} "
        f"{'memo':>6} {'feat':>6} {'+kv p/s':>8} {'kv':>6} {'kv tok':>6} {'tower (all; distinct img)':>26} {'agree':>7} "
        f"{'ours/pipeline':>13} {'=pipe':>7} features, kv, rendering"
    )
    print(head)
    print("-" * len(head))
    for name, model in models.items():
        r = measure(model, requests, images, args)
        tower = (
            f"{r['tower']} ({r['tower without'] if r['tower without'] is not None else '-'}; {r['distinct images']})"
        )
        print(
            f"{name:<16} {r['naive']:>9.1f} {r['no memo']:>8.1f} {r['no feat']:>8.1f} {r['ours']:>8.1f} "
            f"{r['ours/naive']:>9.2f}x {r['memo']:>5.2f}x {r['feat']:>5.2f}x {r['ours+kv']:>8.1f} {r['kv']:>5.2f}x {100 * r['kv share']:>5.1f}% "
            f"{tower:>26} {r['agree']:>3}/{r['prompts']:<3} {pipe_cells(r)} {r['feature cache']}, {r['kv mode']} "
            f"(through images: {r['kv img mode']}), "
            f"{r['rendering']}",
            flush=True,
        )


def pipe_cells(r: dict) -> str:
    if "pipeline error" in r:
        return f"{'n/a':>13} {'':>7} (pipeline: {r['pipeline error']})"
    return f"{r['ours/pipeline']:>12.2f}x {r['pipeline agree']:>3}/{r['prompts']:<3}"


if __name__ == "__main__":
    main()
