"""Throughput of verify-images with the tiny models: ours vs. the naive loop, in one run.

    PYTHONPATH=src python benchmarks/verify_images_speed.py [--pool src/mvlsib/data/image_pool] [--threads 1,2] [--batch-size 16]

Builds a random-weight tiny LLaVA and a tiny CLIP (tests/tiny_models) in a
temporary folder and times, over every pool image (70 x 7 option orders for the LLaVA):

- ``ours``: what ``verify-images`` does (``run_generative`` through the evaluator's hf
  backend: all prompts handed over at once, sorted and batched, each image preprocessed
  once; ``run_dual``: images batched, class embeddings computed once per language);
- ``naive``: one ``processor(text, image)`` + ``generate`` per prompt, and for the CLIP
  one image at a time with the 35 prompt embeddings recomputed for every image.

Both paths must reach the same verdicts (checked). Model loading is not timed. Numbers
are for the CPU; on a GPU machine pass ``--device cuda`` (bf16 there) and, to time real
checkpoints instead of the tiny ones, ``--llava DIR --clip DIR`` (``--no-naive`` skips the
slow per-prompt loop).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "src"), str(REPO / "tests"), str(REPO)]


def naive_llava(model_dir: Path, entries, shifts, device: str) -> list[str]:
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor

    from mvlsib.release_format.mvl_sib import TOPICS
    from mvlsib.verify_images.prompts import question_text
    from mvlsib.verify_images.rotations import rotate

    processor = AutoProcessor.from_pretrained(model_dir)
    model = AutoModelForImageTextToText.from_pretrained(model_dir, use_safetensors=True).to(device).eval()
    tok = processor.tokenizer
    out = []
    t0 = time.perf_counter()
    for _row, image in entries:
        for shift in shifts:
            messages = [
                {
                    "role": "user",
                    "content": [{"type": "image"}, {"type": "text", "text": question_text(rotate(TOPICS, shift))}],
                }
            ]
            text = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
            inputs = processor(text=[text], images=[image], return_tensors="pt").to(device)
            with torch.inference_mode():
                gen = model.generate(**inputs, max_new_tokens=8, do_sample=False, pad_token_id=tok.pad_token_id)
            out.append(tok.decode(gen[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True))
    return out, time.perf_counter() - t0


def naive_clip(model_dir: Path, entries, device: str):
    import torch
    from transformers import AutoImageProcessor, AutoModel, AutoTokenizer

    from mvlsib.release_format.mvl_sib import TOPICS
    from mvlsib.verify_images.zero_shot import TEMPLATES, features

    tok = AutoTokenizer.from_pretrained(model_dir)
    proc = AutoImageProcessor.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir, use_safetensors=True).to(device).eval()
    preds = []
    t0 = time.perf_counter()
    for _row, image in entries:
        with torch.inference_mode():
            text = tok([t.format(n) for n in TOPICS for t in TEMPLATES], padding=True, return_tensors="pt").to(device)
            te = torch.nn.functional.normalize(features(model.get_text_features(**text)), dim=-1)
            ce = torch.nn.functional.normalize(te.view(7, len(TEMPLATES), -1).mean(1), dim=-1)
            px = proc([image], return_tensors="pt").to(device)
            ie = torch.nn.functional.normalize(features(model.get_image_features(**px)), dim=-1)
        preds.append(TOPICS[int((ie @ ce.T).argmax())])
    return preds, time.perf_counter() - t0


def main() -> None:
    import torch
    from tiny_models.clip import _tokenizer_texts, build_tiny_clip, fit_tiny_clip
    from tiny_models.llava import build_tiny_llava

    from mvlsib.release_format.mvl_sib import TOPICS
    from mvlsib.verify_images.inputs import load_pool_images
    from mvlsib.verify_images.rotations import rotation_shifts
    from mvlsib.verify_images.verify import VerifyOptions, run_dual, run_generative
    from mvlsib.verify_images.zero_shot import DualEncoder

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", default=str(REPO / "src/mvlsib/data/image_pool"))
    ap.add_argument("--threads", default="1,2", help="torch thread counts to try, comma-separated")
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--llava", default=None, help="an existing image-text-to-text model instead of the tiny LLaVA")
    ap.add_argument("--clip", default=None, help="an existing dual encoder instead of the fitted tiny CLIP")
    ap.add_argument("--no-naive", action="store_true", help="time only the verify-images path")
    args = ap.parse_args()

    entries = load_pool_images(args.pool)
    images = {row.image_id: im for row, im in entries}
    names = {"eng_Latn": TOPICS}
    shifts = rotation_shifts(7)
    n_img, n_prompts = len(entries), len(entries) * len(shifts)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        llava = args.llava or build_tiny_llava(Path(tmp) / "llava", _tokenizer_texts(), letter_scale=3.0)
        clip = args.clip
        if clip is None:
            clip = build_tiny_clip(Path(tmp) / "clip")
            fit_tiny_clip(clip, args.pool)
        for threads in [int(t) for t in args.threads.split(",")]:
            torch.set_num_threads(threads)
            opts = VerifyOptions(
                pool=Path(args.pool),
                models=[str(llava)],
                out=Path(tmp) / "o",
                batch_size=args.batch_size,
                device=args.device,
                progress=False,
            )
            from mvlsib.evaluation.backends import make_backend

            backend = make_backend("hf", model=str(llava), batch_size=args.batch_size, device=args.device)
            backend.set_images(images)
            t0 = time.perf_counter()
            ours = run_generative(backend, entries, names, opts, "llava")
            t_ours = time.perf_counter() - t0
            backend.close()
            note = ""
            if not args.no_naive:
                naive_resp, t_naive = naive_llava(llava, entries, shifts, args.device)
                ours_resp = [p["response"] for r in ours.values() for p in r["predictions"]]
                note = f"same response {sum(a == b for a, b in zip(ours_resp, naive_resp)) / len(naive_resp):.0%}"
                rows.append(("LLaVA", threads, "naive", t_naive, n_img / t_naive, n_prompts / t_naive, ""))
            rows.append(("LLaVA", threads, "ours", t_ours, n_img / t_ours, n_prompts / t_ours, note))

            enc = DualEncoder(str(clip), batch_size=32, device=args.device)
            t0 = time.perf_counter()
            dual = run_dual(enc, entries, names, opts, "clip")
            t_ours = time.perf_counter() - t0
            enc.close()
            note = ""
            if not args.no_naive:
                naive_pred, t_naive = naive_clip(clip, entries, args.device)
                same = [r["predictions"][0]["predicted_topic"] for r in dual.values()] == naive_pred
                note = "same verdicts" if same else "VERDICTS DIFFER"
                rows.append(("CLIP", threads, "naive", t_naive, n_img / t_naive, None, ""))
            rows.append(("CLIP", threads, "ours", t_ours, n_img / t_ours, None, note))

    print(
        f"LLaVA: {'tiny, random' if args.llava is None else args.llava}; "
        f"CLIP: {'tiny, fitted to the pool' if args.clip is None else args.clip}"
    )
    print(
        f"device {args.device}; {n_img} images, {len(shifts)} orders ({n_prompts} prompts) for the LLaVA; "
        f"LLaVA batch size {args.batch_size}; torch {torch.__version__}"
    )
    print(f"{'model':<20} {'threads':>7} {'method':<6} {'seconds':>8} {'images/s':>9} {'prompts/s':>10}  note")
    for model, threads, method, secs, ips, pps, note in rows:
        pps_s = f"{pps:10.1f}" if pps is not None else f"{'-':>10}"
        print(f"{model:<20} {threads:>7} {method:<6} {secs:8.2f} {ips:9.1f} {pps_s}  {note}")


if __name__ == "__main__":
    main()
