"""Synthetic run folders with planted accuracies, for the analysis tests (no model needed).

Each instance's outcome is drawn from a seeded ``random.Random``, so the planted runs are
the same on every machine; a run's config.json has the fields ``load_run`` and the report read.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

LETTERS = "ABCD"


def s2i_images(i):
    """The 4 option images of planted instance ``i`` (10 images in all; the gold one is at the label)."""
    return [f"img-{(i + j) % 10}" for j in range(4)]


def planted_records(
    accuracy,
    *,
    languages=("eng_Latn", "arb_Arab", "urd_Arab"),
    cells=(("i2s", 1), ("s2t", 1)),
    n=300,
    seed=0,
    always_wrong=(),
    format_errors=0.0,
    instance_ids=None,
    labels=None,
    answer_letter=None,
):
    """Records whose answers are right with probability ``accuracy`` (a float, or a function of
    (language, task, k) -> float); instances in ``always_wrong`` are wrong everywhere."""
    rng = random.Random(seed)
    out = []
    for language in languages:
        for task, k in cells:
            p = accuracy(language, task, k) if callable(accuracy) else accuracy
            for i in range(n):
                iid = instance_ids[i] if instance_ids else f"{i}-0"
                label = labels[task][i] if labels else i % 4
                if iid in always_wrong:
                    response = LETTERS[(label + 1) % 4]
                elif answer_letter is not None and rng.random() < 0.5:
                    response = answer_letter  # a letter-biased model: half its answers are this letter
                elif rng.random() < p:
                    response = LETTERS[label]
                elif rng.random() < format_errors:
                    response = "no idea"
                else:
                    response = LETTERS[(label + rng.randrange(1, 4)) % 4]
                out.append(
                    {
                        "task": task,
                        "k": k,
                        "language": language,
                        "instance_id": iid,
                        "label": label,
                        "response": response,
                        "image_ids": s2i_images(i) if task == "s2i" else [],
                        "letter": response if response in LETTERS else None,
                        "correct": response == LETTERS[label],
                        "prompt_sha256": "0" * 64,
                    }
                )
    return out


def write_run(folder: Path, records, *, model="planted", limit=None, n_expected=None, release_sha256=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "predictions.jsonl", "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, sort_keys=True) + "\n")
    fp = {"model": model, "backend": "openai", "limit": limit, "languages": sorted({r["language"] for r in records})}
    if limit is not None:
        fp["limit_mode"] = "stratified"
    if release_sha256 is not None:
        fp["release_manifest_sha256"] = release_sha256
    config = {
        "fingerprint": fp,
        "n_expected": n_expected if n_expected is not None else len(records),
        "complete": True,
        "parse_mode": "relaxed",
        "groups": {},
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def copy_run(source: Path, folder: Path, *, model: str) -> Path:
    """A copy of a run folder as another model's run (its fingerprint names ``model``): the same
    predictions, but not the same evaluation twice (which ``correlate`` refuses)."""
    import json
    import shutil

    shutil.copytree(source, folder)
    config = json.loads((folder / "config.json").read_text("utf-8"))
    config["fingerprint"]["model"] = model
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return folder
