"""The evaluator on a real vLLM server gives what the hf backend gives, per family of tiny models:

- the same prompt: for every task x k, the token ids vLLM builds from the openai backend's request
  (its ``/tokenize`` endpoint, images expanded) equal the hf backend's ``input_ids`` for the same item,
  image placeholders at the same positions and in the same numbers;
- the same pixels: the openai backend sends each release image's own bytes (tests/evaluation/
  test_backend_openai.py), which both engines decode;
- the same answers: ``mvlsib-eval run --backend openai`` against the server and ``--backend hf`` on the
  model folder give the same letters on the same selection;
- the same verdicts: ``mvlsib-build verify-images`` asks the pool's images through both backends in one
  command and gets the same letters, so the same pass/fail per image;
- the batch route: ``batch prepare`` -> vLLM's own ``run_batch`` -> ``batch collect`` equals the online run.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import EVAL_LANGUAGES, release_requests
from support.vllm_servers import engine_env, engine_python, log_excerpt, serve_args

from mvlsib.cli import build_cli, eval_cli
from mvlsib.evaluation.backends import make_backend

pytestmark = pytest.mark.vllm

# The families vLLM's CPU build serves with the hf backend's prompt (docs/model_families.md, "On vLLM",
# names the LLaVA family, whose prompts differ). The nox session runs FAMILIES (its time budget: each
# server takes about a minute to start); MVLSIB_VLLM_FAMILIES=all adds MORE_FAMILIES, or names some.
FAMILIES = ["qwen2_vl", "gemma3", "idefics3", "internvl"]
# Qwen2.5-VL has Qwen2-VL's template and processor; LLaVA-1.5 is served with a template of ours
# (support.vllm_servers.LLAVA_IN_PLACE_TEMPLATE).
MORE_FAMILIES = ["qwen2_5_vl", "mistral3", "llava_1_5"]
_CHOSEN = os.environ.get("MVLSIB_VLLM_FAMILIES", "")
if _CHOSEN:
    FAMILIES = [f for f in FAMILIES + MORE_FAMILIES if _CHOSEN == "all" or f in _CHOSEN.split(",")]
# Families whose taught tiny model still answers other tokens than letters: what they answer is compared
# all the same (letters, mostly none, and the raw responses), only not required to be letters.
FEW_LETTERS = {
    "mistral3": "the tiny Mistral 3 answers byte tokens ('\\x04', 'ant', ...) even with its letters' output rows "
    "at 12 times the typical norm"
}
# Every task x k of a run (t2s has k=1 only).
TASK_KS = [(task, k) for task in ("i2s", "s2i", "s2t") for k in (1, 3, 5)] + [("t2s", 1)]
SELECTION = ["--tasks", "i2s,s2i,t2s,s2t", "--k", "1,3,5", "--languages", ",".join(EVAL_LANGUAGES), "--limit", "4"]
# Per language: i2s 3 + s2i 3 + t2s 1 + s2t 3 cells of 4 instances.
N_PROMPTS = len(EVAL_LANGUAGES) * 10 * 4
# The first token is the letter (tiny_models.teach.teach_letters); later ones are noise.
MAX_NEW_TOKENS = "1"


@pytest.fixture(scope="session", params=FAMILIES)
def family(request) -> str:
    # Session-scoped: pytest runs every test of one family before the next, so each server starts once.
    return request.param


def invoke(*args):
    return CliRunner().invoke(eval_cli, [str(a) for a in args])


def ok(result):
    assert result.exit_code == 0, result.output + repr(result.exception)
    return result


def _same_response(served: str, hf: str) -> bool:
    return served == hf or (hf.endswith("\ufffd") and hf.rstrip("\ufffd").startswith(served))


def predictions(run: Path, field: str) -> dict[tuple, str | None]:
    out = {}
    for line in (run / "predictions.jsonl").read_text("utf-8").splitlines():
        rec = json.loads(line)
        out[(rec["task"], rec["k"], rec["language"], rec["instance_id"])] = rec[field]
    return out


@pytest.fixture(scope="session")
def runs(family, vllm_server, tiny_model, release_dir, tmp_path_factory) -> dict[str, Path]:
    """The same selection run by the hf backend on the model folder and by the openai backend
    against vLLM serving it; the online run's prompts/s is printed (``-s`` shows it)."""
    server = vllm_server(family)
    base = tmp_path_factory.mktemp(f"runs-{family}")
    common = ["--data", release_dir, *SELECTION, "--max-new-tokens", MAX_NEW_TOKENS, "--no-progress"]
    started = time.monotonic()
    ok(
        invoke(
            "run",
            "--backend",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            family,
            *common,
            "--out",
            base / "vllm",
        )
    )
    seconds = time.monotonic() - started
    print(f"\n{family}: vLLM up in {server.started_in:.0f} s; {N_PROMPTS} prompts online in {seconds:.1f} s")
    ok(
        invoke(
            "run", "--backend", "hf", "--model", tiny_model(family), "--device", "cpu", *common, "--out", base / "hf"
        )
    )
    return {"vllm": base / "vllm", "hf": base / "hf"}


