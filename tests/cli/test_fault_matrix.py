"""Every sub-command of both CLIs against unreadable and unwritable inputs and outputs, as root
without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (mode bits bind root then, as they bind a user).

The matrix is generated: each command's base invocation (which succeeds: the control case)
names its input and output paths by kind, and every fault of that kind is planted at every
path (an unreadable file or folder, a folder that cannot be entered, a dangling symbolic link, a
symbolic-link loop, a file where a folder belongs and the reverse, an output folder inside a
read-only folder or under a file, an existing read-only output folder, a name too long). Each
case, its own test id, must keep the error contract of ``support.cli_contract``: exit 2 with an
``Error:`` line that names the path, no traceback, the scene exactly as it was. The cases run in
one driver process per xdist worker (``support/fault_driver.py``, without the capabilities). The
commands are enumerated from the click groups, so a new command without a base invocation here
fails ``test_every_command_has_a_base_invocation``.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from PIL import Image
from support import DROP_CAPS, REPO, subprocess_env
from support.cli_contract import Outcome, problems
from support.fault_driver import RESULT

from mvlsib.cli import build_cli, eval_cli

HERE = Path(__file__).resolve().parent
LONG_NAME = "n" * 300
SECRET = "sk-fault-matrix-0123456789"

# An existing read-only output folder is replaced by a rename in its (writable) parent, and an
# output path that is a dangling symbolic link is created at the link's target: both may succeed.
MAY_SUCCEED = {"read-only-folder", "dangling-symlink"}
# Commands whose job is finding broken images: a broken pool image is a finding (exit 1), not an error.
CHECKS = {"images check"}

# Faults by the kind of path they are planted at.
IN_FILE = ("unreadable", "dangling-symlink", "symlink-loop", "folder-not-file")
IN_DIR = ("unreadable", "unsearchable", "dangling-symlink", "symlink-loop", "file-not-folder")
OUT_DIR = ("in-read-only-folder", "read-only-folder", "file-not-folder", "dangling-symlink", "under-a-file", "too-long")
OUT_FILE = ("in-read-only-folder", "folder-not-file", "under-a-file", "too-long")
OUT_EXISTING = ("read-only-folder",)
KINDS = {"in_file": IN_FILE, "in_dir": IN_DIR, "out_dir": OUT_DIR, "out_file": OUT_FILE, "out_existing": OUT_EXISTING}


def _commands(group: click.Group, prefix=()) -> list[str]:
    out = []
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            out += _commands(cmd, (*prefix, name))
        else:
            out.append(" ".join((*prefix, name)))
    return out


@dataclass
class Base:
    """One command's successful invocation; ``{slot}`` in args is replaced by that slot's path."""

    command: str
    cli: str
    args: list[str]
    slots: dict[str, tuple[str, Path]]  # slot -> (kind, path); a slot not in args is a file inside an input
    control: bool = True  # whether the unfaulted invocation must succeed here (no network needed)
    env: dict[str, str] = field(default_factory=dict)


def _bases(s: Path, url: str) -> list[Base]:
    rel, pool, mini, run = s / "release", s / "pool", s / "mini", s / "run"
    one = ["--limit", "1", "--languages", "eng_Latn", "--tasks", "s2t", "--k", "1", "--no-progress"]
    openai = ["--backend", "openai", "--base-url", url]
    sib_in = {"sib": ("in_dir", s / "sib"), "tsv": ("in_file", s / "sib/data/annotated/eng_Latn/test.tsv")}
    work_in = {
        "work": ("in_dir", s / "work"),
        "corpus": ("in_file", s / "work/corpus.parquet"),
        "instances": ("in_file", s / "work/instances.jsonl"),
    }
    pool_in = {"pool": ("in_dir", pool), "manifest": ("in_file", pool / "manifest.csv")}
    mini_in = {
        "mini": ("in_dir", mini),
        "mini_manifest": ("in_file", mini / "manifest.csv"),
        "mini_image": ("in_file", mini / "sports/sports_0.png"),
    }
    rel_in = {
        "rel": ("in_dir", rel),
        "rel_lang": ("in_file", rel / "data/eng_Latn/test.parquet"),
        "rel_images": ("in_file", rel / "data/images/test.parquet"),
    }
    run_in = {
        "run": ("in_dir", run),
        "preds": ("in_file", run / "predictions.jsonl"),
        "config": ("in_file", run / "config.json"),
    }
    out_dir = {"out": ("out_dir", None)}
    lang2 = ["--languages", "eng_Latn,arb_Arab"]
    bases = [
        Base("ingest", "build", ["ingest", "--sib", "{sib}", *lang2, "--workdir", "{out}", "--no-progress"], {**sib_in, **out_dir}),
        Base("sample", "build", ["sample", "--workdir", "{work}", "--pool", "{pool}", "--no-progress"],
             {"work": work_in["work"], "corpus": work_in["corpus"], **pool_in, "work_rw": ("out_existing", s / "work")},
             control=False),
        Base("validate", "build", ["validate", "--workdir", "{work}", "--pool", "{pool}", "--json", "{json}"],
             {**work_in, **pool_in, "json": ("out_file", None)}),
        Base("verify-images", "build",
             ["verify-images", "--model", "m", *openai, "--rotations", "1", "--pool", "{mini}", "--out", "{out}",
              "--allow-fail", "--no-progress"], {**mini_in, **out_dir}),
        Base("publish", "build", ["publish", "--workdir", "{work}", "--pool", "{pool}", "--out", "{out}"],
             {**work_in, **pool_in, **out_dir}),
        Base("publish", "build", ["publish", "--release", "{rel}", "--repo-id", "org/x", "--dry-run", "--timeout", "2"],
             {**rel_in, "manifest_json": ("in_file", rel / "manifest.json")}, control=False,
             env={"HF_ENDPOINT": "http://127.0.0.1:9"}),
        Base("build", "build", ["build", "--sib", "{sib}", *lang2, "--pool", "{pool}", "--out", "{out}", "--workdir", "{work2}"],
             {"sib": sib_in["sib"], "pool": pool_in["pool"], **out_dir, "work2": ("out_dir", None)}),
        Base("images add", "build",
             ["images", "add", "{img}", "--pool", "{out}", "--topic", "sports", "--license", "CC0-1.0", "--author", "A",
              "--source-url", "https://example.org/x"], {"img": ("in_file", s / "photo.png"), **out_dir}),
        Base("images check", "build",
             ["images", "check", "--pool", "{mini}", "--expected-per-topic", "1", "--json-out", "{json}"],
             {**mini_in, "json": ("out_file", None)}),
        # the gallery shows a broken image as a problem and credits never open images: only the manifest
        Base("images gallery", "build", ["images", "gallery", "--pool", "{mini}", "--expected-per-topic", "1", "--out", "{out}"],
             {"mini": mini_in["mini"], "mini_manifest": mini_in["mini_manifest"], **out_dir}),
        Base("images credits", "build", ["images", "credits", "--pool", "{mini}", "--out", "{md}"],
             {"mini": mini_in["mini"], "mini_manifest": mini_in["mini_manifest"], "md": ("out_file", None)}),
        Base("images import-release", "build",
             ["images", "import-release", "{up}", "--licences", "{upcsv}", "--pool", "{out}"],
             {"up": ("in_dir", s / "upstream"), "upcsv": ("in_file", s / "upstream/licences.csv"),
              "up_image": ("in_file", s / "upstream/data/images/sib200/sports_0.jpg"), **out_dir}),
        # lmms-eval's task folder points at the release (read when lmms-eval runs); mteb has no s2t at k=1
        Base("export", "build", ["export", "lmms-eval", "--release", "{rel}", "--out", "{out}", *one[2:-1]],
             {"rel": rel_in["rel"], **out_dir}),
        Base("export", "build", ["export", "mteb", "--release", "{rel}", "--out", "{out}", "--languages", "eng_Latn"],
             {**rel_in, **out_dir}),
        Base("export", "build", ["export", "vlmevalkit", "--release", "{rel}", "--out", "{out}", *one[2:-1]],
             {**rel_in, **out_dir}),
        Base("run", "eval", ["run", "--data", "{rel}", "--model", "m", *openai, "--out", "{out}", *one], {**rel_in, **out_dir}),
        # resuming a finished run: its folder must be writable and its predictions readable
        Base("run", "eval", ["run", "--data", str(rel), "--model", "m", *openai, "--out", "{resume}", *one],
             {"resume": ("out_existing", s / "resume"), "resume_preds": ("in_file", s / "resume/predictions.jsonl")},
             control=False),
        Base("batch prepare", "eval", ["batch", "prepare", "--data", "{rel}", "--model", "m", "--out", "{out}", *one[:-1]],
             {**rel_in, **out_dir}),
        # collecting needs a prepared folder and the provider's results: the inputs are faulted
        Base("batch collect", "eval", ["batch", "collect", "{prepared}", "{results}", "--out", str(s / "out/collected")],
             {"prepared": ("in_dir", s / "prepared"), "prepared_manifest": ("in_file", s / "prepared/manifest.json"),
              "results": ("in_file", s / "results.jsonl")}, control=False),
        Base("plan", "eval", ["plan", "--data", "{rel}", "--gpus", "2", *one[2:-1], "--script", "{script}"],
             {"rel": rel_in["rel"], "script": ("out_file", None)}),
        # the Hub is not reachable here: only the run folder it reads first is faulted
        Base("hub-results", "eval", ["hub-results", "{run}", "--dataset", "org/x", "--source-url", "https://example.org/run",
              "--out", str(s / "out/hub")],
             {**run_in}, control=False, env={"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "1"}),
        Base("merge", "eval", ["merge", "{shards}", "--out", "{out}"],
             {"shards": ("in_dir", s / "shards"), "shard": ("in_file", s / "shards/predictions.shard-0-of-2.jsonl"), **out_dir}),
        Base("report", "eval", ["report", "{run}", "--out", "{out}"], {**run_in, **out_dir}),
        Base("compare", "eval", ["compare", "{run}", "{run2}", "--json", "{json}"],
             {**run_in, "run2": ("in_dir", s / "run2"), "json": ("out_file", None)}),
        Base("items", "eval", ["items", "{run}", "--out", "{out}"], {**run_in, **out_dir}),
        Base("correlate", "eval",
             ["correlate", "{run}", "{run2}", "{run3}", "--scores", "{scores}", "--out", "{csv}"],
             {**run_in, "run2": ("in_dir", s / "run2"), "run3": ("in_dir", s / "run3"), "scores": ("in_file", s / "scores.csv"), "csv": ("out_file", None)}),
    ]  # fmt: skip
    return bases


def _cases(s: Path, url: str) -> list[dict]:
    """The generated matrix: per base, a control and every fault of every slot."""
    cases = []

    def fresh(kind: str, n: int, slot: str) -> Path:
        return s / "out" / (f"c{n}-{slot}" if kind == "out_dir" else f"c{n}-{slot}.out")

    for b in _bases(s, url):
        plans = [("none", None, None)] if b.control else []
        plans += [(fault, slot, kind) for slot, (kind, _) in b.slots.items() for fault in KINDS[kind]]
        for fault, faulted, kind in plans:
            n = len(cases)
            paths = {slot: (p if p is not None else fresh(k, n, slot)) for slot, (k, p) in b.slots.items()}
            plant = {"kind": "none", "path": str(s)}
            named = None
            if faulted is not None:
                target = paths[faulted]
                if fault == "in-read-only-folder":
                    target = s / f"ro{n}" / target.name
                    plant = {"kind": "read-only-folder", "path": str(target.parent)}
                    named = target.parent
                elif fault == "under-a-file":
                    target = s / "plain.txt" / target.name
                    named = s / "plain.txt"
                elif fault == "too-long":
                    target = target.parent / LONG_NAME
                    named = target.parent
                else:
                    plant = {"kind": fault, "path": str(target)}
                    named = target
                paths[faulted] = target
            args = [a.format(**{k: str(v) for k, v in paths.items()}) if "{" in a else a for a in b.args]
            cases.append(
                {
                    "command": b.command,
                    "cli": b.cli,
                    "args": args,
                    "fault": plant,
                    "label": f"{b.command} {faulted or '-'} {fault}",
                    "named": str(named) if named else None,
                    "may_succeed": bool(kind) and kind.startswith("out") and fault in MAY_SUCCEED,
                    "check_fails": b.command in CHECKS and kind == "in_file",
                    "scene": str(s),
                    "env": b.env,
                }
            )
    return cases


@pytest.fixture(scope="module")
def scene(tmp_path_factory, sib_dir, pool_dir, release_dir) -> Path:
    """Real inputs for every command: SIB-200 files, pools, a work folder, a release, runs, shards."""
    from support import write_workdir

    from mvlsib.workdir.pool_manifest import read_manifest, write_manifest

    s = tmp_path_factory.mktemp("faults")
    for lang in ("eng_Latn", "arb_Arab"):
        shutil.copytree(sib_dir / "data/annotated" / lang, s / "sib/data/annotated" / lang)
    shutil.copytree(pool_dir, s / "pool")
    write_workdir(s / "work", s / "sib", s / "pool")
    shutil.copytree(release_dir, s / "release")
    # a pool of one image per topic (the commands that look at every image stay fast)
    rows = read_manifest(s / "pool")
    mini = [next(r for r in rows if r.topic == t) for t in dict.fromkeys(r.topic for r in rows)]
    for r in mini:
        (s / "mini" / r.file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(s / "pool" / r.file, s / "mini" / r.file)
    write_manifest(s / "mini", mini)
    shutil.copyfile(s / "mini/sports/sports_0.png", s / "photo.png")
    # an upstream-style release of images (import-release reads data/images/sib200/<category>_<i>.jpg)
    img_dir = s / "upstream/data/images/sib200"
    img_dir.mkdir(parents=True)
    with open(s / "upstream/licences.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "license", "author", "source_url"])
        for r in mini:
            name = f"{r.topic.split('/')[0]}_0.jpg"
            Image.open(s / "mini" / r.file).convert("RGB").save(img_dir / name, quality=90)
            w.writerow([name, "CC0-1.0", "A", "https://example.org/" + name])
    (s / "plain.txt").write_text("a plain file\n")
    (s / "out").mkdir()
    for dirpath, _dirs, filenames in os.walk(s):  # copies keep the shared data's read-only modes
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(Path(dirpath) / name, 0o644)
    return s


@pytest.fixture(scope="module")
def server():
    from support.fakes.openai_compat import content_server

    with content_server() as srv:
        yield srv


@pytest.fixture(scope="module")
def runs(scene, server) -> Path:
    """Run folders made by the real evaluator against the fake server: three runs, a finished run to
    resume, and two shards to merge."""
    one = ["--languages", "eng_Latn", "--tasks", "s2t", "--k", "1", "--no-progress"]
    base = ["run", "--data", str(scene / "release"), "--backend", "openai", "--base-url", server.base_url, *one]
    todo = [("run", "m1", ["--limit", "2"]), ("run2", "m2", ["--limit", "2"]), ("run3", "m3", ["--limit", "2"])]
    todo += [("resume", "m", ["--limit", "1"])]  # exactly the resume case's options
    todo += [("shards", "m", ["--limit", "2", "--shard", "0/2"]), ("shards", "m", ["--limit", "2", "--shard", "1/2"])]
    for folder, model, extra in todo:
        res = CliRunner().invoke(eval_cli, [*base, "--model", model, "--out", str(scene / folder), *extra])
        assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        eval_cli,
        ["batch", "prepare", "--data", str(scene / "release"), "--model", "m", "--out", str(scene / "prepared"), *one[:-1]],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    (scene / "results.jsonl").write_text("")
    with open(scene / "scores.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["model", "benchmark", "score"])
        for n, name in enumerate(("run", "run2", "run3")):
            w.writerow([name, "other", 0.1 * (n + 1)])
    return scene


def test_every_command_has_a_base_invocation(tmp_path):
    bases = _bases(tmp_path, "http://127.0.0.1:9/v1")
    assert set(_commands(build_cli)) | set(_commands(eval_cli)) <= {b.command for b in bases}
    for b in bases:  # every placeholder is a slot, so every path the command is given gets faults
        placeholders = {a[1:-1] for a in b.args if a.startswith("{")}
        assert placeholders <= set(b.slots), (b.command, placeholders - set(b.slots))


def _named(case: dict, text: str) -> bool:
    """The message names the faulted path, or a folder holding it (a release, a run) inside the scene."""
    path, scene = Path(case["named"]), Path(case["scene"])
    candidates = [path, *[p for p in path.parents if p != scene and scene in p.parents]]
    return any(str(p) in text or os.path.realpath(p) in text for p in candidates)


def _problems(case: dict, res: dict) -> list[str]:
    out = res["output"]
    clean_success = res["exit_code"] == 0 and not res["escaped"]
    if case["fault"]["kind"] == "none" and case["named"] is None:
        return [] if clean_success else [f"control failed: exit {res['exit_code']}"]
    if case["may_succeed"] and clean_success:
        return []
    if case["check_fails"] and res["exit_code"] == 1 and not res["escaped"] and "sports_0" in out:
        return []  # a check names the broken image in its findings (exit 1 = the check failed)
    # what a command printed before it met the fault (a progress line) may stand beside the error line
    found = problems(
        Outcome(res["exit_code"], out, res["escaped"]), one_line=False, secret=SECRET, moved=res["changed"]
    )
    error = out[out.find("Error: ") :] if "Error: " in out else ""
    if error and not _named(case, error.splitlines()[0]):
        found.append("path not named on the message's first line")
    return found


# The cases are written against these stand-ins (test ids are made before the scene and the server).
SCENE = Path("/fault-scene")
URL = "http://openai-stand-in.invalid/v1"


def _params():
    seen: dict[str, int] = {}
    for case in _cases(SCENE, URL):
        seen[case["label"]] = seen.get(case["label"], 0) + 1
        yield pytest.param(case, id=f"{case['label']} {seen[case['label']]}")


@pytest.fixture(scope="module")
def driver(runs, server):
    """Runs one case in a driver process without the capabilities (one per environment: the Hub
    endpoint of publish --release differs), started on first use and kept for the module."""
    procs: dict[str, subprocess.Popen] = {}

    def run(case: dict) -> dict:
        case = json.loads(json.dumps(case).replace(str(SCENE), str(runs)).replace(URL, server.base_url))
        env = json.dumps(case["env"], sort_keys=True)
        if env not in procs:
            procs[env] = subprocess.Popen(
                [*DROP_CAPS, sys.executable, str(HERE.parent / "support" / "fault_driver.py")],
                env=subprocess_env(**{"OPENAI_API_KEY": SECRET, "HF_HUB_OFFLINE": "0", **case["env"]}),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
            )  # fmt: skip
        proc = procs[env]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(case) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            if line.startswith(RESULT):
                return {**json.loads(line[len(RESULT) :]), "case": case}
        raise AssertionError(f"the fault driver ended with {proc.wait()}")

    yield run
    for proc in procs.values():
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=60)


@pytest.mark.parametrize("case", list(_params()))
def test_a_path_fault_is_refused_cleanly(driver, case):
    res = driver(case)
    found = _problems(res["case"], res)
    assert not found, f"{case['label']}: {found} | {res['output'].strip()[-240:]}"
