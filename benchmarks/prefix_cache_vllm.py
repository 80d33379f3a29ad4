"""The prefix cache measured on a real engine: how much of a run's prefill vLLM takes from its cache in
``--order prefix`` and ``--order canonical``, at several cache sizes, beside the ceiling (an unbounded cache).

    MVLSIB_VLLM_PYTHON=.nox/vllm-engine/bin/python PYTHONPATH=src:tests \\
        .nox/eval/bin/python benchmarks/prefix_cache_vllm.py [--release DIR] [--languages 8 codes] [--limit 12]
        [--cache-fractions 0.01,0.05,0.2] [--concurrency 1] [--rounds 1]

The model is the tiny random-weight Qwen2-VL of tests/tiny_models (widened to a head dimension vLLM's CPU
attention takes, its tokenizer trained on the selected languages' sentences) with the real Qwen2-VL
checkpoints' pixel budget (``min_pixels`` 3136, ``max_pixels`` 12845056 in Qwen/Qwen2-VL-7B-Instruct's
preprocessor_config.json), so a release image (640x480) is resized to 644x476 and becomes 23 x 17 = 391
image tokens: a real model's image, on a model small enough for a CPU. Answers are irrelevant here (one
token is generated); what is measured is which prompt tokens the engine finds in its cache.

Each selection is sent by the evaluator itself (``mvlsib-eval run --backend openai``), once per order and
cache size, against a server whose cache holds that many tokens (``--num-gpu-blocks-override``, blocks of
32 tokens) and whose cache is emptied before each run (``/reset_prefix_cache``, the engine's dev mode).
Hits and queries are vLLM's own counters (``vllm:prefix_cache_hits_total``, ``..._queries_total``, in
tokens, read from ``/metrics`` before and after). The ceiling is the same run with a cache larger than the
whole run: every block shared with an earlier prompt is found. Both orders' predictions files are checked
to be byte-identical (the order must not change results).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for _path in (REPO / "src", REPO / "tests"):
    sys.path.insert(0, str(_path))

# Eight languages of eight scripts and families (each with a SIB-200 config in the release).
LANGUAGES = "eng_Latn,fra_Latn,rus_Cyrl,arb_Arab,hin_Deva,zho_Hans,swh_Latn,jpn_Jpan"
# Qwen/Qwen2-VL-7B-Instruct preprocessor_config.json.
REAL_MIN_PIXELS = 3136
REAL_MAX_PIXELS = 12845056
BLOCK = 32  # tokens per KV block (tests/support/vllm_servers.py: serve_args)
# Bytes of KV cache per token for the wide tiny Qwen2-VL (2 layers x 1 KV head x head dim 64 x K and V x
# float32), used to size the engine's memory for the largest cache.
KV_BYTES_PER_TOKEN = 2 * 1 * 64 * 2 * 4
MODEL_NAME = "qwen2_vl"
# The longest prompt (i2s at k = 5: 5 images of 391 tokens and their sentences) fits; the engine refuses a
# cache smaller than one prompt of this length, so no cache here is smaller.
MAX_MODEL_LEN = 3072
MIN_BLOCKS = MAX_MODEL_LEN // BLOCK


def build_release(sib: Path, tmp: Path) -> Path:
    from mvlsib.pipeline import build

    build(str(sib), tmp / "release", workdir=tmp / "work", progress=False)
    return tmp / "release"


def build_model(sib: Path, languages: list[str], out: Path) -> Path:
    """The wide tiny Qwen2-VL with the real checkpoints' pixel budget."""
    from tiny_models.families import build_family
    from tiny_models.llava import sib_sentences

    folder = build_family(MODEL_NAME, out, sib_sentences(sib, languages, limit=150), wide=True)
    for path in folder.glob("*processor_config.json"):
        config = json.loads(path.read_text("utf-8"))
        path.write_text(json.dumps(real_pixel_budget(config), indent=2) + "\n", encoding="utf-8")
    return folder


def real_pixel_budget(config):
    """The processor settings with the real checkpoints' pixel budget, wherever they hold one (transformers
    saves the image and video processors nested in processor_config.json, with the budget as ``size``)."""
    if isinstance(config, dict):
        config = {key: real_pixel_budget(value) for key, value in config.items()}
        if {"shortest_edge", "longest_edge"} <= set(config.get("size") or {}):
            config["size"] = {"shortest_edge": REAL_MIN_PIXELS, "longest_edge": REAL_MAX_PIXELS}
        for key, value in (("min_pixels", REAL_MIN_PIXELS), ("max_pixels", REAL_MAX_PIXELS)):
            if key in config:
                config[key] = value
    return config


