"""``mvlsib-eval items RUN1 RUN2 ...``: item analysis over several runs, for curators.

- **Instance difficulty**: per (task, k, instance), the share of wrong answers over every
  run and language that answered it.
- **Always wrong**: the (language, task, k, instance) answered wrongly by *every* run
  (and, aggregated, the (task, k, instance) wrong in every run and every language), listed
  with the sentence, the references and the options from the release, so a curator can judge
  whether the item is bad (as Kaleidoscope's quality control does).
- **Per-image error rates**: for every image, how often prompts showing it are answered
  wrongly, and for s2i how often it is missed when it is the correct option (an image that
  drags s2i down everywhere is a candidate for replacement in the pool).
- **Text-only vs cross-modal per item**: per run, how often the same instance is answered
  right in a cross-modal task and wrong in its text-only mirror (i2s/t2s, s2i/s2t), and vice versa.
- **Letter-position bias**: per run and task family, the distribution of answered letters
  against the gold distribution (balanced in a release), and accuracy per gold letter.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .._compat import LOADER, TASK_BY_NAME, TASKS, atomic_open, csvio, escape, jsonio
from ..run.parsing import parse_letter
from ..run.prompts import LETTERS
from .report_format import coverage
from .runs import load_runs


def _load(runs, mode: str, names=None, **checks):
    out = []
    found = load_runs(runs, names=names, **checks)
    for run in found:
        label, config, records = run.label, run.config, run.records
        for r in records:
            r["_letter"] = parse_letter(r["response"], mode)
            r["_ok"] = r["_letter"] == LETTERS[int(r["label"])]
        out.append((label, config, records))
    return out, found.release


def _iid_rank(iid: str) -> tuple:
    """Instance ids ("{index_id}-{r}") in numeric order."""
    a, _, b = iid.partition("-")
    return (int(a), int(b or 0), iid) if a.isdigit() and (b or "0").isdigit() else (1 << 62, 0, iid)


def item_analysis(loaded) -> dict:
    """All the figures, from (label, config, records) per run."""
    by_item: dict[tuple, dict[str, dict]] = defaultdict(dict)  # (language, task, k, iid) -> run -> record
    for label, _, records in loaded:
        for r in records:
            by_item[(r["language"], r["task"], int(r["k"]), r["instance_id"])][label] = r
    n_runs = len(loaded)
    difficulty, rate = _difficulty(by_item)
    return {
        "n_runs": n_runs,
        "difficulty": difficulty,
        "modality": [row for label, _, records in loaded for row in _modality(label, records)],
        "always_wrong": _always_wrong(by_item, rate, n_runs),
        "always_wrong_everywhere": [r for r in difficulty if r["error_rate"] == 1.0 and r["n_answers"] >= n_runs],
        "images": _image_errors(loaded),
        "letter_bias": [row for label, _, records in loaded for row in _letter_bias(label, records)],
    }


def _task_rank(task: str) -> int:
    return TASKS.index(task) if task in TASKS else 9


def _difficulty(by_item) -> tuple[list[dict], dict[tuple, float]]:
    """Error rate per (task, k, instance) over runs and languages, hardest first; and the rates by key."""
    diff: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for (_lang, task, k, iid), per_run in by_item.items():
        d = diff[(task, k, iid)]
        d[0] += len(per_run)
        d[1] += sum(not r["_ok"] for r in per_run.values())
    difficulty = [
        {"task": t, "k": k, "instance_id": iid, "n_answers": n, "error_rate": wrong / n}
        for (t, k, iid), (n, wrong) in diff.items()
    ]
    difficulty.sort(key=lambda r: (-r["error_rate"], _task_rank(r["task"]), r["k"], _iid_rank(r["instance_id"])))
    return difficulty, {(t, k, iid): wrong / n for (t, k, iid), (n, wrong) in diff.items()}


def _always_wrong(by_item, rate, n_runs: int) -> list:
    """Items every run got wrong. Hardest items first (wrong in most languages too): those are the
    likely bad items, not noise."""
    return sorted(
        (
            (key, per_run)
            for key, per_run in by_item.items()
            if len(per_run) == n_runs and not any(r["_ok"] for r in per_run.values())
        ),
        key=lambda kv: (-rate[kv[0][1:]], _task_rank(kv[0][1]), kv[0][2], _iid_rank(kv[0][3]), kv[0][0]),
    )


def _image_errors(loaded) -> list[dict]:
    """Per image: prompts showing it and their error rate; the tasks whose options are images (s2i)
    also say which image was the right answer."""
    image_columns = LOADER.IMAGE_COLUMNS_OF_ROWS
    image_option_tasks = {t for t, spec in TASK_BY_NAME.items() if spec.options in image_columns}
    img: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # shown, wrong, s2i gold, s2i gold missed
    for _, _, records in loaded:
        for r in records:
            for image_id in r.get("image_ids") or []:
                img[image_id][0] += 1
                img[image_id][1] += not r["_ok"]
            if r["task"] in image_option_tasks and r.get("image_ids"):
                gold = r["image_ids"][-4:][int(r["label"])]  # the 4 option images come last in a prompt
                img[gold][2] += 1
                img[gold][3] += not r["_ok"]
    images: list[dict[str, Any]] = [
        {
            "image_id": i,
            "n_prompts": v[0],
            "error_rate": v[1] / v[0],
            "s2i_gold_n": v[2],
            "s2i_gold_error_rate": v[3] / v[2] if v[2] else None,
        }
        for i, v in img.items()
        if v[0]
    ]
    images.sort(
        key=lambda r: (
            -(r["s2i_gold_error_rate"] if r["s2i_gold_error_rate"] is not None else -1),
            -r["error_rate"],
            r["image_id"],
        )
    )
    return images


def _letter_bias(label: str, records) -> list[dict]:
    """Per label column of one run: the letters answered against the gold letters."""
    fam: dict[str, list] = defaultdict(list)
    for r in records:
        fam[TASK_BY_NAME[r["task"]].label if r["task"] in TASK_BY_NAME else r["task"]].append(r)
    bias = []
    for column, recs in sorted(fam.items()):
        answered = Counter(r["_letter"] or "none" for r in recs)
        gold = Counter(LETTERS[int(r["label"])] for r in recs)
        n = len(recs)
        row: dict[str, Any] = {
            "run": label,
            "label_column": column,
            "tasks": ",".join(sorted({r["task"] for r in recs}, key=_task_rank)),
            "n": n,
            "none_share": answered["none"] / n,
        }
        for letter in LETTERS:
            row[f"answered_{letter}"] = answered[letter] / n
            row[f"gold_{letter}"] = gold[letter] / n
            hits = [r for r in recs if LETTERS[int(r["label"])] == letter]
            row[f"accuracy_when_gold_{letter}"] = sum(r["_ok"] for r in hits) / len(hits) if hits else None
        row["max_excess"] = max(row[f"answered_{x}"] - row[f"gold_{x}"] for x in LETTERS)
        bias.append(row)
    return bias


def _modality(label: str, records) -> list[dict]:
    """Text-only vs cross-modal per item of one run: the same instance, language and k in a task and its mirror."""
    ok = {(r["language"], r["task"], int(r["k"]), r["instance_id"]): r["_ok"] for r in records}
    pairs: dict[tuple, list[int]] = {}
    for (lang, task, k, iid), cross_ok in ok.items():
        spec = TASK_BY_NAME.get(task)
        if spec is None or not spec.cross_modal:
            continue
        text_ok = ok.get((lang, spec.mirror, k, iid))
        if text_ok is None:
            continue
        c = pairs.setdefault((task, spec.mirror, k), [0, 0, 0, 0])
        c[0 if text_ok and cross_ok else 1 if text_ok else 2 if cross_ok else 3] += 1
    modality = []
    for (task, mirror, k), c in sorted(pairs.items(), key=lambda kv: (TASKS.index(kv[0][0]), kv[0][2])):
        n = sum(c)
        modality.append(
            {
                "run": label,
                "cross_modal_task": task,
                "text_task": mirror,
                "k": k,
                "n": n,
                "both_right": c[0] / n,
                "only_text_right": c[1] / n,
                "only_cross_right": c[2] / n,
                "both_wrong": c[3] / n,
            }
        )
    return modality


def _release_rows(data: str | None, languages) -> dict[tuple, dict]:
    """(language, instance_id) -> release row, for the items we list; {} without a release."""
    if data is None:  # data: a release folder load_runs checked
        return {}
    mvl = LOADER
    out = {}
    have = set(mvl.languages(data))
    for lang in sorted(set(languages) & have):  # a language the release lacks: listed without its texts
        for row in mvl.load_rows(lang, data):  # a damaged file is said, never skipped
            out[(lang, row["instance_id"])] = row
    return out


def item_details(key, per_run, rows) -> dict:
    language, task, k, iid = key
    spec = TASK_BY_NAME[task]
    row = rows.get((language, iid))
    detail = {
        "language": language,
        "task": task,
        "k": k,
        "instance_id": iid,
        "gold": LETTERS[int(next(iter(per_run.values()))["label"])],
        "answers": {run: r["_letter"] or "none" for run, r in per_run.items()},
    }
    if row is not None:
        detail["topic"] = row["topic"]
        # the instance's own sentence is the first reference sentence (SPEC: "the sentence first")
        detail["sentence"] = row.get("sentence") or row["ref_sentences"][0]
        detail["references"] = [row["topic"]] if spec.references == "topic" else list(row[spec.references][:k])
        detail["options"] = list(row[spec.options])
    return detail


def write_items(
    runs,
    out: str | Path,
    *,
    data: str | None = None,
    mode: str = "relaxed",
    names=None,
    max_listed: int = 5000,
    different_releases: bool = False,
    warn=None,
) -> list[Path]:
    out = Path(out)
    loaded, data = _load(
        runs, mode, names, different_releases=different_releases, release=data, own_release=True, warn=warn
    )
    out.mkdir(parents=True, exist_ok=True)  # only once every run has loaded: a failure writes nothing
    res = item_analysis(loaded)
    listed = res["always_wrong"][:max_listed]
    rows = _release_rows(data, {key[0] for key, _ in listed})
    details = [item_details(key, per_run, rows) for key, per_run in listed]
    written = []
    path = out / "always_wrong.jsonl"
    with atomic_open(path) as fh:
        for d in details:
            fh.write(jsonio.dumps(d, ensure_ascii=False, sort_keys=True) + "\n")
    written.append(path)
    for name, table in (
        ("instance_difficulty.csv", res["difficulty"]),
        ("image_error_rates.csv", res["images"]),
        ("letter_bias.csv", res["letter_bias"]),
        ("modality_pairs.csv", res["modality"]),
    ):
        path = out / name
        with atomic_open(path) as fh:
            csvio.write_dicts(fh, table, list(table[0]) if table else ["empty"])
        written.append(path)
    written.append(_items_markdown(out, loaded, res, details, data=data, max_listed=max_listed))
    return written


def _items_markdown(out: Path, loaded, res, details, *, data, max_listed) -> Path:
    runs = [escape.md_text(label) for label, _, _ in loaded]
    scope = "; ".join(
        f"{escape.md_text(label)}: {cov['subset']}, {cov['n_done']}/{cov['n_expected']} predictions"
        f"{'' if cov['complete'] else ' (INCOMPLETE)'}"
        for label, cov in ((label, coverage(config, records)) for label, config, records in loaded)
    )
    lines = [
        "# MVL-SIB item analysis",
        "",
        f"Runs ({res['n_runs']}): " + ", ".join(runs) + ".",
        "",
        f"Scope — {scope}.",
        "",
        f"Release texts from: {escape.md_code(data, in_table=False)}."
        if data
        else "No release folder given (--release): items listed by id only.",
        "",
        "## Always wrong",
        "",
        f"{len(res['always_wrong'])} (language, task, k, instance) answered wrongly by every run; "
        f"{len(res['always_wrong_everywhere'])} (task, k, instance) wrong in every run and every language.",
        "",
    ]
    if res["always_wrong_everywhere"]:
        lines += escape.md_table_head(["task", "k", "instance", "answers"])
        lines += [
            escape.md_row([r["task"], r["k"], r["instance_id"], r["n_answers"]])
            for r in res["always_wrong_everywhere"][:50]
        ]
        lines.append("")
    for d in details[:50]:
        lines += _item_lines(d)
    if len(res["always_wrong"]) > 50:
        lines.append(f"… {len(res['always_wrong']) - 50} more in always_wrong.jsonl (at most {max_listed} listed).")
    lines += _image_section(res) + _modality_section(res) + _letter_section(res)
    path = out / "items.md"
    with atomic_open(path) as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def _item_lines(d: dict) -> list[str]:
    """One always-wrong item: its answers and, with the release at hand, its texts."""
    # Every value is text of a run, a release or a model: literal Markdown (md_text), never markup.
    md = escape.md_text
    lines = [
        f"### {md(d['language'])} {md(d['task'])} k={d['k']} {md(d['instance_id'])} (gold {md(d['gold'])}; "
        + ", ".join(f"{md(run)}: {md(a)}" for run, a in d["answers"].items())
        + ")"
    ]
    if "sentence" in d:
        lines += [
            "",
            f"- topic: {md(d['topic'])}",
            f"- sentence: {md(d['sentence'])}",
            f"- references: {'; '.join(md(r) for r in d['references'])}",
        ]
        lines += [
            f"- {LETTERS[i]}{' (gold)' if LETTERS[i] == d['gold'] else ''}: {md(o)}" for i, o in enumerate(d["options"])
        ]
    return lines + [""]


def _image_section(res) -> list[str]:
    lines = [
        "",
        "## Images most often missed as the correct s2i option",
        "",
        *escape.md_table_head(["image", "s2i gold n", "missed", "prompts showing it", "wrong"]),
    ]
    for r in [r for r in res["images"] if r["s2i_gold_n"]][:20]:
        lines.append(
            escape.md_row(
                [
                    r["image_id"],
                    r["s2i_gold_n"],
                    f"{100 * r['s2i_gold_error_rate']:.1f} %",
                    r["n_prompts"],
                    f"{100 * r['error_rate']:.1f} %",
                ]
            )
        )
    return lines


def _modality_section(res) -> list[str]:
    lines = [
        "",
        "## Text-only vs cross-modal, item by item",
        "",
        "Per run, the same instance, language and k answered in a cross-modal task and its text-only mirror "
        "(%): a large 'only text right' share means the images, not the language, are the obstacle.",
        "",
        *escape.md_table_head(
            ["run", "cross-modal", "text-only", "k", "n", "both right", "only text right", "only cross right"]
            + ["both wrong"]
        ),
    ]
    shares = ("both_right", "only_text_right", "only_cross_right", "both_wrong")
    for r in res["modality"]:
        lines.append(
            escape.md_row(
                [
                    r["run"],
                    r["cross_modal_task"],
                    r["text_task"],
                    r["k"],
                    r["n"],
                    *(f"{100 * r[c]:.1f}" for c in shares),
                ]
            )
        )
    return lines


def _letter_section(res) -> list[str]:
    lines = [
        "",
        "## Letter-position bias",
        "",
        "Share of answers per letter vs the gold share (%), per run and "
        "label column (sentence_label: i2s, t2s; image_label: s2i, s2t).",
        "",
        *escape.md_table_head(["run", "tasks", "n", *LETTERS, "none", "gold A/B/C/D", "max excess"]),
    ]
    for r in res["letter_bias"]:
        answered = [f"{100 * r[f'answered_{x}']:.1f}" for x in LETTERS]
        gold = "/".join(f"{100 * r[f'gold_{x}']:.0f}" for x in LETTERS)
        lines.append(
            escape.md_row(
                [
                    r["run"],
                    r["tasks"],
                    r["n"],
                    *answered,
                    f"{100 * r['none_share']:.1f}",
                    gold,
                    f"{100 * r['max_excess']:+.1f}",
                ]
            )
        )
    return lines
