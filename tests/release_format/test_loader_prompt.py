"""Ready to prompt: the loader gives each example its rendered prompt, from the release's own evaluator
code (one source of truth), in a release folder and from a Hub repo with the card's own lines."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

from support import WITHOUT_MVLSIB
from support.fakes.hub import serve_folder

_LOCAL = (
    WITHOUT_MVLSIB
    + r"""
import mvl_sib
out = []
for task, k in (("i2s", 3), ("s2i", 1), ("t2s", 1), ("s2t", 5)):
    for ex in mvl_sib.load_task(task, "eng_Latn", k=k, source=".")[:2]:
        out.append({"task": task, "k": k, "id": ex["instance_id"], "prompt": ex["prompt"],
                    "n_images": len(ex["images"]), "image_ids": ex["image_ids"]})
assert "mvlsib" not in sys.modules
print(json.dumps(out))
"""
)


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HF_TOKEN")}


def test_examples_carry_the_evaluators_prompt(release_dir, tmp_path):
    from mvlsib.evaluation.run.prompts import prompt_for_example
    from mvlsib.release_format import mvl_sib

    rel = tmp_path / "rel"
    shutil.copytree(release_dir, rel)
    got = subprocess.run(
        [sys.executable, "-c", _LOCAL], cwd=rel, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert got.returncode == 0, got.stderr[-3000:]
    assert not (rel / "mvlsib_evaluate" / "__pycache__").exists()  # importing the prompt code wrote no cache
    for item in json.loads(got.stdout):
        (ex,) = [
            e
            for e in mvl_sib.load_task(item["task"], "eng_Latn", k=item["k"], source=release_dir, with_prompt=False)
            if e["instance_id"] == item["id"]
        ]
        assert "prompt" not in ex
        assert item["prompt"] == prompt_for_example(ex).text()  # what the evaluator sends
        assert item["prompt"].count("<image>") == item["n_images"] == len(item["image_ids"])
        if item["task"] in ("i2s", "t2s"):
            assert ex["options"][0] in item["prompt"]  # the target-language sentences are in it


def test_with_prompt_true_without_the_evaluator_says_why(release_dir, tmp_path):
    rel = tmp_path / "rel"
    rel.mkdir()
    shutil.copy(release_dir / "mvl_sib.py", rel)
    code = WITHOUT_MVLSIB + "import mvl_sib\nmvl_sib.load_task('i2s', 'eng_Latn', source='.', with_prompt=True)\n"
    got = subprocess.run([sys.executable, "-c", code], cwd=rel, env=_env(), capture_output=True, text=True, timeout=60)
    assert got.returncode != 0 and "mvlsib_evaluate" in got.stderr and "LoaderError" in got.stderr


def _card_snippet(card: str) -> str:
    """The card's "ready to prompt from the Hub" code block, as written."""
    blocks = re.findall(r"```python\n(.*?)```", card, flags=re.S)
    (block,) = [b for b in blocks if "snapshot_download" in b]
    return block


def test_the_cards_hub_snippet_works_as_written(release_dir, tmp_path):
    card = (release_dir / "README.md").read_text("utf-8")
    snippet = _card_snippet(card)
    repo_id = re.search(r'snapshot_download\("([^"]+)"', snippet).group(1)
    elsewhere = tmp_path / "user"
    elsewhere.mkdir()
    code = WITHOUT_MVLSIB + snippet + '\nprint(json.dumps({"prompt": ex["prompt"], "n": len(ex["images"])}))\n'
    with serve_folder(repo_id, release_dir) as hub:
        env = dict(
            _env(),
            HF_ENDPOINT=hub.endpoint,
            HF_HOME=str(tmp_path / "home"),
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_DISABLE_XET="1",
        )
        got = subprocess.run(
            [sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=240
        )
        fetched = {p for m, p in hub.requests if m == "GET" and "/resolve/" in p}
    assert got.returncode == 0, got.stderr[-3000:]
    out = json.loads(got.stdout.strip().splitlines()[-1])
    from mvlsib.evaluation.run.prompts import prompt_for_example
    from mvlsib.release_format import mvl_sib

    local = mvl_sib.load_task("i2s", "eng_Latn", k=3, source=release_dir, with_prompt=False)[0]
    assert out["prompt"] == prompt_for_example(local).text() and out["n"] == 3
    assert any(p.endswith("/mvlsib_evaluate/evaluation/run/prompts.py") for p in fetched)
    assert any(p.endswith("/mvl_sib.py") for p in fetched)