def counters(server) -> tuple[float, float]:
    """(hits, queries) in tokens, summed over the engine's label sets."""
    with urllib.request.urlopen(f"{server.root}/metrics", timeout=30) as resp:
        text = resp.read().decode("utf-8")
    found = {"hits": 0.0, "queries": 0.0}
    for line in text.splitlines():
        match = re.match(r"vllm:prefix_cache_(hits|queries)_total(?:\{[^}]*\})? ([0-9.eE+-]+)$", line)
        if match:
            found[match.group(1)] += float(match.group(2))
    return found["hits"], found["queries"]


def reset_cache(server) -> None:
    for _ in range(60):
        req = urllib.request.Request(f"{server.root}/reset_prefix_cache", data=b"", method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = resp.read().decode("utf-8").strip()
        if not body or json.loads(body).get("success", True):
            return
        time.sleep(1)
    raise RuntimeError("the engine did not empty its prefix cache within 60 s")


def send(server, release: Path, args, order: str, out: Path) -> tuple[float, float, float]:
    """Run the evaluator once against ``server``; its (hits, queries, seconds)."""
    reset_cache(server)
    hits0, queries0 = counters(server)
    started = time.monotonic()
    cmd = [
        str(Path(sys.executable).parent / "mvlsib-eval"), "run", "--backend", "openai",
        "--base-url", server.base_url, "--model", MODEL_NAME, "--release", str(release),
        "--languages", args.languages, "--tasks", args.tasks, "--k", args.k, "--limit", str(args.limit),
        "--order", order, "--concurrency", str(args.concurrency), "--max-new-tokens", "1",
        "--no-progress", "--out", str(out),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"the evaluator failed ({done.returncode}):\n{done.stderr[-3000:]}")
    seconds = time.monotonic() - started
    hits1, queries1 = counters(server)
    return hits1 - hits0, queries1 - queries0, seconds


def serve(model: Path, tmp: Path, blocks: int, label: str, engine: str):
    from support.vllm_servers import launch

    space_gib = max(1, math.ceil(blocks * BLOCK * KV_BYTES_PER_TOKEN * 1.25 / 2**30))
    return launch(
        MODEL_NAME,
        model,
        tmp / f"vllm-{label}.log",
        python=engine,
        stats=True,
        extra=(
            "--enable-prefix-caching",
            "--num-gpu-blocks-override",
            str(blocks),
            "--max-model-len",  # after serve_args' own: the later flag wins
            str(MAX_MODEL_LEN),
        ),
        env={"VLLM_SERVER_DEV_MODE": "1", "VLLM_CPU_KVCACHE_SPACE": str(space_gib)},
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--release", type=Path, help="a release folder (default: build one from --sib)")
    ap.add_argument("--sib", type=Path, default=REPO.parent / "shared" / "sib-200")
    ap.add_argument("--languages", default=LANGUAGES)
    ap.add_argument("--tasks", default="i2s,s2i,t2s,s2t")
    ap.add_argument("--k", default="1,3,5")
    ap.add_argument("--limit", type=int, default=12, help="instances per language (the same in every language)")
    ap.add_argument(
        "--cache-fractions", default="0.01,0.05,0.2", help="cache sizes, as fractions of the run's prompt tokens"
    )
    ap.add_argument("--concurrency", type=int, default=1, help="requests in flight (1: the model's one at a time)")
    ap.add_argument("--rounds", type=int, default=1, help="runs of each cell; the median is shown")
    ap.add_argument("--engine-python", default=os.environ.get("MVLSIB_VLLM_PYTHON"))
    ap.add_argument("--model-dir", type=Path, help="reuse a model folder built by an earlier run (--keep)")
    ap.add_argument("--keep", type=Path, help="keep the model and runs in this folder")
    args = ap.parse_args(argv)
    if not args.engine_python or not Path(args.engine_python).exists():
        ap.error("give the vLLM engine's python (--engine-python or MVLSIB_VLLM_PYTHON): `nox -s vllm` makes one")
    languages = args.languages.split(",")
    if len(languages) < 8:
        print(f"note: {len(languages)} languages; the issue's measurement asks for at least 8", file=sys.stderr)
    fractions = [float(x) for x in args.cache_fractions.split(",")]

    with tempfile.TemporaryDirectory(prefix="prefix-vllm-") as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        release = args.release or build_release(args.sib, tmp)
        model = args.model_dir or build_model(args.sib, languages, tmp / "model")
        runs = tmp / "runs"

        def cell(server, order: str, label: str, rnd: int):
            return send(server, release, args, order, runs / f"{label}-{order}-{rnd}")

        # The ceiling first: its queries are the run's prompt tokens, which size the other caches.
        results: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        big_blocks = 200_000  # 6.4 M tokens; checked below to exceed the run
        server = serve(model, tmp, big_blocks, "ceiling", args.engine_python)
        try:
            per_image = measure_image_tokens(server, release)
            for rnd in range(args.rounds):
                for order in ("prefix", "canonical"):
                    results.setdefault(("ceiling", order), []).append(cell(server, order, "ceiling", rnd))
        finally:
            server.stop()
        total = results[("ceiling", "prefix")][0][1]
        if total >= big_blocks * BLOCK:
            raise RuntimeError(f"the run has {total:,.0f} prompt tokens: more than the 'unbounded' cache holds")
        sizes = {f"{f:g}": max(MIN_BLOCKS, math.ceil(f * total / BLOCK)) for f in fractions}
        for label, blocks in sizes.items():
            server = serve(model, tmp, blocks, label, args.engine_python)
            try:
                for rnd in range(args.rounds):
                    for order in ("prefix", "canonical"):
                        results.setdefault((label, order), []).append(cell(server, order, label, rnd))
            finally:
                server.stop()

        check_same_predictions(runs)
        report(results, sizes=sizes, total=total, per_image=per_image, args=args)
    return 0


def measure_image_tokens(server, release: Path) -> int:
    """Prompt tokens one release image adds on this server (its /tokenize, with and without the image)."""
    import base64

    import pyarrow.parquet as pq
    from support.vllm_servers import post_json

    table = pq.read_table(release / "data" / "images" / "test.parquet", columns=["image"])
    data = table.column("image")[0].as_py()["bytes"]
    url = "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")

    def count(content: list[dict]) -> int:
        body = {"model": MODEL_NAME, "messages": [{"role": "user", "content": content}], "add_generation_prompt": True}
        return len(post_json(f"{server.root}/tokenize", body)["tokens"])

    text = {"type": "text", "text": "x"}
    return count([{"type": "image_url", "image_url": {"url": url}}, text]) - count([text])


def check_same_predictions(runs: Path) -> None:
    files = sorted(runs.glob("*/predictions.jsonl"))
    first = files[0].read_bytes()
    differing = [f.parent.name for f in files if f.read_bytes() != first]
    if differing:
        raise RuntimeError(f"predictions differ from {files[0].parent.name}'s in: {', '.join(differing)}")


def report(results, *, sizes, total, per_image, args) -> None:
    languages = args.languages.split(",")

    def med(cells, i: int) -> float:
        return statistics.median(c[i] for c in cells)

    print(
        f"\n{len(languages)} languages x {args.limit} instances, tasks {args.tasks}, k {args.k}; "
        f"one image = {per_image} prompt tokens; the run: {total:,.0f} prompt tokens; "
        f"concurrency {args.concurrency}; median of {args.rounds}\n"
    )
    ceiling = {
        order: med(results[("ceiling", order)], 0) / med(results[("ceiling", order)], 1)
        for order in ("prefix", "canonical")
    }
    best = max(ceiling.values())
    print("| cache (tokens, % of the run) | order | from the cache | realised / ceiling | seconds |")
    print("|---|---|---|---|---|")
    for label, blocks in [*sizes.items(), ("ceiling", None)]:
        size = "unbounded (ceiling)" if blocks is None else f"{blocks * BLOCK:,} ({blocks * BLOCK / total:.1%})"
        for order in ("prefix", "canonical"):
            cells = results[(label, order)]
            rate = med(cells, 0) / med(cells, 1)
            print(f"| {size} | {order} | {rate:.1%} | {rate / best:.2f} | {med(cells, 2):.0f} |")
    print(
        f"\nceiling: {best:.1%} of prompt tokens (prefix {ceiling['prefix']:.1%}, canonical {ceiling['canonical']:.1%})"
    )


if __name__ == "__main__":
    sys.exit(main())
