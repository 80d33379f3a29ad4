"""The analysis tools end to end over every language of a release, with the tests' OpenAI-compatible server.

Builds a release from the shared SIB-200 copy (every language, plus N'Ko from its raw Flores
files), then runs four "models" served by ``tests/support/fakes/openai_compat.py`` with ``--limit N``:

- ``lettered``: cycles through varied answer formats (one unreadable) — about chance;
- ``always-a``: always answers A — pure letter-position bias;
- ``oracle-1`` / ``oracle-2`` (s2t only): look the sentence up in the release and answer its
  topic, except for two planted instances (every copy of their sentence), answered wrongly.

and then ``report`` (all four), ``compare`` (oracle-1 vs lettered; always-a vs lettered) and
``items`` (the two oracles: the planted instances must be listed, in every language).

    python benchmarks/analysis_acceptance.py --out /tmp/acc [--limit 30]

Takes about 6 minutes on 2 CPU cores (96,000 + 12,000 requests to the local server).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))


def build_release(base: Path) -> Path:
    from mvlsib.pipeline import build

    sib = REPO.parent / "shared" / "sib-200"
    rel = base / "rel"
    if not (rel / "manifest.json").exists():
        work = base / "work"
        pool = REPO / "src" / "mvlsib" / "data" / "image_pool"
        flores, annotation = sib / "data" / "nko_flores", sib / "data" / "eng"
        build(str(sib), rel, workdir=work, pool=pool, flores=flores, annotation=annotation, progress=False)
    return rel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--limit", type=int, default=30)
    args = ap.parse_args()

    from click.testing import CliRunner
    from support.fakes.openai_compat import ChatServer, lettered_server

    from mvlsib.cli import eval_cli
    from mvlsib.evaluation.run.subset import select_rows
    from mvlsib.release_format import mvl_sib

    base = args.out
    t0 = time.time()
    rel = build_release(base)
    langs = mvl_sib.languages(rel)
    print(f"release: {len(langs)} languages ({time.time() - t0:.0f} s)", flush=True)
    chosen = select_rows(mvl_sib.load_rows("eng_Latn", rel), args.limit)
    planted = [chosen[3]["instance_id"], chosen[min(17, len(chosen) - 1)]["instance_id"]]
    topic_of, planted_sentences = {}, set()
    for lang in langs:
        for row in mvl_sib.load_rows(lang, rel):
            topic_of[row["ref_sentences"][0]] = row["topic"]  # the instance's own sentence comes first
            if row["instance_id"] in planted:
                planted_sentences.add(row["ref_sentences"][0])
    sentence_re = re.compile(r"Sentence:\n(.*?)\nWhich topic", re.S)
    option_re = re.compile(r"^([A-D])\. (.*)$", re.M)

    def oracle(fmt):
        def answer(payload, _n):
            text = "".join(p.get("text", "") for p in payload["messages"][0]["content"] if p.get("type") == "text")
            found = sentence_re.search(text)
            if not found:
                return "A"
            options = option_re.findall(text)
            letters = [letter for letter, _ in options]
            gold = next(letter for letter, name in options if name == topic_of[found.group(1)])
            if found.group(1) in planted_sentences:
                gold = letters[(letters.index(gold) + 1) % 4]
            return fmt.format(gold)

        return answer

    common = ["--data", str(rel), "--k", "1", "--limit", str(args.limit), "--no-progress", "--backend", "openai"]
    plan = [
        ("lettered", lettered_server(fail_every=0), "i2s,s2i,t2s,s2t"),
        ("always-a", ChatServer(lambda _payload, _n: "A"), "i2s,s2i,t2s,s2t"),
        ("oracle-1", ChatServer(oracle("{}")), "s2t"),
        ("oracle-2", ChatServer(oracle("({})")), "s2t"),
    ]
    for name, server, tasks in plan:
        t0 = time.time()
        with server:
            r = CliRunner().invoke(
                eval_cli,
                [
                    "run",
                    *common,
                    "--tasks",
                    tasks,
                    "--model",
                    name,
                    "--base-url",
                    server.base_url,
                    "--out",
                    str(base / name),
                ],
            )
        print(
            f"run {name}: exit {r.exit_code}, {r.output.splitlines()[0] if r.output else ''} "
            f"({time.time() - t0:.0f} s)",
            flush=True,
        )
        if r.exit_code:
            sys.exit(r.output[-3000:])
    runs = [str(base / name) for name, _, _ in plan]
    for cmd in (
        ["report", *runs, "--out", str(base / "report")],
        ["compare", runs[2], runs[0], "--json", str(base / "compare_oracle_vs_lettered.json")],
        ["compare", runs[1], runs[0]],
        ["items", runs[2], runs[3], "--out", str(base / "items")],
    ):
        t0 = time.time()
        r = CliRunner().invoke(eval_cli, cmd)
        print(f"$ mvlsib-eval {cmd[0]} ... -> exit {r.exit_code} ({time.time() - t0:.0f} s)")
        print("\n".join(r.output.splitlines()[:14]), flush=True)
    listed = [json.loads(line) for line in (base / "items" / "always_wrong.jsonl").read_text("utf-8").splitlines()]
    found = {d["instance_id"] for d in listed}
    print(
        f"planted {planted}: listed as always wrong: {sorted(found)}; "
        f"languages per planted item: {[sum(d['instance_id'] == p for d in listed) for p in planted]}"
    )


if __name__ == "__main__":
    main()
