"""verify-images' report: one entry per image and, per model, ``passed`` and the predictions
(``report.json``), and a Markdown table with the failures first (``report.md``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from mvlsib import __version__, jsonio
from mvlsib.atomic import atomic_open
from mvlsib.escape import md_code

from .prompts import question_text
from .rotations import LETTERS, required_correct


def build_report(opts, entries, names_by_language, shifts, *, per_model, model_info) -> dict[str, Any]:
    models = [s.name for s in opts.specs]
    images = []
    for row, _ in entries:
        results = {m: per_model[m][row.image_id] for m in models}
        images.append(
            {
                "image_id": row.image_id,
                "topic": row.topic,
                "file": row.file,
                "sha256": row.sha256,  # what was verified: a later image under this id is not
                "passed": all(r["passed"] for r in results.values()),
                "results": results,
            }
        )
    summary = {}
    for m in models:
        res = [per_model[m][row.image_id] for row, _ in entries]
        entry: dict[str, Any] = {
            "kind": model_info[m]["kind"],
            "passed": sum(r["passed"] for r in res),
            "failed": sum(not r["passed"] for r in res),
        }
        if model_info[m]["kind"] == "generative":
            letters = Counter(p["letter"] or "none" for r in res for p in r["predictions"])
            entry["format_errors"] = letters.get("none", 0)
            entry["prompts"] = sum(letters.values())
            # A model that always answers one letter shows up here, whatever the images.
            entry["answer_letters"] = {k: letters.get(k, 0) for k in (*LETTERS, "none")}
        summary[m] = entry
    return {
        "tool": "mvlsib-build verify-images",
        "toolkit_version": __version__,
        "pool": str(opts.pool),
        "settings": {
            "rotations": list(shifts),
            "threshold": opts.threshold,
            "required_correct": required_correct(len(shifts), opts.threshold),
            "parse_mode": opts.parse_mode,
            "languages": {lang: list(names) for lang, names in names_by_language.items()},
            "question_example": question_text(next(iter(names_by_language.values()))),
        },
        "models": models,
        "model_info": model_info,
        "summary": summary,
        "passed": all(i["passed"] for i in images),
        "failures": [[i["image_id"], m] for i in images for m in models if not i["results"][m]["passed"]],
        "images": images,
    }


def _cell(res: dict[str, Any]) -> str:
    if res["kind"] == "dual":
        if res["passed"]:
            return f"pass (margin {res['margin']:+.3f})"
        wrong = next((p["predicted_topic"] for p in res["predictions"] if not p["correct"]), "?")
        return f"**FAIL** → {wrong} (margin {res['margin']:+.3f})"
    score = f"{res['correct']}/{res['n']}"
    if res["passed"]:
        return f"pass {score}"
    return f"**FAIL** {score}, mostly → {res['most_common_wrong']}"


def render_markdown(report: dict[str, Any]) -> str:
    models = report["models"]
    s = report["settings"]
    lines = [
        "# verify-images report",
        "",
        f"Pool {md_code(report['pool'], in_table=False)}, {len(report['images'])} images, {len(models)} model(s); "
        f"generative models asked in {len(s['rotations'])} option order(s), passing with at least "
        f"{s['required_correct']} correct; dual encoders pass on a top-1 match. Languages: "
        + ", ".join(s["languages"])
        + ".",
        "",
        "| model | kind | passed | failed | format errors |",
        "|---|---|---:|---:|---:|",
    ]
    for m in models:
        e = report["summary"][m]
        fe = f"{e['format_errors']}/{e['prompts']}" if "format_errors" in e else "–"
        lines.append(f"| {md_code(m)} | {e['kind']} | {e['passed']} | {e['failed']} | {fe} |")
    lines += ["", "## Images (failures first)", ""]
    lines.append("| image | topic | " + " | ".join(md_code(m) for m in models) + " |")
    lines.append("|---|---|" + "---|" * len(models))
    ordered = sorted(report["images"], key=lambda i: i["passed"])  # stable: failures first, manifest order kept
    # Image ids and topics need no escaping: the manifest schema allows only [a-z_0-9] in ids, topics are the fixed seven.
    for img in ordered:
        cells = [_cell(img["results"][m]) for m in models]
        lines.append(f"| {img['image_id']} | {img['topic']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_report(report: dict[str, Any], out: str | Path) -> tuple[Path, Path]:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / "report.json", out / "report.md"
    with atomic_open(json_path) as fh:
        fh.write(jsonio.dumps(report, ensure_ascii=False, indent=1) + "\n")
    with atomic_open(md_path) as fh:
        fh.write(render_markdown(report))
    return json_path, md_path