def test_prompt_token_ids_equal_the_hf_backends(family, vllm_server, tiny_model, release_dir):
    server = vllm_server(family)
    reqs, used = release_requests(release_dir, TASK_KS, per_language=1)
    hf = make_backend("hf", model=str(tiny_model(family)), device="cpu", max_new_tokens=8)
    hf.set_images(used)
    served = make_backend("openai", model=family, base_url=server.base_url)
    served.set_images(used)
    image_token = hf.processor.tokenizer.convert_tokens_to_ids(hf.processor.image_token)
    try:
        for req in reqs:
            want = hf.batcher.single(hf.batcher.chat_text(req), req)["input_ids"][0].tolist()
            got = server.tokenize(served.payload(req)["messages"])
            if got != want:
                first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
                pytest.fail(
                    f"{family} {req.key}: vLLM's prompt ({len(got)} tokens, {got.count(image_token)} image tokens) "
                    f"differs from the hf backend's ({len(want)}, {want.count(image_token)}) from position {first}: "
                    f"vLLM {got[first : first + 8]} vs hf {want[first : first + 8]}"
                )
            assert want.count(image_token) > 0 or not req.image_ids
    finally:
        served.close()
        hf.close()


def test_answers_equal_the_hf_backends(family, request):
    runs = request.getfixturevalue("runs")
    served, hf = predictions(runs["vllm"], "letter"), predictions(runs["hf"], "letter")
    assert len(served) == len(hf) == N_PROMPTS
    differ = sorted(k for k in hf if served[k] != hf[k])
    assert not differ, f"{family}: {len(differ)} of {N_PROMPTS} letters differ: {differ[:10]}"
    answered = [v for v in hf.values() if v is not None]
    if family not in FEW_LETTERS:
        assert len(answered) > N_PROMPTS // 2, f"{family}: the taught model answered a letter {len(answered)} times"
    # The raw responses too, but for a token that ends inside a UTF-8 character: the hf backend decodes it
    # with U+FFFD, vLLM's detokenizer holds the token back for the next one, which never comes.
    said, hf_said = predictions(runs["vllm"], "response"), predictions(runs["hf"], "response")
    differ = sorted(k for k in hf_said if not _same_response(said[k], hf_said[k]))
    assert not differ, [(k, said[k], hf_said[k]) for k in differ[:10]]
    print(f"{family}: letters {dict(sorted(Counter(answered).items()))} of {N_PROMPTS}, the same on both engines")
    config = json.loads((runs["vllm"] / "config.json").read_text("utf-8"))
    assert config["backend"]["image_encoding"].startswith("the release's own image bytes")


def test_verify_images_verdicts_equal_the_hf_backends(family, vllm_server, tiny_model, pool_dir, tmp_path):
    server, model = vllm_server(family), tiny_model(family)
    out = tmp_path / "verify"
    hf_name, served_name = f"hf:{model}", f"openai:{family}"
    # Two option orders of each of the 70 images per model; --allow-fail: a random model fails most images.
    result = CliRunner().invoke(
        build_cli,
        [
            "verify-images", "--pool", str(pool_dir), "--model", hf_name, "--model", served_name,
            "--base-url", server.base_url, "--device", "cpu", "--rotations", "2", "--max-new-tokens", MAX_NEW_TOKENS,
            "--allow-fail", "--no-progress", "--out", str(out),
        ],
    )  # fmt: skip
    ok(result)
    report = json.loads((out / "report.json").read_text("utf-8"))
    letters = {name: {} for name in (hf_name, served_name)}
    for image in report["images"]:
        for name, found in letters.items():
            for pred in image["results"][name]["predictions"]:
                found[(image["image_id"], pred["shift"])] = pred["letter"]
    differ = sorted(k for k in letters[hf_name] if letters[hf_name][k] != letters[served_name][k])
    assert not differ, f"{family}: {len(differ)} of {len(letters[hf_name])} letters differ: {differ[:10]}"
    verdicts = {name: [i["results"][name]["passed"] for i in report["images"]] for name in letters}
    assert verdicts[hf_name] == verdicts[served_name]
    # The taught models learnt letters from evaluation prompts; on verify-images' one question some answer a
    # single letter throughout (Gemma 3: B), where the equality says less: the spread is printed.
    spread = dict(sorted(Counter(letters[hf_name].values()).items(), key=str))
    passed = report["summary"][hf_name]["passed"]
    print(f"{family}: verify-images letters {spread}, the same on both engines; {passed} of 70 images pass on both")


