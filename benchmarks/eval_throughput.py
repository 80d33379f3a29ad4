"""Evaluator throughput: the naive loop vs. the ``hf`` backend, same model, same prompts, one run.

Naive loop (what harnesses without batching do): one ``processor(text, images)`` call
and one ``generate`` per prompt, so every image is preprocessed again for every prompt
that shows it. Ours: ``HFBackend.generate`` (per-image preprocessing cache, length-
sorted left-padded batches). Both decode greedily with the same ``max_new_tokens``.

    python benchmarks/eval_throughput.py                  # builds a tiny LLaVA and a 1-language release
    python benchmarks/eval_throughput.py --data REL --model MODEL_DIR --device cuda

Prints prompts/s per method and task, the speed-up, and how many responses agree.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))


def build_release(tmp: Path, language: str) -> Path:
    from mvlsib.builder.ingest import ingest
    from mvlsib.release.publish import publish
    from mvlsib.builder.sample import sample

    sib = REPO.parent / "shared" / "sib-200"
    ingest(tmp / "work", sib=sib, languages=language, progress=False)
    sample(tmp / "work", seed=0, pool=REPO / "src/mvlsib/data/image_pool", progress=False)
    publish(tmp / "work", tmp / "rel", REPO / "src/mvlsib/data/image_pool", progress=False)
    return tmp / "rel"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="release folder (default: build one for --language in a temp folder)")
    ap.add_argument("--model", help="model folder (default: build the tiny random LLaVA)")
    ap.add_argument("--language", default="eng_Latn")
    ap.add_argument("--limit", type=int, default=16, help="instances per task x k")
    ap.add_argument("--tasks", default="i2s,s2i,t2s,s2t")
    ap.add_argument("--k", default="1,3")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-new-tokens", type=int, default=4)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--repeats", type=int, default=2, help="rounds; the best time per method and task counts")
    args = ap.parse_args()

    import torch

    from mvlsib.release_format import mvl_sib
    from mvlsib.evaluation.backends import Request
    from mvlsib.evaluation.backends.hf import HFBackend, _hf_content
    from mvlsib.evaluation.prompts import prompt_for_example
    from mvlsib.evaluation.runner import resolve_tasks_ks
    from mvlsib.testing.tiny_llava import build_tiny_llava, sib_sentences

    tmp = Path(tempfile.mkdtemp(prefix="mvlsib-bench-"))
    data = Path(args.data) if args.data else build_release(tmp, args.language)
    model = args.model or str(build_tiny_llava(tmp / "tiny", sib_sentences(REPO.parent / "shared" / "sib-200",
                                                                         [args.language]), letter_scale=3.0))
    images = mvl_sib.load_images(data)
    rows = mvl_sib.load_rows(args.language, data)[: args.limit]
    pairs = resolve_tasks_ks(args.tasks.split(","), [int(k) for k in args.k.split(",")])
    requests, tasks = [], []
    for task, k in pairs:
        for ex in mvl_sib.build_examples(rows, images, task, k):
            p = prompt_for_example(ex)
            requests.append(Request(f"{task}|{k}|{ex['instance_id']}", tuple(p.messages()), p.image_ids))
            tasks.append(task)

    backend = HFBackend(model, batch_size=args.batch_size, device=args.device, dtype=args.dtype,
                        max_new_tokens=args.max_new_tokens)
    backend.set_images(images)
    proc, net, tok = backend.processor, backend.model, backend.tokenizer

    def naive_one(req: Request) -> str:
        text = proc.apply_chat_template(_hf_content(req.messages), add_generation_prompt=True, tokenize=False)
        kwargs = {"text": [text], "return_tensors": "pt"}
        if req.image_ids:
            kwargs["images"] = [images[i] for i in req.image_ids]
        inputs = proc(**kwargs)
        inputs = {k: (v.to(args.device, dtype=net.dtype) if torch.is_floating_point(v) else v.to(args.device))
                  for k, v in inputs.items()}
        with torch.inference_mode():
            out = net.generate(**inputs, max_new_tokens=args.max_new_tokens, do_sample=False, num_beams=1,
                               pad_token_id=tok.pad_token_id)
        return tok.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)

    naive_one(requests[0])  # warm-up, both ways
    backend.generate(requests[:2])

    # Best of --repeats per method and task (the machine may be shared); every round of ours
    # starts with an empty image cache, so preprocessing is paid in each round as in a real run.
    naive_t: dict[str, tuple[int, float]] = {}
    ours_t: dict[str, tuple[int, float]] = {}
    for _ in range(args.repeats):
        backend._cache.clear()
        backend.stats["images_preprocessed"] = 0
        naive_out, ours_out = [], []
        for task in dict.fromkeys(tasks):
            reqs = [r for r, t in zip(requests, tasks) if t == task]
            t0 = time.perf_counter()
            naive_out += [naive_one(r) for r in reqs]
            t1 = time.perf_counter()
            ours_out += backend.generate(reqs)
            t2 = time.perf_counter()
            naive_t[task] = (len(reqs), min(t1 - t0, naive_t.get(task, (0, float("inf")))[1]))
            ours_t[task] = (len(reqs), min(t2 - t1, ours_t.get(task, (0, float("inf")))[1]))

    print(f"model {model} ({type(net).__name__}, {backend.dtype}, {backend.device}); "
          f"torch threads {torch.get_num_threads()}; batch size {args.batch_size}; "
          f"max_new_tokens {args.max_new_tokens}; {len(requests)} prompts ({args.language}, k {args.k}); "
          f"best of {args.repeats}")
    print(f"{'task':<6} {'prompts':>7} {'naive p/s':>10} {'ours p/s':>10} {'ratio':>7}")
    for task in naive_t:
        n, tn = naive_t[task]
        _, to = ours_t[task]
        print(f"{task:<6} {n:>7} {n / tn:>10.1f} {n / to:>10.1f} {tn / to:>6.1f}x")
    n = len(requests)
    tn = sum(t for _, t in naive_t.values())
    to = sum(t for _, t in ours_t.values())
    print(f"{'all':<6} {n:>7} {n / tn:>10.1f} {n / to:>10.1f} {tn / to:>6.1f}x")
    agree = sum(a == b for a, b in zip(naive_out, ours_out))
    print(f"images preprocessed: ours {backend.stats['images_preprocessed']}, naive "
          f"{sum(len(r.image_ids) for r in requests)}; identical responses {agree}/{n}")


if __name__ == "__main__":
    main()