# vLLM's batch runner starts an engine of its own (~45 s): one family shows the route works, both ways of
# giving it images (inline base64, and file:// references to the prepared folder) in one run of it.
@pytest.mark.parametrize("family", ["qwen2_vl"], indirect=True)
def test_batch_on_vllm_equals_the_online_run(family, runs, tiny_model, release_dir, tmp_path):
    inline, files = tmp_path / "inline", tmp_path / "files"
    for refs, folder in (("inline", inline), ("files", files)):
        ok(
            invoke(
                "batch", "prepare", "--data", release_dir, "--model", family, *SELECTION,
                "--max-new-tokens", MAX_NEW_TOKENS, "--image-refs", refs, "--out", folder, "--no-progress",
            )
        )  # fmt: skip
    manifest = json.loads((inline / "manifest.json").read_text("utf-8"))
    assert manifest["n_requests"] == N_PROMPTS and len(manifest["files"]) == 1
    requests = {name: (folder / "requests-00001.jsonl").read_text("utf-8").splitlines() for name, folder in
                (("inline", inline), ("files", files))}  # fmt: skip
    sizes = {name: sum(len(line.encode()) + 1 for line in lines) for name, lines in requests.items()}
    image_bytes = sum(p.stat().st_size for p in (files / "images").iterdir())
    print(
        f"\nrequest files for {N_PROMPTS} prompts: inline {sizes['inline']:,} bytes; file:// "
        f"{sizes['files']:,} bytes + {image_bytes:,} bytes of images written once "
        f"({sizes['inline'] / N_PROMPTS:,.0f} vs {sizes['files'] / N_PROMPTS:,.0f} bytes a request)"
    )
    assert sizes["files"] * 5 < sizes["inline"]
    # One input for one engine start: the file:// copy of each request under a custom_id of its own.
    both = tmp_path / "both.jsonl"
    lines = requests["inline"] + [json.dumps({**json.loads(x), "custom_id": "files:" + json.loads(x)["custom_id"]})
                                  for x in requests["files"]]  # fmt: skip
    both.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results = tmp_path / "results.jsonl"
    engine = serve_args(tiny_model(family), family, 0, stats=True)
    engine = [*_without(engine, ("--host", "--port")), "--allowed-local-media-path", str((files / "images").resolve())]
    log = tmp_path / "run_batch.log"
    with open(log, "wb") as out:
        done = subprocess.run(
            [engine_python(), "-m", "vllm.entrypoints.openai.run_batch", "-i", both, "-o", results, *engine],
            stdout=out, stderr=subprocess.STDOUT, env=engine_env(), timeout=600, check=False,
        )  # fmt: skip
    assert done.returncode == 0, log_excerpt(log)
    split: dict[str, list[str]] = {"inline": [], "files": []}
    for line in results.read_text("utf-8").splitlines():
        rec = json.loads(line)
        if rec["custom_id"].startswith("files:"):
            split["files"].append(json.dumps({**rec, "custom_id": rec["custom_id"].removeprefix("files:")}))
        else:
            split["inline"].append(line)
    for name, folder in (("inline", inline), ("files", files)):
        assert len(split[name]) == N_PROMPTS, name
        part = tmp_path / f"results-{name}.jsonl"
        part.write_text("\n".join(split[name]) + "\n", encoding="utf-8")
        out = tmp_path / f"collected-{name}"
        ok(invoke("batch", "collect", folder, part, "--out", out, "--no-progress"))
        for kept in ("predictions.jsonl", "metrics.json"):
            assert (out / kept).read_bytes() == (runs["vllm"] / kept).read_bytes(), (name, kept)


def _without(args: list[str], flags: tuple[str, ...]) -> list[str]:
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a in flags:
            skip = True
        else:
            out.append(a)
    return out
